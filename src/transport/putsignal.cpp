// The putsignal transport: one-sided put-with-signal (slot_ring.h), with no
// MPI call on the way of a message between ranks of one node.
//
// Choices, and why:
// - Peers on my node: each rank allocates, in one MPI-3 shared-memory
//   window on the node's communicator, a ring of S regions per node peer
//   and direction that sends to it. Senders pack straight into the peer's
//   region (the transport lends it to the ops layer: Transport::lends), so
//   a message is written once and read once, and is signalled with a
//   release store; the receiver polls with acquire loads and, once it has
//   unpacked, returns the credit. Steady state: no MPI call, no allocation.
// - Peers on other nodes: the same protocol over MPI RMA: a window per SF
//   (MPI_Win_allocate, passive target with MPI_Win_lock_all for the SF's
//   life) holding the rings of my off-node senders and my credit words for
//   my off-node receivers. The sender packs into an outbox, puts the
//   message, flushes (so the data is there before the signal), then writes
//   the signal with MPI_Raccumulate(MPI_REPLACE) (element-wise atomic),
//   flushed locally at once; the receiver polls its own window memory
//   after MPI_Win_sync and returns credits the same way.
// - -stf_putsignal_net p2p sends messages to other nodes by MPI
//   point-to-point instead; it is the default when built with MPICH: with
//   MPICH 4.0.2 over UCX (4 ranks on 2 cores, every pair on other nodes) a
//   rank's MPI_Win_flush, or its accumulates' completion, stalled for tens
//   of seconds, seen again and again until the test's 280 s limit, while
//   the target polled in MPI_Iprobe and MPI_Test (also with MPICH's waits
//   made to yield the core: no rank was starved). Other MPICH versions and
//   derivatives were not tried; rma turns the window back on. Node peers
//   go through the heap either way.
// - Regions are sized at set-up for units of -stf_putsignal_unit_bytes (the
//   unit is known only per operation); a message larger than its region
//   goes by MPI point-to-point. Both ends decide alike (they know the
//   message's units and the unit size). A signal carries a tag of its
//   message's size (slot_ring.h), so a receiver expecting another size
//   (the ranks' units differ) fails the operation's end with STF_ERR_ARG.
//   A large message's region is signalled too, with a mark instead of the
//   message (slot_ring.h), so every message has its signal where it is
//   awaited. A receiver waiting for a large message takes the mark (and
//   returns its credit), or fails on a smaller sender's message found
//   there. One waiting in a region that finds a mark fails, and receives
//   the message MPI brings (its sender's end waits for that); in case a
//   receive of another operation took it instead, those operations fail
//   too, and the SF refuses new bcasts and reduces, as after a timeout
//   (-stf_debug 1 catches the units beforehand). Large messages are tagged
//   by operation number modulo 2S and wait for their region's credit, so
//   a receive takes no other operation's message while fewer than 2S
//   operations are in flight (large_tag).
// - Region n % S carries the n-th operation of its direction: every rank
//   begins the operations of an SF in the same order, so sender and
//   receiver agree without a message. A sender that finds its region still
//   in use (more than S operations in flight) never waits in begin: it
//   packs into its outbox and writes the region later (or sends a
//   large message and writes its mark), from any later call into the
//   transport. A rank that waits (in an end) also moves messages that
//   arrived for operations it has not ended yet out of their regions
//   (spill buffers) and returns their credits, so ends may come in any
//   order with any number of operations in flight.
// - Waiting polls: where the node has more ranks than cores it spins 200
//   polls, then yields on every poll (the rank it waits for may need this
//   core); else it spins 100,000 polls first, as MPI libraries do when each
//   rank has a core. -stf_putsignal_timeout turns a peer that never comes
//   into STF_ERR_TIMEOUT. After a timeout the SF refuses new bcasts and
//   reduces (STF_ERR_STATE): the late peer's message still has to come
//   into the operation's region, and the numbering of later operations
//   would pair them with the wrong ones; only its destroy is left. The
//   same after units of different sizes where a message may have been
//   taken by another operation's receive (above).
// - Fetch-and-op combines contributions in its receive buffers and sends the
//   old values back from them, from end: basic (the registry row says so).
// - Set-up exchanges where each ring lies, one MPI_Aint per peer pair and
//   direction; memory per rank is O(peers x S x region), printed by the view.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "core/error.h"
#include "transport/large_count.h"
#include "transport/mpi_requests.h"
#include "transport/registry.h"
#include "transport/size_mismatch.h"
#include "transport/slot_ring.h"

