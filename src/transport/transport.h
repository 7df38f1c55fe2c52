// How a plan's messages travel. A transport moves whole buffers between peer
// ranks; it never looks inside them (packing is the ops layer's business).
// Transports are rows of one table (registry.h); what a transport cannot
// do is sent through basic by one wrapper (fallback.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/comm.h"
#include "core/options.h"
#include "core/topology.h"
#include "graph/graph.h"
#include "plan/plan.h"

namespace stf {

struct Unit;

enum class Direction { root_to_leaf, leaf_to_root };

// Which leg of an operation a channel carries. Forward legs (bcast, reduce)
// and fetch-and-op's contributions are posted from begin, so in the same
// order on every rank; fetch-and-op's return leg is posted from end, whose
// order may differ between ranks (transports that need a common order cannot
// take it). Contributions and returns travel in buffers the root side
// combines in place, so transports that lend their own memory take neither.
enum class Leg { forward, fetch_contribution, fetch_return };

// What a transport keeps for one channel between posting and waiting,
// defined by each transport for itself.
struct ChannelState {
  virtual ~ChannelState() = default;
};

// One direction of one in-flight operation slot. Slots are reused, so
// transports may cache per-peer state (persistent requests) in it.
struct Channel {
  std::unique_ptr<ChannelState> state;
  bool whole = false;  // set by the ops layer: the operation in flight went through begin_whole
  template <class T>
  T &get() {
    if (!state) state = std::make_unique<T>();
    return static_cast<T &>(*state);
  }
};

// A bcast or reduce handed to a transport whole: user buffers and op, which
// the transport applies itself (collectives on user memory) instead of moving
// packed buffers for the ops layer to unpack.
struct WholeOp {
  const Unit &unit;
  MPI_Op op;
  const void *src;  // bcast: roots; reduce: leaves
  void *dst;        // bcast: leaves; reduce: roots
};

// The active device as the sf layer sees it, asked at the time of each
// call: its name ("host", "emu", "cuda"; "" if none can be made) and its
// library stream (a cudaStream_t on cuda). For the nvshmem plug-in, which
// calls nothing of libstarforest (transports inside the library use the
// device layer itself).
struct DeviceView {
  const char *(*name)() = nullptr;
  void *(*stream)() = nullptr;
};

// What a transport is made from. All of it outlives the transport.
struct TransportContext {
  const Comm &comm;
  const Topology &topology;
  const Graph &graph;
  const Plan &plan;
  const Options &opts;
  DeviceView device;
  // This rank's failure before the transport's set-up (out of memory): its
  // first agreement (prepare_agreed) makes it every rank's.
  int earlier = STF_SUCCESS;
};

// Transports whose set-up is collective make their local part first (the
// object, the arrays their collectives fill): prepare() runs it, and a rank
// where it fails (out of memory) still meets the others in one agreement
// (with -stf_validate; core/comm.h's agree) before the transport's first
// collective, so that every rank fails instead of the others waiting in it.
// ctx.earlier counts as such a failure, and so does `failed`, the
// caller's own (one that came after collectives of its own).
int prepare_agreed(const TransportContext &ctx, const std::function<void()> &prepare, int failed = STF_SUCCESS);

// The interface the ops layer calls. Every method is pure, so that a class
// that stands for other transports (the fallback wrapper, fallback.cpp)
// cannot compile while it forgets one; transports derive from
// TransportDefaults below, which gives the optional ones their defaults.
class Transport {
 public:
  virtual ~Transport() = default;
  virtual const char *name() const = 0;
  // The name with the transport's parameters and fallbacks, for stf_view.
  virtual std::string describe() const = 0;
  // What this rank's part holds (peers, memory), for stf_view; "" if nothing.
  virtual std::string describe_rank() const = 0;
  // Receive into recv[k] from receiving-side peer k (size(k) * unit_bytes bytes).
  virtual int post_recv(Channel &c, Direction d, Leg leg, std::size_t unit_bytes, void *const *recv) = 0;
  // Send send[k] to sending-side peer k.
  virtual int post_send(Channel &c, Direction d, Leg leg, std::size_t unit_bytes, const void *const *send) = 0;
  virtual int wait_recv(Channel &c) = 0;
  virtual int wait_send(Channel &c) = 0;
  // The waits without waiting (stf_test): *done = true when the receives
  // (sends) have completed, so that wait_recv (wait_send) returns at once.
  // For a channel in a whole operation, test_recv tests the operation and
  // end_whole then returns at once. A transport that learns of arrival only
  // by a collective synchronisation answers true and synchronises in the wait.
  virtual int test_recv(Channel &c, bool *done) = 0;
  virtual int test_send(Channel &c, bool *done) = 0;

  // Transports that move messages through memory of their own (a shared
  // heap, a window) lend it: the ops layer packs straight into it and
  // unpacks from it, instead of handing over buffers of its own. Then, per
  // operation and direction: post_recv (recv[k] is where wait_recv will
  // write where the message from receiving-side peer k is: the array must
  // stay until then), lend_send (send[k] = where to pack the message to
  // sending-side peer k; never blocks), the packing, post_send (with those
  // pointers), wait_recv, the unpacking, release_recv (the memory may take
  // the next message), wait_send. The answer of lends() is the same on
  // every rank. The ops layer may offer its own memory for some messages:
  // send[k] set before lend_send (the message, contiguous in user memory;
  // else NULL) and recv[k] before post_recv (where the message may land;
  // else NULL). A transport may keep an offered pointer and move that
  // message from or to there, where it has no use for its own memory
  // (putsignal: messages larger than their region, which go by MPI); it
  // replaces every other.
  virtual bool lends(Direction d, Leg leg) const = 0;
  virtual int lend_send(Channel &c, Direction d, Leg leg, std::size_t unit_bytes, void **send) = 0;
  virtual int release_recv(Channel &c) = 0;

