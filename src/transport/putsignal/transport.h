// The putsignal transport's class: the sequencing of operations over its
// links (link.h). Its methods live by concern: transport.cpp (the
// Transport interface: numbering, routing, the waits), progress.cpp
// (queued writes, spills, polling, timeouts), large.cpp (messages larger
// than their region, and strays). layout.cpp sets the links up.
#pragma once

#include <unistd.h>

#include <deque>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "transport/putsignal/channel.h"
#include "transport/putsignal/layout.h"
#include "transport/putsignal/net_choice.h"
#include "transport/putsignal/tags.h"
#include "transport/registry.h"
#include "transport/slot_ring.h"

namespace stf::putsignal {

// A large message's receive still in flight, cancelled (its buffer may go
// before its message comes), then freed.
// Returns false where it had taken a message already.
bool cancel_receive(MPI_Request *r);

class PutSignalTransport final : public TransportDefaults {
 public:
  PutSignalTransport(const TransportContext &ctx, NetChoice net);
  ~PutSignalTransport() override;

  void prepare();
  int init();

  const char *name() const override { return "putsignal"; }
  std::string describe() const override;
  std::string describe_rank() const override { return layout_.describe(); }
  bool lends(Direction, Leg leg) const override { return leg == Leg::forward; }

  int post_recv(Channel &c, Direction d, Leg, std::size_t ub, void *const *recv) override;
  int lend_send(Channel &c, Direction d, Leg, std::size_t ub, void **send) override;
  int post_send(Channel &c, Direction d, Leg, std::size_t ub, const void *const *send) override;
  int wait_recv(Channel &c) override;
  int release_recv(Channel &c) override;
  int wait_send(Channel &c) override;
  int test_recv(Channel &c, bool *done) override;
  int test_send(Channel &c, bool *done) override;
  // express.cpp: where every peer of the direction is a ring the message
  // fits, every region it goes to is free and no other operation is in
  // flight. Its state is an ordinary operation's but for its receive
  // queue entries, which any other call (settle) adds first.
  int express_begin(Channel &c, Direction d, std::size_t ub, void **recv, void **send, bool *taken) override;
  int express_send(Channel &c) override;
  int express_wait(Channel &c, bool *taken, std::uint64_t *missed_at) override;
  int express_end(Channel &c) override;
  // Its large receives would take the channel's next messages, and its
  // queued messages are dropped. A begin that failed before any of its
  // messages left gives its regions' turns back and its operation number to
  // the next begin in its direction (on any slot), which pairs with the
  // peers' operation waiting for this one's messages. Where that cannot be (a message left:
  // PutChannel::spent; a large one came before its receive could be
  // cancelled; the end failed) the SF refuses new operations.
  void abandon(Channel &c, bool in_end) override;

 private:
  std::vector<std::unique_ptr<SendLink>> &senders_of(Direction d) { return layout_.senders(d); }
  std::vector<std::unique_ptr<ReceiveLink>> &receivers_of(Direction d) { return layout_.receivers(d); }
  // The operation's channel state, numbered on its first call.
  PutChannel &start(Channel &c, Direction d, std::size_t ub);
  // express.cpp
  // Every peer of direction d has a ring that a message of units of ub bytes fits.
  bool fits(Direction d, std::size_t ub);
  // The express operation, if one is in flight, made an ordinary one: its
  // receive queue entries added. Every other call of the transport's does
  // it first, so that what it finds is ordinary.
  void settle() {
    if (express_) make_ordinary();
  }
  void make_ordinary();
  void express_state(PutChannel &s);
  void size_peers(PutChannel &s, Direction d);
  // The tag of operation n's large messages in direction d. While a
  // receive of operation n is posted, the sender's operations up to n + 2S
  // - 1 may be sent (a large message waits, as its mark does, for its
  // region's credit; operation n + S's needs n's, which comes back after
  // that receive, if unmatched, is cancelled), so a receive posted for a
  // message that came in its region instead (the ranks' units differ)
  // takes no later operation's message.
  int large_tag(Direction d, std::uint64_t n) const {
    return large_tag_at(dir_index(d), static_cast<int>(n % large_tags()));
  }
  int large_tags() const { return 2 * slots_; }  // per direction
  int large_tag_at(int dir, int residue) const {
    return comm_.transport_tag(tag_large_first + dir * 2 * kMaxSlots + residue);
  }
  // Index of (receiving peer k, operation n) in strays_.
  std::size_t stray_index(int k, std::uint64_t n) const {
    return static_cast<std::size_t>(k) * large_tags() + static_cast<std::size_t>(n % large_tags());
  }