namespace stf {

const OptionSpec putsignal_slots_option = {
    "stf_putsignal_slots", "STF_PUTSIGNAL_SLOTS", "1|2|4|8|16|32|64",
    "putsignal transport: regions per peer and direction, i.e. operations in flight before a sender queues "
    "its message (default 4)",
    "4", nullptr, 1, 64};
const OptionSpec putsignal_unit_bytes_option = {
    "stf_putsignal_unit_bytes", "STF_PUTSIGNAL_UNIT_BYTES", "1..65536",
    "putsignal transport: bytes per unit a region holds; larger messages go by MPI point-to-point (default 16)",
    "16", nullptr, 1, 65536};
#if defined(MPICH_VERSION)
#define STF_PUTSIGNAL_NET_DEFAULT "p2p"
#else
#define STF_PUTSIGNAL_NET_DEFAULT "rma"
#endif
const OptionSpec putsignal_net_option = {
    "stf_putsignal_net", "STF_PUTSIGNAL_NET", "rma|p2p",
    "putsignal transport: how messages reach other nodes: rma (an MPI RMA window, a signal per message) or p2p "
    "(MPI point-to-point); default " STF_PUTSIGNAL_NET_DEFAULT " (p2p where built with MPICH, whose 4.0.2 stalled "
    "in MPI RMA between hosts)",
    STF_PUTSIGNAL_NET_DEFAULT, nullptr};
#undef STF_PUTSIGNAL_NET_DEFAULT

bool putsignal_rma_between_nodes(const Options &o) { return o.text(putsignal_net_option) == "rma"; }

const OptionSpec putsignal_timeout_option = {
    "stf_putsignal_timeout", "STF_PUTSIGNAL_TIMEOUT", "0..86400",
    "putsignal transport: seconds to wait for a peer before STF_ERR_TIMEOUT; 0 waits for ever (default 0)", "0",
    nullptr, 0, 86400};

namespace {

constexpr int kDirections = 2;
int dir_index(Direction d) { return d == Direction::root_to_leaf ? 0 : 1; }

// This transport's tags in the SF's block (core/comm.h).
constexpr int tag_heap_ring[kDirections] = {0, 1};    // set-up: where my ring lies in the heap
constexpr int tag_rma_ring[kDirections] = {2, 3};     // set-up: where my ring lies in the window
constexpr int tag_rma_credit[kDirections] = {4, 5};   // set-up: where my credits lie in the window
// Messages larger than their region: per direction, a tag per operation
// number modulo twice the slots (large_tag).
constexpr int tag_large_first = 6;
constexpr int kMaxSlots = 64;  // -stf_putsignal_slots
static_assert(tag_large_first + kDirections * 2 * kMaxSlots <= kTransportTags, "the SF's tag block is too small");

enum class Via : unsigned char { heap, rma };
// Where a received message is: not taken yet, moved to the spill buffer
// (its credit returned), or taken in its region by wait_recv (credit
// returned by release_recv).
enum class Held : unsigned char { no, spilled, in_region };
// How one message of an operation goes.
enum class Route : unsigned char { region, queued, large };

// One peer of one direction, as sender or receiver.
struct Peer {
  int rank = 0;
  stf_int units = 0;
  Via via = Via::heap;
  std::size_t capacity = 0;  // bytes a region holds (0: no ring, every message large)
  SlotRing ring;             // heap: the ring in the receiver's segment; rma receive side: mine, local
  MPI_Aint ring_disp = 0;    // rma send side: the ring's place in the receiver's window
  MPI_Aint credit_disp = 0;  // rma receive side: my credits' place in the sender's window
  std::uint64_t *credit_words = nullptr;  // rma send side: the credits the receiver writes, in my window
  std::vector<std::uint64_t> last_in_region;  // send side: per region, its last message's sequence number + 1
};

struct PutChannel : ChannelState {
  // The transport's list of its channels (progress looks at them all); the
  // ops layer frees channels before their transport.
  std::vector<PutChannel *> *listed = nullptr;
  int *pending_total = nullptr;  // the transport's count of queued messages, which includes this one's
  ~PutChannel() override {
    if (listed) listed->erase(std::find(listed->begin(), listed->end(), this));
    forget_pending();
    abandon_active_sends();
  }
  // Queued messages that will not be written (the channel goes, or takes a
  // new operation after this one failed) leave the transport's count, so
  // that progress stops looking for them.
  void forget_pending() {
    if (pending_total) *pending_total -= npending;
    npending = 0;
  }
  // Large sends still in flight (only after an end timed out waiting for
  // their receipt): MPI may read their buffer whenever the receiver comes,
  // so the requests are freed and the buffer is kept until the process
  // exits.
  void abandon_active_sends() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    bool active = false;
    for (MPI_Request &r : sends) {
      int done = 1;
      if (r != MPI_REQUEST_NULL) MPI_Test(&r, &done, MPI_STATUS_IGNORE);
      if (!done) {
        MPI_Request_free(&r);
        active = true;
      }
    }
    if (!active) return;
    static std::mutex lock;
    static auto *kept = new std::vector<std::vector<char>>;  // never destroyed: also safe in exit's destructors
    std::lock_guard<std::mutex> guard(lock);
    try {
      kept->push_back(std::move(outbox));
    } catch (const std::bad_alloc &) {  // no exception leaves a destructor; the buffer goes
    }
  }
  std::uint64_t seq = 0;
  bool seq_set = false;  // from the first call of an operation until wait_send
  std::size_t unit_bytes = 0;
  Direction dir = Direction::root_to_leaf;
  // Send side, per sending peer.
  std::vector<Route> route;
  std::vector<std::uint64_t> previous;  // the previous message of each one's region (SlotRing::writable)
  bool lent = false;  // lend_send took the regions' turns, post_send has not finished
  std::vector<char> pending;  // queued, not written yet
  int npending = 0;
  std::vector<char> outbox;  // queued and large messages, at the plan's offsets
  std::vector<MPI_Request> sends;
  // Receive side, per receiving peer.
  bool receiving = false;  // posted, not released
  bool waited = false;     // wait_recv returned: the ops layer reads the data
  std::vector<Held> held;   // per receiving peer
  std::vector<char> marked;  // per receiving peer of a large message: its region's mark taken
  std::vector<char> spill;  // spilled and large messages, at the plan's offsets
  void **data = nullptr;      // where wait_recv says where each message is (the ops layer's array)
  int nreceive = 0;
  // Of large messages (MPI_REQUEST_NULL for the others, and once done):
  // persistent, started once and freed once complete, because MPICH 4.0.2
  // raises the error of a completed nonpersistent request (a truncated
  // message) on MPI_COMM_WORLD's handler, fatal by default, and a
  // persistent one's on its communicator's, which returns.
  std::vector<MPI_Request> recvs;
  std::vector<ByteCount> recv_types;  // the derived types recvs need, if any
  int nrecvs = 0;
  SizeMismatch mismatch;  // a sender whose message's size tag is not the expected size
};

// A large message's receive still in flight, cancelled (its buffer may go
// before its message comes), then freed.
// Returns false where it had taken a message already.
bool cancel_receive(MPI_Request *r) {
  if (*r == MPI_REQUEST_NULL) return true;
  MPI_Cancel(r);
  MPI_Status status;
  MPI_Wait(r, &status);
  int cancelled = 0;
  MPI_Test_cancelled(&status, &cancelled);
  MPI_Request_free(r);
  return cancelled != 0;
}

class PutSignalTransport final : public TransportDefaults {
 public:
  explicit PutSignalTransport(const TransportContext &ctx)
      : comm_(ctx.comm), topo_(ctx.topology), plan_(ctx.plan),
        slots_(static_cast<int>(ctx.opts.number(putsignal_slots_option))),
        unit_capacity_(static_cast<int>(ctx.opts.number(putsignal_unit_bytes_option))),
        timeout_(static_cast<double>(ctx.opts.number(putsignal_timeout_option))),
        rma_between_nodes_(putsignal_rma_between_nodes(ctx.opts)),
        spins_(ctx.topology.local_size > sysconf(_SC_NPROCESSORS_ONLN) ? 200 : 100000) {}

  ~PutSignalTransport() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    for (Signal &s : signals_) MPI_Wait(&s.req, MPI_STATUS_IGNORE);
    drain_strays_now();
    for (Drained &x : draining_) MPI_Wait(&x.req, MPI_STATUS_IGNORE);  // matched already, also when broken
    for (MPI_Win *w : {&heap_win_, &rma_win_})
      if (*w != MPI_WIN_NULL) {
        MPI_Win_unlock_all(*w);
        MPI_Win_free(w);
      }
  }

  void prepare();
  int init();

  const char *name() const override { return "putsignal"; }
  std::string describe() const override;
  std::string describe_rank() const override;
  bool lends(Direction, Leg leg) const override { return leg == Leg::forward; }