  // The express path of a lending transport, for a prepared operation on
  // host memory whose first start aimed it (exchange.cpp): express_begin,
  // where the transport can take the operation on its shortest path now,
  // numbers it, sets send[k] to where to pack message k and *taken; else
  // nothing was taken (send may have been written) and the calls above
  // follow, with the offers made afresh. Then the packing,
  // express_send, express_wait (recv[k], express_begin's array, set to
  // where message k is; *taken false where another call of the transport
  // meanwhile made the operation an ordinary one: wait_recv, release_recv
  // and wait_send finish it; *missed_at: the clock, ticks(), where it
  // last stopped waiting for a missing message, just before the look that
  // found it; 0 where none was missing), the unpacking and express_end.
  // Here, what a transport without one does: it takes nothing, so the
  // others are never called (the fallback wrapper is never asked: the
  // ops layer asks the mover()).
  virtual int express_begin(Channel &, Direction, std::size_t, void **, void **, bool *taken) {
    *taken = false;
    return STF_SUCCESS;
  }
  virtual int express_send(Channel &) { return STF_ERR_INTERNAL; }
  virtual int express_wait(Channel &, bool *taken, std::uint64_t *missed_at) {
    *taken = false;
    *missed_at = 0;
    return STF_SUCCESS;
  }
  virtual int express_end(Channel &) { return STF_ERR_INTERNAL; }

  // The transport that moves leg `leg` of the operations on channel c, and
  // the channel it keeps for them: this one and c, or, behind the fallback
  // wrapper (fallback.cpp), the transport it stands for or basic. Asked once
  // per operation, so that the calls of its steps go straight there.
  virtual Transport &mover(Channel &c, Leg leg, Channel **own) = 0;

  // Whole operations. takes_whole must give the same answer on every rank
  // for the same call (it may depend on the direction, unit, op and on facts
  // agreed at set-up, never on this rank's buffers).
  virtual bool takes_whole(Direction d, const Unit &u, MPI_Op op) const = 0;
  // Whether begin_whole also does the self part (else the ops layer does it first).
  virtual bool whole_does_self() const = 0;
  virtual int begin_whole(Channel &c, Direction d, const WholeOp &w) = 0;
  virtual int end_whole(Channel &c, Direction d) = 0;
  // Whether an operation's sends may be posted after later operations'
  // receives (stream model C posts sends from end). Transports whose
  // synchronisation epochs may not overlap say no; model C then runs as B.
  virtual bool sends_may_be_deferred() const = 0;
  // Whether posting and waiting queue the transfers on the device's library
  // stream, behind the packing and ahead of the unpacking (ipc, nvshmem):
  // then device data needs no host wait around them and no staging.
  virtual bool queues_on_stream() const = 0;

  // The operation on c failed between posting and waiting, in its begin or
  // (in_end) its end: leave nothing started that the channel's next use
  // would trip over (receives not yet matched cancelled, sends still going
  // released). Never fails.
  virtual void abandon(Channel &c, bool in_end) = 0;
};

// What a transport that moves messages itself derives from: the optional
// abilities are off (no lent memory, no whole operations, nothing to abandon).
class TransportDefaults : public Transport {
 public:
  std::string describe() const override { return name(); }
  std::string describe_rank() const override { return ""; }
  bool lends(Direction, Leg) const override { return false; }
  int lend_send(Channel &, Direction, Leg, std::size_t, void **) override { return STF_ERR_INTERNAL; }
  int release_recv(Channel &) override { return STF_SUCCESS; }
  Transport &mover(Channel &c, Leg, Channel **own) override {
    *own = &c;
    return *this;
  }
  bool takes_whole(Direction, const Unit &, MPI_Op) const override { return false; }
  bool whole_does_self() const override { return false; }
  int begin_whole(Channel &, Direction, const WholeOp &) override { return STF_ERR_INTERNAL; }
  int end_whole(Channel &, Direction) override { return STF_ERR_INTERNAL; }
  bool sends_may_be_deferred() const override { return true; }
  bool queues_on_stream() const override { return false; }
  void abandon(Channel &, bool) override {}
};

// The peers of each side: receivers of direction d are the ranks messages
// come from, senders the ranks they go to.
inline const Messages &receivers(const Plan &p, Direction d) { return d == Direction::root_to_leaf ? p.leaf : p.root; }
inline const Messages &senders(const Plan &p, Direction d) { return d == Direction::root_to_leaf ? p.root : p.leaf; }

// The SF's tag for messages of direction d on a leg.
inline int message_tag(const Comm &c, Direction d, Leg leg) {
  if (leg == Leg::fetch_return) return c.tag(Tag::fetch_return);  // contributions share reduce's tag
  return c.tag(d == Direction::root_to_leaf ? Tag::root_to_leaf : Tag::leaf_to_root);
}

}  // namespace stf