  // progress.cpp
  // A queued message into its region, and its signal, if the region is free.
  int write(PutChannel &c, int k);
  void note_size(PutChannel &c, int k);
  // Returns the credit of message k of c (none for a large one).
  int consume(PutChannel &c, int k) {
    ReceiveLink &p = *receivers_of(c.dir)[k];
    return p.large(c.unit_bytes) ? STF_SUCCESS : p.return_credit(c.seq);
  }
  // Writes queued messages that now may be; with drain, also moves arrived
  // messages of operations not waited for yet out of their regions. A
  // begin (in_begin) writes none through links whose write may wait for the
  // peer (SendLink::write_waits_for_peer): a later call writes them.
  int progress(bool drain, bool in_begin = false);
  int write_queued(bool in_begin);
  int take_arrived();
  // Entry e of peer k's queue of direction d is still what it was queued for.
  static bool still_queued(const RegionQueue::Entry &e, int d, int k) {
    return e.c && e.c->seq_set && e.c->seq == e.seq && dir_index(e.c->dir) == d && e.c->pending[k];
  }
  // Message k of c was taken (spilled, read in its region, or its mark):
  // its entry and the stale ones before it leave its region's queue, so
  // that the queue stays as short as the operations in flight.
  void taken(const PutChannel &c, int k) {
    const int d = dir_index(c.dir);
    RegionQueue &q = to_take(d).of(static_cast<std::size_t>(k), c.seq);
    while (!q.empty() && !still_awaited(q.front(), d, k)) q.pop();
  }
  static bool still_awaited(const RegionQueue::Entry &e, int d, int k) {
    const PutChannel *c = e.c;
    if (!c || !c->seq_set || c->seq != e.seq || dir_index(c->dir) != d || !c->receiving || c->waited) return false;
    return c->held[k] == Held::no && !c->marked[k];
  }
  int spill(PutChannel &c, int k);  // message k of c out of its region, credit returned
  int earlier_regions_seen(PutChannel &c, int k, bool *seen);
  int wait_until(const char *what, int rank, bool (PutSignalTransport::*ready)(PutChannel &, int), PutChannel &c,
                 int k);
  // Every wait: calls ready(&done) until it says done, moving queued and
  // arrived messages meanwhile; after -stf_putsignal_timeout,
  // STF_ERR_TIMEOUT waiting for what().
  template <class Ready, class What>
  int poll_until(Ready ready, What what) {
    Backoff backoff(spins_, timeout_);
    for (;;) {
      bool done = false;
      STF_CHECK(ready(&done));
      if (done) return STF_SUCCESS;
      STF_CHECK(progress(backoff.patient()));
      STF_CHECK(layout_.reap_signals());
      poke_mpi();
      backoff.pause();
      missed_at_ = ticks();  // the next look's time, read while waiting, where it costs nothing
      if (backoff.expired()) return timed_out(what());
    }
  }
  bool received(PutChannel &c, int k) { return c.held[k] != Held::no || receivers_of(c.dir)[k]->arrived(c.seq); }
  bool written(PutChannel &c, int k) { return !c.pending[k]; }
  // STF_ERR_TIMEOUT, remembered: a new operation is then refused.
  int timed_out(const std::string &what);
  int refuse_if_broken() const {
    if (broken_.empty()) return STF_SUCCESS;
    return set_error(STF_ERR_STATE, "putsignal transport: %s: destroy the SF", broken_.c_str());
  }
  // Lets MPI apply peers' puts and accumulates, or move the point-to-point
  // messages that replace them (-stf_putsignal_net p2p): it progresses
  // inside MPI calls.
  void poke_mpi() {
    if (!layout_.off_node()) return;
    int flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, large_tag(Direction::root_to_leaf, 0), comm_.comm, &flag, MPI_STATUS_IGNORE);
  }