  int post_recv(Channel &c, Direction d, Leg, std::size_t ub, void *const *recv) override;
  int lend_send(Channel &c, Direction d, Leg, std::size_t ub, void **send) override;
  int post_send(Channel &c, Direction d, Leg, std::size_t ub, const void *const *send) override;
  int wait_recv(Channel &c) override;
  int release_recv(Channel &c) override;
  int wait_send(Channel &c) override;
  int test_recv(Channel &c, bool *done) override;
  int test_send(Channel &c, bool *done) override;
  // Its large receives would take the channel's next messages. A begin that
  // failed after lend_send, before post_send finished, gives its regions'
  // turns back: the slot's next begin, with the same operation number, pairs
  // with the peers' operation, which waits for this one's messages.
  void abandon(Channel &c) override {
    if (!c.state) return;
    PutChannel &s = c.get<PutChannel>();
    for (MPI_Request &r : s.recvs) cancel_receive(&r);
    if (!s.lent) return;
    std::vector<Peer> &peers = senders_of(s.dir);
    for (std::size_t k = 0; k < peers.size(); k++)
      if (peers[k].capacity > 0) peers[k].last_in_region[s.seq & (slots_ - 1)] = s.previous[k];
    s.lent = false;
  }

 private:
  std::vector<Peer> &senders_of(Direction d) { return send_peers_[dir_index(d)]; }
  std::vector<Peer> &receivers_of(Direction d) { return recv_peers_[dir_index(d)]; }
  std::size_t capacity(stf_int units) const {
    return std::max<std::size_t>(SlotRing::round_up(static_cast<std::size_t>(units) * unit_capacity_), kLine);
  }
  // The operation's channel state, numbered on its first call.
  PutChannel &start(Channel &c, Direction d, std::size_t ub);
  int lay_out_heap();
  int lay_out_rma();
  // Set-up: send values[k] to to[k] and receive got[k] from from[k], for the
  // peers that go via.
  int exchange(int tag, Via via, const std::vector<Peer> &to, const std::vector<MPI_Aint> &values,
               const std::vector<Peer> &from, std::vector<MPI_Aint> *got);
  bool large(const Peer &p, std::size_t ub) const { return p.units * ub > p.capacity; }
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
  bool rma_writable(const Peer &p, std::uint64_t n, std::uint64_t previous);
  // A queued message into its region, and its signal, if the region is free.
  int write(PutChannel &c, int k);
  int put_rma(const Peer &p, std::uint64_t n, const void *data, std::size_t bytes);
  int signal_rma(const Peer &p, std::uint64_t n, std::size_t bytes, bool mark);
  int accumulate(int rank, MPI_Aint disp, std::uint64_t value);
  int reap_signals();  // frees the signals MPI has completed, oldest first
  bool arrived(const Peer &p, std::uint64_t n);
  void note_size(PutChannel &c, int k);
  int consume(PutChannel &c, int k);  // return the credit of message k
  int return_credit(const Peer &p, std::uint64_t n);
  // The large messages of c: whether they have all arrived, and waiting for them.
  int test_large(PutChannel &c, bool *done);
  int wait_large(PutChannel &c);
  // Writes queued messages that now may be; with drain, also moves arrived
  // messages of operations not waited for yet out of their regions.
  int progress(bool drain);
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
      STF_CHECK(reap_signals());
      poke_mpi();
      backoff.pause();
      if (backoff.expired()) return timed_out(what());
    }
  }
  bool received(PutChannel &c, int k) { return c.held[k] != Held::no || arrived(receivers_of(c.dir)[k], c.seq); }
  bool written(PutChannel &c, int k) { return !c.pending[k]; }
  // STF_ERR_TIMEOUT, remembered: a new operation is then refused.
  int timed_out(const std::string &what);
  int refuse_if_broken() const;
  // The region signal of large message k of c: a mark, or a smaller sender's message.
  int take_signal_of_large(PutChannel &c, int k);
  // A mark where message k of c was awaited in its region: its message comes by MPI.
  void stray(PutChannel &c, int k);
  int drain_strays();  // receives and drops them
  int wait_strays(Direction d);  // until those of direction d are being received
  void drain_strays_now();       // all of them, blocking (destroy)
  int spill(PutChannel &c, int k);  // message k of c out of its region, credit returned
  int earlier_regions_seen(PutChannel &c, int k, bool *seen);
  bool strays_empty() const { return draining_.empty() && strays_left_[0] == 0 && strays_left_[1] == 0; }
  // Large message k of c still needs its region's signal.
  bool awaits_signal(const PutChannel &c, int k) {
    return receivers_of(c.dir)[k].capacity > 0 && !c.marked[k] && c.held[k] == Held::no;
  }
  // Lets MPI apply peers' puts and accumulates, or move the point-to-point
  // messages that replace them (-stf_putsignal_net p2p): it progresses
  // inside MPI calls.
  void poke_mpi() {
    if (rma_links_ == 0) return;
    int flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, large_tag(Direction::root_to_leaf, 0), comm_.comm, &flag, MPI_STATUS_IGNORE);
  }

  const Comm &comm_;
  const Topology &topo_;
  const Plan &plan_;
  const int slots_, unit_capacity_;
  const double timeout_;
  const bool rma_between_nodes_;  // -stf_putsignal_net rma
  const long spins_;  // polls before yielding (Backoff)
  std::vector<Peer> send_peers_[kDirections], recv_peers_[kDirections];
  // Set-up: where my rings and credits lie in my memory (-1: not there), where
  // my peers' lie in theirs, and the exchanges' requests.
  struct SetUpArrays {
    std::vector<MPI_Aint> heap_rings[kDirections], peers_heap_rings[kDirections];
    std::vector<MPI_Aint> rma_rings[kDirections], credits[kDirections];
    std::vector<MPI_Aint> peers_rma_rings[kDirections], peers_credits[kDirections];
    std::vector<MPI_Request> requests;
  } at_;
  std::uint64_t next_seq_[kDirections] = {0, 0};
  MPI_Win heap_win_ = MPI_WIN_NULL, rma_win_ = MPI_WIN_NULL;
  std::size_t heap_bytes_ = 0, rma_bytes_ = 0;
  int heap_links_ = 0, rma_links_ = 0;  // (peer, direction, send or receive) through each
  std::vector<PutChannel *> channels_;  // every channel of this transport (PutChannel::listed)
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
  // Signals and credits on their way (MPI_Raccumulate), their values kept
  // here until MPI completes them.
  struct Signal {
    std::uint64_t value;
    MPI_Request req;
  };
  std::deque<Signal> signals_;
};

