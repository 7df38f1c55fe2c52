// The putsignal transport: one-sided put-with-signal (slot_ring.h), with no
// MPI call on the way of a message between ranks of one node. This file
// holds its Transport methods: it numbers operations, routes each message
// (into its region, queued in the outbox, or large) and waits.
//
// Where the rest lives (this folder): link.h, the protocol's steps on one
// peer of one direction and side, as a heap link (heap_link.cpp), an RMA
// link (rma_link.cpp) or the point-to-point route; layout.cpp, the set-up
// that makes the links and their windows; progress.cpp, queued writes,
// spills, polling and timeouts; large.cpp, messages larger than their
// region and strays; channel.h, what a channel keeps; region_queues.h,
// per peer and region the operations in flight, oldest first; options.cpp.
//
// Choices, and why:
// - A link per peer, direction and side (link.h), whose kind is chosen
//   once, at set-up, by where the peer is (layout.cpp): the sequencing here
//   never asks whether a peer is in the heap or behind the window. What
//   differs (a store or an MPI_Put, an MPI_Win_sync before a load, whether
//   the sender may pack in place) is the link's, behind a virtual call: a
//   few instructions per message, on a path of thousands per operation.
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
// - Messages to other nodes go by MPI point-to-point instead (a link
//   without regions) where the RMA would not be one-sided
//   (net_choice.h): -stf_putsignal_net auto probes, at the first set-up
//   across nodes, whether a put reaches a rank outside MPI. Open MPI's
//   osc/pt2pt (its RMA between hosts over TCP) does not: each put waits for
//   its target's next MPI call. Built with MPICH, auto means p2p without a
//   probe: with MPICH 4.0.2 over UCX (4 ranks on 2 cores, every pair on
//   other nodes) a rank's MPI_Win_flush, or its accumulates' completion,
//   stalled for tens of seconds, again and again until the test's 280 s
//   limit, while the target polled in MPI_Iprobe and MPI_Test (also with
//   MPICH's waits made to yield the core: no rank was starved). rma and
//   p2p force either. Node peers go through the heap either way.
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
#include "transport/putsignal/transport.h"

#include <memory>

#include "transport/mpi_requests.h"