  // large.cpp
  // Large message k of c, from `from`, by MPI; its request joins c.sends
  // (none where the send failed: nothing for the waits to look at).
  int send_large(PutChannel &c, int k, const void *from);
  // The large messages of c: whether they have all arrived, and waiting for them.
  int test_large(PutChannel &c, bool *done);
  int wait_large(PutChannel &c);
  // The region signal of large message k of c: a mark, or a smaller sender's message.
  int take_signal_of_large(PutChannel &c, int k);
  // o is a later operation in flight of c's direction whose large
  // messages carry c's tag: its receives may take c's.
  bool later_same_tag(const PutChannel &o, const PutChannel &c) const {
    return o.seq_set && o.receiving && o.dir == c.dir && o.seq > c.seq &&
           large_tag(o.dir, o.seq) == large_tag(c.dir, c.seq);
  }
  // A mark where message k of c was awaited in its region: its message comes by MPI.
  void stray(PutChannel &c, int k);
  int drain_strays();  // receives and drops them
  // Operation c's receive from its receiving peer k was cancelled before
  // its message came: the message may still come, and MPI gives it to the
  // first receive posted for that peer and tag. Later operations'
  // receives still waiting there are cancelled too, and those operations
  // fail; the SF refuses new ones (a later receive could take it).
  void cancelled(const PutChannel &c, int k);
  // Until those of direction d are being received; the usual case, none,
  // costs a load (every begin and end asks).
  int wait_strays(Direction d) { return strays_left_[dir_index(d)] == 0 ? STF_SUCCESS : wait_for_strays(d); }
  int wait_for_strays(Direction d);
  void drain_strays_now();       // all of them, blocking (destroy)
  bool strays_empty() const { return draining_.empty() && strays_left_[0] == 0 && strays_left_[1] == 0; }
  // Large message k of c still needs its region's signal.
  bool awaits_signal(const PutChannel &c, int k) {
    return receivers_of(c.dir)[k]->has_regions() && !c.marked[k] && c.held[k] == Held::no;
  }

  const Comm &comm_;
  const Plan &plan_;
  const int slots_, unit_capacity_;
  const double timeout_;
  const NetChoice net_;  // how messages reach other nodes, and why
  const long spins_;  // polls before yielding (Backoff)
  Layout layout_;
  std::uint64_t next_seq_[kDirections] = {0, 0};
  int in_flight_ = 0;  // channels whose operation is numbered (PutChannel::seq_set)
  PutChannel *express_ = nullptr;  // the express operation until its wait takes its messages
  std::uint64_t missed_at_ = 0;  // when poll_until's last pause ended (express_wait's *missed_at)
  // The last unit sizes fits() found fitting and not fitting (0: none yet).
  std::size_t fit_unit_[kDirections] = {0, 0}, unfit_unit_[kDirections] = {0, 0};
  std::vector<PutChannel *> channels_;  // every channel of this transport (PutChannel::listed)
  // Per direction, the queues (region_queues.h) of messages to write, then
  // of messages awaited (PutChannel::queues).
  RegionQueues queues_[kQueues];
  static_assert(kQueues == 2 * kDirections);
  RegionQueues &to_write(int d) { return queues_[d]; }
  RegionQueues &to_take(int d) { return queues_[kDirections + d]; }
  int pending_ = 0;                   // queued messages not written yet, in all of them
  // Why new operations are refused (a timeout, or a message that a later
  // operation's receive may take), if they are.
  std::string broken_;
  // Large messages of failed operations, received by no receive: per
  // direction, the count still to drain per peer and tag (stray_index), and
  // their sum (every progress looks at it); those being received.
  std::vector<int> strays_[kDirections];
  int strays_left_[kDirections] = {0, 0};
  struct Drained {
    std::vector<char> sink;
    MPI_Request req;
  };
  std::deque<Drained> draining_;
};

}  // namespace stf::putsignal