// Local: the peers, where their rings and credits lie, and the arrays the
// set-up's exchanges fill, all before init's collectives (prepare_agreed).
void PutSignalTransport::prepare() {
  for (Direction d : {Direction::root_to_leaf, Direction::leaf_to_root}) {
    for (auto [m, peers] : {std::pair{&senders(plan_, d), &senders_of(d)}, {&receivers(plan_, d), &receivers_of(d)}})
      for (int k = 0; k < m->count(); k++) {
        Peer p;
        p.rank = m->ranks[k];
        p.units = m->size(k);
        p.via = topo_.same_node(p.rank) ? Via::heap : Via::rma;
        p.capacity = p.via == Via::rma && !rma_between_nodes_ ? 0 : capacity(p.units);
        p.last_in_region.assign(slots_, 0);
        heap_links_ += p.via == Via::heap;
        rma_links_ += p.via == Via::rma;
        peers->push_back(p);
      }
  }
  std::size_t most = 0;  // requests of the largest exchange
  for (int d = 0; d < kDirections; d++) {
    strays_[d].assign(recv_peers_[d].size() * large_tags(), 0);
    most = std::max(most, recv_peers_[d].size() + send_peers_[d].size());
    for (const Peer &p : recv_peers_[d]) {
      at_.heap_rings[d].push_back(p.via == Via::heap ? static_cast<MPI_Aint>(heap_bytes_) : -1);
      if (p.via == Via::heap) heap_bytes_ += SlotRing::bytes(slots_, p.capacity);
    }
    at_.peers_heap_rings[d].assign(send_peers_[d].size(), -1);
  }
  if (rma_between_nodes_) {
    for (int d = 0; d < kDirections; d++)
      for (const Peer &p : recv_peers_[d]) {
        at_.rma_rings[d].push_back(p.via == Via::rma ? static_cast<MPI_Aint>(rma_bytes_) : -1);
        if (p.via == Via::rma) rma_bytes_ += SlotRing::bytes(slots_, p.capacity);
      }
    for (int d = 0; d < kDirections; d++) {
      for (const Peer &p : send_peers_[d]) {
        at_.credits[d].push_back(p.via == Via::rma ? static_cast<MPI_Aint>(rma_bytes_) : -1);
        if (p.via == Via::rma) rma_bytes_ += slots_ * kLine;
      }
      at_.peers_rma_rings[d].assign(send_peers_[d].size(), -1);
      at_.peers_credits[d].assign(recv_peers_[d].size(), -1);
    }
  }
  at_.requests.reserve(most);
}

int PutSignalTransport::init() {
  STF_CHECK(lay_out_heap());
  STF_CHECK(lay_out_rma());
  at_ = SetUpArrays();  // no longer needed
  return STF_SUCCESS;
}

// Window memory need not be aligned beyond 8 bytes (Open MPI's shared
// segments are not), but units may need 16 and signal words their own
// line: offsets (-1: none) move to the first line boundary after base. The
// boundary is the same on every process that maps the memory (mappings are
// page aligned).
void shift_to_line(const char *base, std::vector<MPI_Aint> *offsets) {
  const auto pad = static_cast<MPI_Aint>((kLine - reinterpret_cast<std::uintptr_t>(base) % kLine) % kLine);
  for (MPI_Aint &o : *offsets)
    if (o >= 0) o += pad;
}

// My segment of the node's shared window holds a ring per node peer that
// sends to me; senders learn where theirs is, and map the segment.
int PutSignalTransport::lay_out_heap() {
  if (topo_.local_size == 1) return STF_SUCCESS;  // no node peers anywhere on my node
  std::vector<MPI_Aint> *mine = at_.heap_rings, *theirs = at_.peers_heap_rings;
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  char *base = nullptr;
  const int rc =
      MPI_Win_allocate_shared(static_cast<MPI_Aint>(heap_bytes_ + kLine), 1, info, topo_.node_comm, &base, &heap_win_);
  MPI_Info_free(&info);
  if (rc != MPI_SUCCESS) return mpi_error(rc, "MPI_Win_allocate_shared");
  STF_MPI(MPI_Win_set_errhandler(heap_win_, MPI_ERRORS_RETURN));
  STF_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, heap_win_));
  std::memset(base, 0, heap_bytes_ + kLine);
  for (int d = 0; d < kDirections; d++) shift_to_line(base, &mine[d]);
  STF_MPI(MPI_Win_sync(heap_win_));
  for (int d = 0; d < kDirections; d++)
    for (std::size_t k = 0; k < recv_peers_[d].size(); k++)
      if (recv_peers_[d][k].via == Via::heap)
        recv_peers_[d][k].ring = SlotRing::at(base + mine[d][k], slots_, recv_peers_[d][k].capacity);
  for (int d = 0; d < kDirections; d++)
    STF_CHECK(exchange(comm_.transport_tag(tag_heap_ring[d]), Via::heap, recv_peers_[d], mine[d], send_peers_[d],
                       &theirs[d]));
  for (int d = 0; d < kDirections; d++)
    for (std::size_t k = 0; k < send_peers_[d].size(); k++) {
      Peer &p = send_peers_[d][k];
      if (p.via != Via::heap) continue;
      MPI_Aint size = 0;
      int unit = 1;
      char *peer_base = nullptr;
      STF_MPI(MPI_Win_shared_query(heap_win_, topo_.local_rank_of[p.rank], &size, &unit, &peer_base));
      p.ring = SlotRing::at(peer_base + theirs[d][k], slots_, p.capacity);
    }
  return STF_SUCCESS;
}

int PutSignalTransport::exchange(int tag, Via via, const std::vector<Peer> &to, const std::vector<MPI_Aint> &values,
                                 const std::vector<Peer> &from, std::vector<MPI_Aint> *got) {
  got->assign(from.size(), -1);  // sized by prepare: no allocation between collectives
  std::vector<MPI_Request> &reqs = at_.requests;  // reserved by prepare
  reqs.clear();
  for (std::size_t k = 0; k < from.size(); k++)
    if (from[k].via == via) {
      reqs.emplace_back();
      STF_MPI(MPI_Irecv(&(*got)[k], 1, MPI_AINT, from[k].rank, tag, comm_.comm, &reqs.back()));
    }
  for (std::size_t k = 0; k < to.size(); k++)
    if (to[k].via == via) {
      reqs.emplace_back();
      STF_MPI(MPI_Isend(&values[k], 1, MPI_AINT, to[k].rank, tag, comm_.comm, &reqs.back()));
    }
  if (!reqs.empty()) STF_MPI(MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE));
  return STF_SUCCESS;
}