namespace stf {
namespace putsignal {
namespace {

// *buf at the plan's offsets of m, as far as the last message k that
// needs(k) a place in it; one that holds every message already stays.
template <class Needs>
void size_for(std::vector<char> *buf, const Messages &m, std::size_t ub, Needs needs) {
  if (buf->size() >= static_cast<std::size_t>(m.offset[m.count()]) * ub) return;
  std::size_t bytes = 0;
  for (int k = 0; k < m.count(); k++)
    if (needs(k)) bytes = static_cast<std::size_t>(m.offset[k + 1]) * ub;
  if (buf->size() < bytes) buf->resize(bytes);
}

}  // namespace

PutSignalTransport::PutSignalTransport(const TransportContext &ctx, NetChoice net)
    : comm_(ctx.comm), plan_(ctx.plan), slots_(static_cast<int>(ctx.opts.number(putsignal_slots_option))),
      unit_capacity_(static_cast<int>(ctx.opts.number(putsignal_unit_bytes_option))),
      timeout_(static_cast<double>(ctx.opts.number(putsignal_timeout_option))),
      net_(std::move(net)),
      spins_(ctx.topology.local_size > sysconf(_SC_NPROCESSORS_ONLN) ? 200 : 100000),
      layout_(ctx, slots_, unit_capacity_, net_) {}

PutSignalTransport::~PutSignalTransport() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  layout_.wait_signals();
  drain_strays_now();
  for (Drained &x : draining_) MPI_Wait(&x.req, MPI_STATUS_IGNORE);  // matched already, also when broken
  // layout_ frees the windows next, once no signal or stray needs them.
}

// Local, before init's collectives (prepare_agreed): everything that allocates.
void PutSignalTransport::prepare() {
  layout_.prepare();
  for (Direction d : {Direction::root_to_leaf, Direction::leaf_to_root}) {
    strays_[dir_index(d)].assign(receivers_of(d).size() * large_tags(), 0);
    to_write(dir_index(d)).resize(senders_of(d).size(), slots_);
    to_take(dir_index(d)).resize(receivers_of(d).size(), slots_);
  }
}

int PutSignalTransport::init() { return layout_.init(); }

std::string PutSignalTransport::describe() const {
  return "putsignal (one-sided put with signal, " + std::to_string(slots_) +
         " regions per peer and direction: node peers through a shared-memory heap, other nodes' through " +
         (net_.rma ? "an MPI RMA window" : "MPI point-to-point") + " (" + net_.why + ")" +
         "; messages of more than " + std::to_string(unit_capacity_) +
         " B per unit: MPI point-to-point; fetch-and-op: basic fallback)";
}

// Each array on its own (a shortage may stop between them), all before the
// channel is listed or counts as receiving, which progress reads them by.
void PutSignalTransport::size_peers(PutChannel &s, Direction d) {
  const std::size_t nsend = senders_of(d).size(), nreceive = receivers_of(d).size();
  s.sized_for = -1;
  s.route.resize(nsend);
  s.previous.resize(nsend);
  s.pending.resize(nsend);
  s.source.resize(nsend);
  s.held.resize(nreceive);
  s.marked.resize(nreceive);
  s.recvs.resize(nreceive, MPI_REQUEST_NULL);
  s.recv_types.resize(nreceive);
  s.in_place.resize(nreceive);
  s.sized_for = dir_index(d);
}

PutChannel &PutSignalTransport::start(Channel &c, Direction d, std::size_t ub) {
  settle();
  PutChannel &s = c.get<PutChannel>();
  if (s.sized_for != dir_index(d)) size_peers(s, d);
  if (!s.listed) {
    channels_.push_back(&s);
    s.listed = &channels_;
    s.pending_total = &pending_;
    s.queues = queues_;
    s.in_flight = &in_flight_;
    s.express = &express_;
  }
  if (!s.seq_set) {
    s.seq = next_seq_[dir_index(d)]++;
    s.seq_set = true;
    in_flight_++;
    s.dir = d;
    s.spent = false;
    s.mismatch.clear();  // an operation that failed before its wait_send leaves nothing behind
    s.taken_from = -1;
  }
  s.unit_bytes = ub;  // also where a failed operation is begun again with another unit
  return s;
}

int PutSignalTransport::post_recv(Channel &c, Direction d, Leg, std::size_t ub, void *const *recv) {
  STF_CHECK(refuse_if_broken());
  STF_CHECK(wait_strays(d));  // before a receive of this operation could take one
  PutChannel &s = start(c, d, ub);
  const Messages &m = receivers(plan_, d);
  const std::vector<std::unique_ptr<ReceiveLink>> &peers = receivers_of(d);
  // The spill buffer as far as a message may need it: not for large ones
  // received where the ops layer offered (user memory, no copy).
  size_for(&s.spill, m, ub, [&](int k) { return !(peers[k]->large(ub) && recv[k]); });
  s.receiving = true;
  s.waited = false;
  s.data = const_cast<void **>(recv);
  s.nreceive = static_cast<int>(peers.size());
  s.nrecvs = 0;
  for (std::size_t k = 0; k < peers.size(); k++) {
    s.held[k] = Held::no;
    s.marked[k] = 0;
    s.recvs[k] = MPI_REQUEST_NULL;
    const ReceiveLink &p = *peers[k];
    s.in_place[k] = p.large(ub) && recv[k];
    if (p.has_regions()) to_take(dir_index(d)).of(k, s.seq).push(&s, s.seq);
    if (!p.large(ub)) continue;
    s.nrecvs++;
    void *into = s.in_place[k] ? recv[k] : s.spill.data() + m.offset[k] * ub;
    STF_CHECK(recv_init_bytes(into, p.units * ub, p.rank, large_tag(d, s.seq), comm_.comm, &s.recvs[k],
                              &s.recv_types[k]));
    STF_MPI(MPI_Start(&s.recvs[k]));
  }
  return STF_SUCCESS;
}

int PutSignalTransport::lend_send(Channel &c, Direction d, Leg, std::size_t ub, void **send) {
  STF_CHECK(refuse_if_broken());
  PutChannel &s = start(c, d, ub);
  const Messages &m = senders(plan_, d);
  const std::vector<std::unique_ptr<SendLink>> &peers = senders_of(d);
  s.forget_pending();
  // The outbox as far as a message may need it: a large message offered in
  // the ops layer's memory is sent from there (no copy), unless a timeout
  // may end the operation with the send in flight, which then goes on
  // reading its buffer (abandon_active_sends keeps the outbox, not the
  // user's array).
  const bool from_user = timeout_ <= 0;
  size_for(&s.outbox, m, ub, [&](int k) { return !(from_user && peers[k]->large(ub) && send[k]); });
  for (std::size_t k = 0; k < peers.size(); k++) {
    SendLink &p = *peers[k];
    if (!from_user || !p.large(ub)) send[k] = nullptr;
    s.route[k] = p.large(ub) ? Route::large : Route::queued;
    s.pending[k] = 0;
    // Region seq % S takes the message, or the mark of a large one.
    s.previous[k] = p.has_regions() ? p.take_turn(s.seq) : 0;
    char *region = s.route[k] == Route::queued ? p.in_place(s.seq, s.previous[k]) : nullptr;
    if (region) {
      s.route[k] = Route::region;
      send[k] = region;
    } else if (!send[k]) {
      send[k] = s.outbox.data() + m.offset[k] * ub;
    }
    s.source[k] = static_cast<const char *>(send[k]);
  }
  s.lent = true;
  return STF_SUCCESS;
}

int PutSignalTransport::post_send(Channel &c, Direction d, Leg, std::size_t ub, const void *const *send) {
  settle();
  PutChannel &s = c.get<PutChannel>();
  const std::vector<std::unique_ptr<SendLink>> &peers = senders_of(d);
  s.sends.clear();
  s.sends.reserve(peers.size());  // write adds to it without allocating
  for (std::size_t k = 0; k < peers.size(); k++) {
    SendLink &p = *peers[k];
    switch (s.route[k]) {
      case Route::region:  // packed in place
        s.spent = true;
        STF_CHECK(p.write(s.seq, nullptr, p.units * ub));
        break;
      case Route::large:
        if (!p.has_regions()) {  // both ends know it comes by MPI
          STF_CHECK(send_large(s, static_cast<int>(k), send[k]));
          s.spent = true;
          break;
        }
        [[fallthrough]];  // sent with its mark, once its region is free (large_tag)
      case Route::queued:
        to_write(dir_index(d)).of(k, s.seq).push(&s, s.seq);
        s.pending[k] = 1;
        s.npending++;
        pending_++;
        break;
    }
  }
  return s.npending ? progress(false, true) : STF_SUCCESS;
}

int PutSignalTransport::wait_recv(Channel &c) {
  settle();
  PutChannel &s = c.get<PutChannel>();
  const Messages &m = receivers(plan_, s.dir);
  const std::vector<std::unique_ptr<ReceiveLink>> &peers = receivers_of(s.dir);
  if (s.nrecvs > 0) STF_CHECK(wait_large(s));
  if (s.taken_from >= 0)  // before the ops layer unpacks it
    return set_error(STF_ERR_STATE,
                     "putsignal transport: an earlier operation's receive from rank %d was cancelled (that operation "
                     "failed) before its message came, so this operation's message from that rank may be that one's",
                     s.taken_from);
  for (std::size_t k = 0; k < peers.size(); k++) {
    const ReceiveLink &p = *peers[k];
    char *spilled = s.spill.data() + m.offset[k] * s.unit_bytes;
    if (p.large(s.unit_bytes)) {
      if (!s.in_place[k]) s.data[k] = spilled;
      continue;
    }
    if (!received(s, static_cast<int>(k)))  // a call less where it has come
      STF_CHECK(wait_until("a message", p.rank, &PutSignalTransport::received, s, static_cast<int>(k)));
    // Taken where it is: waiting for the next peer's message may spill
    // others, not this one.
    if (s.held[k] == Held::no) {
      s.held[k] = Held::in_region;
      note_size(s, static_cast<int>(k));
      taken(s, static_cast<int>(k));
    }
    s.data[k] = s.held[k] == Held::spilled ? spilled : p.message(s.seq);
  }
  s.waited = true;
  return STF_SUCCESS;
}

int PutSignalTransport::test_recv(Channel &c, bool *done) {
  settle();
  PutChannel &s = c.get<PutChannel>();
  STF_CHECK(progress(false));
  poke_mpi();
  *done = true;
  if (s.nrecvs > 0) STF_CHECK(test_large(s, done));
  const std::vector<std::unique_ptr<ReceiveLink>> &peers = receivers_of(s.dir);
  for (std::size_t k = 0; *done && k < peers.size(); k++)
    *done = peers[k]->large(s.unit_bytes) || received(s, static_cast<int>(k));
  return STF_SUCCESS;
}

int PutSignalTransport::test_send(Channel &c, bool *done) {
  settle();
  PutChannel &s = c.get<PutChannel>();
  STF_CHECK(progress(false));
  STF_CHECK(test_all(&s.sends, done));
  *done = *done && s.npending == 0;
  return STF_SUCCESS;
}

int PutSignalTransport::release_recv(Channel &c) {
  settle();
  PutChannel &s = c.get<PutChannel>();
  for (int k = 0; k < s.nreceive; k++)
    if (s.held[k] == Held::in_region) STF_CHECK(consume(s, k));
  s.receiving = false;
  return STF_SUCCESS;
}

int PutSignalTransport::wait_send(Channel &c) {
  settle();
  PutChannel &s = c.get<PutChannel>();
  for (int k = 0; k < static_cast<int>(s.pending.size()); k++)
    if (s.pending[k])
      STF_CHECK(wait_until("room for a message", senders_of(s.dir)[k]->rank, &PutSignalTransport::written, s, k));
  // Polled, not MPI_Waitall: a peer may need a mark of an earlier
  // operation, queued here, before it can receive these messages.
  if (!s.sends.empty())
    STF_CHECK(poll_until([&](bool *done) { return test_all(&s.sends, done); },
                         [] { return std::string("the receipt of a message larger than its region"); }));
  // A message this operation found marked: its receive posted before the
  // end returns, so that the sender's end completes while this rank is
  // elsewhere (MPI progresses it in any call).
  STF_CHECK(wait_strays(s.dir));
  s.seq_set = false;
  in_flight_--;
  s.lent = false;
  // Once the operation is complete and its regions given back.
  return s.mismatch.report("putsignal");
}

void PutSignalTransport::abandon(Channel &c, bool in_end) {
  if (!c.state) return;
  settle();
  PutChannel &s = c.get<PutChannel>();
  int came_from = -1;  // a large message that came before the failure: a retry would wait for it again
  for (std::size_t k = 0; k < s.recvs.size(); k++) {
    if (s.recvs[k] == MPI_REQUEST_NULL) continue;
    if (cancel_receive(&s.recvs[k]))
      cancelled(s, static_cast<int>(k));
    else
      came_from = receivers_of(s.dir)[k]->rank;
  }
  // Its queued messages stay unwritten (a retry queues them again).
  for (char &q : s.pending) q = 0;
  s.forget_pending();
  if (!s.seq_set) return;
  std::string why;
  if (in_end)  // its messages taken or on their way
    why = "failed in its end";
  else if (s.spent)
    why = "failed after its messages began to leave";
  else if (came_from >= 0)
    why = "failed after its message larger than its region from rank " + std::to_string(came_from) +
          " had come, which beginning it again would wait for";
  if (!why.empty()) {
    if (broken_.empty())
      broken_ = "operation " + std::to_string(s.seq) + " of this SF " + why +
                "; its peers' operations no longer pair with this rank's";
    return;
  }
  if (s.lent) {
    std::vector<std::unique_ptr<SendLink>> &peers = senders_of(s.dir);
    for (std::size_t k = 0; k < peers.size(); k++)
      if (peers[k]->has_regions()) peers[k]->give_turn_back(s.seq, s.previous[k]);
    s.lent = false;
  }
  // Its number goes to the next begin in its direction, which may take
  // another request slot (a begin in the other direction took this one): it
  // is the direction's last number, taken in this begin. Its queue entries
  // go, or a retry on this channel with this number would revive them: an
  // express one, which has none, would find its messages spilled.
  s.leave_queues();
  next_seq_[dir_index(s.dir)] = s.seq;
  s.seq_set = false;
  in_flight_--;
}

}  // namespace putsignal

int make_putsignal_transport(const TransportContext &ctx, std::unique_ptr<Transport> *out) {
  // Two references for the lambda: std::function holds them without
  // allocating, which could fail on one rank before the agreement.
  struct {
    putsignal::NetChoice net;
    std::unique_ptr<putsignal::PutSignalTransport> t;
  } made;
  // A rank whose choice fails after its collectives (out of memory) fails
  // in the agreement with the others.
  const int chosen = putsignal::choose_net(ctx, &made.net);
  STF_CHECK(prepare_agreed(
      ctx,
      [&made, &ctx] {
        made.t = std::make_unique<putsignal::PutSignalTransport>(ctx, std::move(made.net));
        made.t->prepare();
      },
      chosen));
  STF_CHECK(made.t->init());
  *out = std::move(made.t);
  return STF_SUCCESS;
}

}  // namespace stf