// My window holds a ring per off-node peer that sends to me, then, per
// off-node peer I send to, S credit words it writes.
int PutSignalTransport::lay_out_rma() {
  if (topo_.nnodes == 1 || !rma_between_nodes_) return STF_SUCCESS;  // no off-node rings anywhere
  std::vector<MPI_Aint> *rings = at_.rma_rings, *credits = at_.credits;
  char *base = nullptr;
  STF_MPI(MPI_Win_allocate(static_cast<MPI_Aint>(rma_bytes_ + kLine), 1, MPI_INFO_NULL, comm_.comm, &base, &rma_win_));
  STF_MPI(MPI_Win_set_errhandler(rma_win_, MPI_ERRORS_RETURN));
  STF_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, rma_win_));
  std::memset(base, 0, rma_bytes_ + kLine);
  for (int d = 0; d < kDirections; d++) {
    shift_to_line(base, &rings[d]);
    shift_to_line(base, &credits[d]);
  }
  STF_MPI(MPI_Win_sync(rma_win_));
  for (int d = 0; d < kDirections; d++) {
    for (std::size_t k = 0; k < recv_peers_[d].size(); k++)
      if (recv_peers_[d][k].via == Via::rma)
        recv_peers_[d][k].ring = SlotRing::at(base + rings[d][k], slots_, recv_peers_[d][k].capacity);
    for (std::size_t k = 0; k < send_peers_[d].size(); k++)
      if (send_peers_[d][k].via == Via::rma)
        send_peers_[d][k].credit_words = reinterpret_cast<std::uint64_t *>(base + credits[d][k]);
    std::vector<MPI_Aint> &ring_at = at_.peers_rma_rings[d], &credit_at = at_.peers_credits[d];
    STF_CHECK(exchange(comm_.transport_tag(tag_rma_ring[d]), Via::rma, recv_peers_[d], rings[d], send_peers_[d],
                       &ring_at));
    STF_CHECK(exchange(comm_.transport_tag(tag_rma_credit[d]), Via::rma, send_peers_[d], credits[d],
                       recv_peers_[d], &credit_at));
    for (std::size_t k = 0; k < send_peers_[d].size(); k++) send_peers_[d][k].ring_disp = ring_at[k];
    for (std::size_t k = 0; k < recv_peers_[d].size(); k++) recv_peers_[d][k].credit_disp = credit_at[k];
  }
  return STF_SUCCESS;
}

std::string PutSignalTransport::describe() const {
  return "putsignal (one-sided put with signal, " + std::to_string(slots_) +
         " regions per peer and direction: node peers through a shared-memory heap, other nodes' through " +
         (rma_between_nodes_ ? "an MPI RMA window" : "MPI point-to-point") +
         "; messages of more than " + std::to_string(unit_capacity_) +
         " B per unit: MPI point-to-point; fetch-and-op: basic fallback)";
}

std::string PutSignalTransport::describe_rank() const {
  return "putsignal: " + std::to_string(heap_links_) + " peer link(s) in the node's heap (" +
         std::to_string((heap_bytes_ + 1023) / 1024) + " KiB of rings here), " + std::to_string(rma_links_) +
         (rma_between_nodes_ ? " through the RMA window (" + std::to_string((rma_bytes_ + 1023) / 1024) + " KiB)"
                             : " to other nodes by MPI point-to-point");
}

int PutSignalTransport::timed_out(const std::string &what) {
  broken_ = "an earlier operation of this SF timed out waiting for " + what +
            "; its peers' operations no longer pair with this rank's";
  return set_error(STF_ERR_TIMEOUT, "putsignal transport: waited more than %g s for %s", timeout_, what.c_str());
}

int PutSignalTransport::refuse_if_broken() const {
  if (broken_.empty()) return STF_SUCCESS;
  return set_error(STF_ERR_STATE, "putsignal transport: %s: destroy the SF", broken_.c_str());
}

PutChannel &PutSignalTransport::start(Channel &c, Direction d, std::size_t ub) {
  PutChannel &s = c.get<PutChannel>();
  if (!s.listed) {
    channels_.push_back(&s);
    s.listed = &channels_;
    s.pending_total = &pending_;
  }
  if (!s.seq_set) {
    s.seq = next_seq_[dir_index(d)]++;
    s.seq_set = true;
    s.dir = d;
    s.unit_bytes = ub;
    s.mismatch.clear();  // an operation that failed before its wait_send leaves nothing behind
  }
  return s;
}

int PutSignalTransport::post_recv(Channel &c, Direction d, Leg, std::size_t ub, void *const *recv) {
  STF_CHECK(refuse_if_broken());
  STF_CHECK(wait_strays(d));  // before a receive of this operation could take one
  PutChannel &s = start(c, d, ub);
  const Messages &m = receivers(plan_, d);
  const std::vector<Peer> &peers = receivers_of(d);
  // Sized (each on its own: a shortage may stop between them) before the
  // channel counts as receiving, which progress reads them by.
  s.held.resize(peers.size());
  s.marked.resize(peers.size());
  s.recvs.resize(peers.size(), MPI_REQUEST_NULL);
  s.recv_types.resize(peers.size());
  if (s.spill.size() < m.idx.size() * ub) s.spill.resize(m.idx.size() * ub);
  s.receiving = true;
  s.waited = false;
  s.data = const_cast<void **>(recv);
  s.nreceive = static_cast<int>(peers.size());
  s.nrecvs = 0;
  for (std::size_t k = 0; k < peers.size(); k++) {
    s.held[k] = Held::no;
    s.marked[k] = 0;
    s.recvs[k] = MPI_REQUEST_NULL;
    if (!large(peers[k], ub)) continue;
    s.nrecvs++;
    STF_CHECK(recv_init_bytes(s.spill.data() + m.offset[k] * ub, peers[k].units * ub, peers[k].rank,
                              large_tag(d, s.seq), comm_.comm, &s.recvs[k], &s.recv_types[k]));
    STF_MPI(MPI_Start(&s.recvs[k]));
  }
  return STF_SUCCESS;
}

int PutSignalTransport::lend_send(Channel &c, Direction d, Leg, std::size_t ub, void **send) {
  STF_CHECK(refuse_if_broken());
  PutChannel &s = start(c, d, ub);
  const Messages &m = senders(plan_, d);
  std::vector<Peer> &peers = senders_of(d);
  s.route.resize(peers.size());  // each on its own, as in post_recv
  s.previous.resize(peers.size());
  s.pending.resize(peers.size());
  s.forget_pending();
  if (s.outbox.size() < m.idx.size() * ub) s.outbox.resize(m.idx.size() * ub);
  for (std::size_t k = 0; k < peers.size(); k++) {
    Peer &p = peers[k];
    s.route[k] = large(p, ub) ? Route::large : Route::queued;
    s.previous[k] = 0;
    s.pending[k] = 0;
    if (p.capacity > 0) {  // region seq % S takes the message, or the mark of a large one
      std::uint64_t &last = p.last_in_region[s.seq & (slots_ - 1)];
      s.previous[k] = last;
      last = s.seq + 1;
    }
    if (s.route[k] == Route::queued && p.via == Via::heap && p.ring.writable(s.seq, s.previous[k]))
      s.route[k] = Route::region;
    send[k] = s.route[k] == Route::region ? p.ring.region(s.seq) : s.outbox.data() + m.offset[k] * ub;
  }
  s.lent = true;
  return STF_SUCCESS;
}

int PutSignalTransport::post_send(Channel &c, Direction d, Leg, std::size_t ub, const void *const *send) {
  PutChannel &s = c.get<PutChannel>();
  const std::vector<Peer> &peers = senders_of(d);
  s.sends.clear();
  s.sends.reserve(peers.size());  // write adds to it without allocating
  for (std::size_t k = 0; k < peers.size(); k++) switch (s.route[k]) {
      case Route::region: peers[k].ring.publish(s.seq, peers[k].units * ub); break;
      case Route::large:
        if (peers[k].capacity == 0) {  // no region: both ends know it comes by MPI
          s.sends.emplace_back();
          STF_CHECK(isend_bytes(send[k], peers[k].units * ub, peers[k].rank, large_tag(d, s.seq), comm_.comm,
                                &s.sends.back()));
          break;
        }
        [[fallthrough]];  // sent with its mark, once its region is free (large_tag)
      case Route::queued:
        s.pending[k] = 1;
        s.npending++;
        pending_++;
        break;
    }
  s.lent = false;
  return s.npending ? progress(false) : STF_SUCCESS;
}

bool PutSignalTransport::rma_writable(const Peer &p, std::uint64_t n, std::uint64_t previous) {
  if (previous == 0) return true;
  MPI_Win_sync(rma_win_);
  const std::uint64_t *credit = p.credit_words + (n & (slots_ - 1)) * (kLine / sizeof(std::uint64_t));
  return __atomic_load_n(credit, __ATOMIC_ACQUIRE) >= previous;
}

int PutSignalTransport::accumulate(int rank, MPI_Aint disp, std::uint64_t value) {
  STF_CHECK(reap_signals());
  Signal &s = signals_.emplace_back(Signal{value, MPI_REQUEST_NULL});
  const int rc =
      MPI_Raccumulate(&s.value, 1, MPI_UINT64_T, rank, disp, 1, MPI_UINT64_T, MPI_REPLACE, rma_win_, &s.req);
  if (rc != MPI_SUCCESS) {
    signals_.pop_back();
    return mpi_error(rc, "MPI_Raccumulate");
  }
  // Open MPI's osc/pt2pt (between hosts) sends an operation only at a
  // synchronisation; a local flush returns without the target.
  STF_MPI(MPI_Win_flush_local(rank, rma_win_));
  return STF_SUCCESS;
}

int PutSignalTransport::reap_signals() {
  for (int done = 1; done && !signals_.empty();) {
    STF_MPI(MPI_Test(&signals_.front().req, &done, MPI_STATUS_IGNORE));
    if (done) signals_.pop_front();
  }
  return STF_SUCCESS;
}

// The message first, complete at the target (flush), then its signal.
int PutSignalTransport::put_rma(const Peer &p, std::uint64_t n, const void *data, std::size_t bytes) {
  const std::size_t stride = SlotRing::round_up(p.capacity);
  const MPI_Aint region = p.ring_disp + static_cast<MPI_Aint>((n & (slots_ - 1)) * stride);
  STF_MPI(MPI_Put(data, static_cast<int>(bytes), MPI_BYTE, p.rank, region, static_cast<int>(bytes), MPI_BYTE,
                  rma_win_));
  STF_MPI(MPI_Win_flush(p.rank, rma_win_));
  return signal_rma(p, n, bytes, false);
}

int PutSignalTransport::signal_rma(const Peer &p, std::uint64_t n, std::size_t bytes, bool mark) {
  const std::size_t stride = SlotRing::round_up(p.capacity);
  const MPI_Aint signal = p.ring_disp + static_cast<MPI_Aint>(slots_ * stride + (n & (slots_ - 1)) * kLine);
  return accumulate(p.rank, signal, SlotRing::signal_value(n, bytes, mark));
}

int PutSignalTransport::write(PutChannel &c, int k) {
  const Peer &p = senders_of(c.dir)[k];
  const std::size_t bytes = p.units * c.unit_bytes;
  const char *packed = c.outbox.data() + senders(plan_, c.dir).offset[k] * c.unit_bytes;
  const bool mark = c.route[k] == Route::large;  // the message goes by MPI: its signal alone
  if (p.via == Via::heap ? !p.ring.writable(c.seq, c.previous[k]) : !rma_writable(p, c.seq, c.previous[k]))
    return STF_SUCCESS;
  if (mark) {
    c.sends.emplace_back();
    STF_CHECK(isend_bytes(packed, bytes, p.rank, large_tag(c.dir, c.seq), comm_.comm, &c.sends.back()));
  }
  int rc = STF_SUCCESS;
  if (p.via == Via::heap) {
    if (!mark) std::memcpy(p.ring.region(c.seq), packed, bytes);
    p.ring.publish(c.seq, bytes, mark);
  } else {
    rc = mark ? signal_rma(p, c.seq, bytes, true) : put_rma(p, c.seq, packed, bytes);
  }
  // Not pending any more, also where the signal failed: a second try would
  // send the large message again.
  c.pending[k] = 0;
  c.npending--;
  pending_--;
  return rc;
}

// Message k of c has arrived in its region: remember a sender whose size
// tag says another size than expected (reported by wait_send, the
// operation's last call), or whose mark says its message came by MPI.
void PutSignalTransport::note_size(PutChannel &c, int k) {
  const Peer &p = receivers_of(c.dir)[k];
  if (p.ring.marked(c.seq)) return stray(c, k);
  if (!p.ring.has_size(c.seq, p.units * c.unit_bytes)) c.mismatch.note(p.rank, false, p.units * c.unit_bytes);
}

// The sender's unit made message k too large for its region (the ranks'
// units differ): it comes by MPI, where this operation posted no receive,
// and its sender's end waits until it is received. drain_strays takes it
// (the next begin of this direction waits for that). A large receive from
// the same peer with the same tag that a later operation has posted (2S
// operations later, all in flight) may take it first: those operations
// fail (none has ended: test_large waits until earlier ones have looked at
// their regions), and so may later ones, which are refused.
void PutSignalTransport::stray(PutChannel &c, int k) {
  const Peer &p = receivers_of(c.dir)[k];
  c.mismatch.note(p.rank, false, p.units * c.unit_bytes);
  strays_[dir_index(c.dir)][stray_index(k, c.seq)]++;
  strays_left_[dir_index(c.dir)]++;
  for (PutChannel *o : channels_)
    if (o->seq_set && o->receiving && o->dir == c.dir && o->seq > c.seq &&
        large_tag(o->dir, o->seq) == large_tag(c.dir, c.seq) && large(p, o->unit_bytes)) {
      o->mismatch.note(p.rank, false, p.units * o->unit_bytes);
      broken_ = "rank " + std::to_string(p.rank) +
                " sent a message by MPI where this rank awaited it in a region (the ranks' units differed in size), "
                "and a receive of another operation may have taken it";
    }
}

int PutSignalTransport::drain_strays() {
  for (int d = 0; d < kDirections; d++)
    for (std::size_t i = 0; strays_left_[d] > 0 && i < strays_[d].size(); i++)
      while (strays_[d][i] > 0) {
        const int k = static_cast<int>(i / large_tags());
        const int tag = large_tag_at(d, static_cast<int>(i % large_tags()));
        int found = 0;
        MPI_Message message;
        MPI_Status status;
        STF_MPI(MPI_Improbe(recv_peers_[d][k].rank, tag, comm_.comm, &found, &message, &status));
        if (!found) break;
        MPI_Count bytes = 0;
        STF_MPI(MPI_Get_elements_x(&status, MPI_BYTE, &bytes));
        Drained &x = draining_.emplace_back(Drained{std::vector<char>(static_cast<std::size_t>(bytes)), MPI_REQUEST_NULL});
        ByteCount count;
        STF_CHECK(count.set(x.sink.size()));
        STF_MPI(MPI_Imrecv(x.sink.data(), count.count(), count.type(), &message, &x.req));
        strays_[d][i]--;
        strays_left_[d]--;
      }
  for (int done = 1; done && !draining_.empty();) {
    STF_MPI(MPI_Test(&draining_.front().req, &done, MPI_STATUS_IGNORE));
    if (done) draining_.pop_front();
  }
  return STF_SUCCESS;
}

bool PutSignalTransport::arrived(const Peer &p, std::uint64_t n) {
  if (p.via == Via::rma) MPI_Win_sync(rma_win_);
  return p.ring.arrived(n);
}

int PutSignalTransport::consume(PutChannel &c, int k) {
  const Peer &p = receivers_of(c.dir)[k];
  if (large(p, c.unit_bytes)) return STF_SUCCESS;
  return return_credit(p, c.seq);
}

int PutSignalTransport::return_credit(const Peer &p, std::uint64_t n) {
  if (p.via == Via::heap) {
    p.ring.consumed(n);
    return STF_SUCCESS;
  }
  return accumulate(p.rank, p.credit_disp + static_cast<MPI_Aint>((n & (slots_ - 1)) * kLine), n + 1);
}

// The region of large message k of c is signalled: with the sender's mark
// (its credit returned; the receive fails if the size differs), or, from a
// sender whose unit is smaller than mine, with the message itself, which
// fits its region where mine does not. Then its receive is cancelled, the
// region given back and the end fails, instead of a wait for ever. A
// region signalled for this operation's number cannot be another
// operation's, so nothing right is taken for a mismatch.
int PutSignalTransport::take_signal_of_large(PutChannel &c, int k) {
  const Peer &p = receivers_of(c.dir)[k];
  const std::size_t expected = p.units * c.unit_bytes;
  if (p.ring.marked(c.seq)) {
    if (!p.ring.has_size(c.seq, expected)) c.mismatch.note(p.rank, false, expected);
    c.marked[k] = 1;
  } else {
    // A receive that completed (its request freed) or could not be
    // cancelled took a later operation's message, which that operation
    // then waits for in vain.
    if (c.recvs[k] == MPI_REQUEST_NULL || !cancel_receive(&c.recvs[k]))
      broken_ = "rank " + std::to_string(p.rank) +
                " put a message in a region where this rank awaited it by MPI (the ranks' units differed in size), "
                "and this rank's receive took a later operation's message";
    c.mismatch.note(p.rank, false, expected);
    c.held[k] = Held::spilled;  // seen: its data is in no buffer, the end fails
  }
  return return_credit(p, c.seq);
}

// Each large message is tested on its own, so that its status gives its
// size (a peer's unit of another size; Open MPI 4.1's MPI_Testall reports
// no truncation). It is done once received and its region's signal taken
// (take_signal_of_large): a sender running ahead may have sent a later
// operation's large message, which this receive took, and the signal says
// so where it is not a mark.
int PutSignalTransport::test_large(PutChannel &c, bool *done) {
  const std::vector<Peer> &peers = receivers_of(c.dir);
  *done = true;
  for (std::size_t k = 0; k < peers.size(); k++) {
    const Peer &p = peers[k];
    if (!large(p, c.unit_bytes) || c.held[k] != Held::no) continue;
    const std::size_t expected = p.units * c.unit_bytes;
    if (c.recvs[k] != MPI_REQUEST_NULL) {
      int flag = 0, error_class = MPI_SUCCESS;
      MPI_Status status;
      const int rc = MPI_Test(&c.recvs[k], &flag, &status);
      if (rc != MPI_SUCCESS) MPI_Error_class(rc, &error_class);
      // Complete (inactive), or failed; Open MPI 4.1 sets a persistent
      // request whose message was truncated to MPI_REQUEST_NULL itself.
      if ((flag || rc != MPI_SUCCESS) && c.recvs[k] != MPI_REQUEST_NULL) MPI_Request_free(&c.recvs[k]);
      if (error_class == MPI_ERR_TRUNCATE) {
        c.mismatch.note(p.rank, false, expected);
      } else if (rc != MPI_SUCCESS) {
        return mpi_error(rc, "MPI_Test");
      } else if (flag) {
        long long got = 0;
        STF_CHECK(received_bytes(status, c.recv_types[k].type(), &got));
        if (static_cast<std::size_t>(got) != expected)
          c.mismatch.note(p.rank, false, expected, static_cast<std::size_t>(got));
      }
    }
    if (awaits_signal(c, static_cast<int>(k)) && arrived(p, c.seq))
      STF_CHECK(take_signal_of_large(c, static_cast<int>(k)));
    if (c.recvs[k] != MPI_REQUEST_NULL || awaits_signal(c, static_cast<int>(k))) {
      *done = false;
    } else if (p.capacity > 0 && c.held[k] == Held::no) {
      bool seen = false;
      STF_CHECK(earlier_regions_seen(c, static_cast<int>(k), &seen));
      *done = *done && seen;
    }
  }
  return STF_SUCCESS;
}

int PutSignalTransport::wait_large(PutChannel &c) {
  return poll_until([&](bool *done) { return test_large(c, done); },
                    [&] {
                      // Not done: a receive is still posted (abandon, after the
                      // failed end, cancels them), or a region's signal is
                      // still awaited.
                      const auto late = [&](std::size_t i) {
                        return large(receivers_of(c.dir)[i], c.unit_bytes) &&
                               (c.recvs[i] != MPI_REQUEST_NULL || awaits_signal(c, static_cast<int>(i)));
                      };
                      std::size_t k = 0;
                      while (k + 1 < c.held.size() && !late(k)) k++;
                      return "a message larger than its region from rank " +
                             std::to_string(receivers_of(c.dir)[k].rank);
                    });
}

int PutSignalTransport::progress(bool drain) {
  if (!strays_empty()) STF_CHECK(drain_strays());
  if (!drain && pending_ == 0) return STF_SUCCESS;
  for (PutChannel *c : channels_) {
    if (!c->seq_set) continue;
    for (int k = 0; c->npending > 0 && k < static_cast<int>(c->pending.size()); k++)
      if (c->pending[k]) STF_CHECK(write(*c, k));
    if (!drain || !c->receiving || c->waited) continue;
    const std::vector<Peer> &peers = receivers_of(c->dir);
    for (std::size_t k = 0; k < peers.size(); k++) {
      const Peer &p = peers[k];
      if (p.capacity == 0 || c->held[k] != Held::no || !arrived(p, c->seq)) continue;
      if (large(p, c->unit_bytes)) {
        if (!c->marked[k]) STF_CHECK(take_signal_of_large(*c, static_cast<int>(k)));
        continue;
      }
      STF_CHECK(spill(*c, static_cast<int>(k)));
    }
  }
  return STF_SUCCESS;
}

int PutSignalTransport::spill(PutChannel &c, int k) {
  const Peer &p = receivers_of(c.dir)[k];
  note_size(c, k);
  std::memcpy(c.spill.data() + receivers(plan_, c.dir).offset[k] * c.unit_bytes, p.ring.region(c.seq),
              p.units * c.unit_bytes);
  STF_CHECK(consume(c, k));
  c.held[k] = Held::spilled;
  return STF_SUCCESS;
}

// Whether every operation in flight before c that awaits its message from
// receiving peer k in a region has looked at that region (spilling what
// has arrived): were one a mark (stray()), c's large receive may hold that
// operation's message instead of its own, and c must fail, not succeed.
int PutSignalTransport::earlier_regions_seen(PutChannel &c, int k, bool *seen) {
  const Peer &p = receivers_of(c.dir)[k];
  *seen = true;
  for (PutChannel *o : channels_) {
    if (o->dir != c.dir || !o->seq_set || !o->receiving || o->waited || o->seq >= c.seq) continue;
    if (o->held[k] != Held::no || large(p, o->unit_bytes)) continue;
    if (arrived(p, o->seq))
      STF_CHECK(spill(*o, k));
    else
      *seen = false;
  }
  return STF_SUCCESS;
}

int PutSignalTransport::wait_until(const char *what, int rank, bool (PutSignalTransport::*ready)(PutChannel &, int),
                                   PutChannel &c, int k) {
  return poll_until(
      [&](bool *done) {
        *done = (this->*ready)(c, k);
        return STF_SUCCESS;
      },
      [&] { return std::string(what) + " of rank " + std::to_string(rank); });
}

int PutSignalTransport::wait_recv(Channel &c) {
  PutChannel &s = c.get<PutChannel>();
  const Messages &m = receivers(plan_, s.dir);
  const std::vector<Peer> &peers = receivers_of(s.dir);
  if (s.nrecvs > 0) STF_CHECK(wait_large(s));
  for (std::size_t k = 0; k < peers.size(); k++) {
    const Peer &p = peers[k];
    char *spilled = s.spill.data() + m.offset[k] * s.unit_bytes;
    if (large(p, s.unit_bytes)) {
      s.data[k] = spilled;
      continue;
    }
    STF_CHECK(wait_until("a message", p.rank, &PutSignalTransport::received, s, static_cast<int>(k)));
    // Taken where it is: waiting for the next peer's message may spill
    // others, not this one.
    if (s.held[k] == Held::no) {
      s.held[k] = Held::in_region;
      note_size(s, static_cast<int>(k));
    }
    s.data[k] = s.held[k] == Held::spilled ? spilled : p.ring.region(s.seq);
  }
  s.waited = true;
  return STF_SUCCESS;
}

int PutSignalTransport::wait_strays(Direction d) {
  if (!broken_.empty()) return STF_SUCCESS;  // the counts may be off; new operations are refused anyway
  const int &left = strays_left_[dir_index(d)];
  return poll_until(
      [&](bool *done) {
        *done = left == 0;
        return STF_SUCCESS;
      },
      [] { return std::string("the message of an earlier, failed operation"); });
}

void PutSignalTransport::drain_strays_now() {
  if (!broken_.empty()) return;  // the counts may be off: a wait could be for ever
  Backoff backoff(spins_, 0);
  while (!strays_empty() && drain_strays() == STF_SUCCESS) backoff.pause();
}

int PutSignalTransport::test_recv(Channel &c, bool *done) {
  PutChannel &s = c.get<PutChannel>();
  STF_CHECK(progress(false));
  poke_mpi();
  *done = true;
  if (s.nrecvs > 0) STF_CHECK(test_large(s, done));
  const std::vector<Peer> &peers = receivers_of(s.dir);
  for (std::size_t k = 0; *done && k < peers.size(); k++)
    *done = large(peers[k], s.unit_bytes) || received(s, static_cast<int>(k));
  return STF_SUCCESS;
}

int PutSignalTransport::test_send(Channel &c, bool *done) {
  PutChannel &s = c.get<PutChannel>();
  STF_CHECK(progress(false));
  STF_CHECK(test_all(&s.sends, done));
  *done = *done && s.npending == 0;
  return STF_SUCCESS;
}

int PutSignalTransport::release_recv(Channel &c) {
  PutChannel &s = c.get<PutChannel>();
  for (int k = 0; k < s.nreceive; k++)
    if (s.held[k] == Held::in_region) STF_CHECK(consume(s, k));
  s.receiving = false;
  return STF_SUCCESS;
}

int PutSignalTransport::wait_send(Channel &c) {
  PutChannel &s = c.get<PutChannel>();
  for (int k = 0; k < static_cast<int>(s.pending.size()); k++)
    if (s.pending[k])
      STF_CHECK(wait_until("room for a message", senders_of(s.dir)[k].rank, &PutSignalTransport::written, s, k));
  // Polled, not MPI_Waitall: a peer may need a mark of an earlier
  // operation, queued here, before it can receive these messages.
  STF_CHECK(poll_until([&](bool *done) { return test_all(&s.sends, done); },
                       [] { return std::string("the receipt of a message larger than its region"); }));
  // A message this operation found marked: its receive posted before the
  // end returns, so that the sender's end completes while this rank is
  // elsewhere (MPI progresses it in any call).
  STF_CHECK(wait_strays(s.dir));
  s.seq_set = false;
  // Once the operation is complete and its regions given back.
  return s.mismatch.report("putsignal");
}

}  // namespace

int make_putsignal_transport(const TransportContext &ctx, std::unique_ptr<Transport> *out) {
  std::unique_ptr<PutSignalTransport> t;
  STF_CHECK(prepare_agreed(ctx, [&] {
    t = std::make_unique<PutSignalTransport>(ctx);
    t->prepare();
  }));
  STF_CHECK(t->init());
  *out = std::move(t);
  return STF_SUCCESS;
}

}  // namespace stf
