// How a plan's messages travel. A transport moves whole buffers between peer
// ranks; it never looks inside them (packing is the ops layer's business).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "starforest.h"

namespace stf {

struct Plan;
struct Unit;

enum class Direction { root_to_leaf, leaf_to_root };

// Message tags: one per direction keeps operations begun in the same order
// on every rank matched; fetch-and-op returns are sent from end, whose order
// may differ between ranks, so each fetch-and-op gets its own tag (and
// transports that rely on a common order treat these tags apart).
constexpr int tag_root_to_leaf = 1;
constexpr int tag_leaf_to_root = 2;
constexpr int tag_fetch_first = 16;
constexpr int tag_fetch_count = 16384;

// Transport-specific state a channel carries (neighbor.cpp), freed with it.
struct ChannelExtra {
  virtual ~ChannelExtra() = default;
};

// A bcast or reduce handed to a transport whole: user buffers and op, which
// the transport applies itself (one-sided accumulates, collectives on user
// memory) instead of moving packed buffers for the ops layer to unpack.
struct WholeOp {
  const Unit &unit;
  MPI_Op op;
  const void *src;  // bcast: roots; reduce: leaves
  void *dst;        // bcast: leaves; reduce: roots
};

// What a transport keeps for one direction of one in-flight operation slot
// between posting and waiting. Slots are reused, so transports may cache
// per-peer state (persistent requests) here.
struct Channel {
  struct Cached {
    MPI_Request req = MPI_REQUEST_NULL;
    const void *buf = nullptr;
    int bytes = -1;
    int tag = -1;
  };
  std::vector<Cached> sends, recvs;  // one per peer of the sending/receiving side
  std::vector<MPI_Request> active_sends, active_recvs;
  std::unique_ptr<ChannelExtra> extra;  // created by transports that need more
  bool whole = false;                   // the operation in flight went through begin_whole
  Channel() = default;
  Channel(const Channel &) = delete;
  Channel &operator=(const Channel &) = delete;
  ~Channel();
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual const char *name() const = 0;
  // The name with the transport's parameters and fallbacks, for stf_view.
  virtual std::string describe() const { return name(); }
  // Receive into recv[k] from receiving-side peer k (size(k) * unit_bytes bytes).
  virtual int post_recv(Channel &c, Direction d, int tag, std::size_t unit_bytes, void *const *recv) = 0;
  // Send send[k] to sending-side peer k.
  virtual int post_send(Channel &c, Direction d, int tag, std::size_t unit_bytes, const void *const *send) = 0;
  virtual int wait_recv(Channel &c) = 0;
  virtual int wait_send(Channel &c) = 0;

  // Whole operations (optional). takes_whole must give the same answer on
  // every rank for the same call (it may depend on the direction, unit, op
  // and on facts agreed at set-up, never on this rank's buffers).
  virtual bool takes_whole(Direction, const Unit &, MPI_Op) const { return false; }
  // Whether begin_whole also does the self part (else the ops layer does it first).
  virtual bool whole_does_self() const { return false; }
  virtual int begin_whole(Channel &, Direction, const WholeOp &) { return STF_ERR_INTERNAL; }
  virtual int end_whole(Channel &, Direction) { return STF_ERR_INTERNAL; }
  // Whether an operation's sends may be posted after later operations'
  // receives (stream model C posts sends from end). Transports whose
  // synchronisation epochs may not overlap say no; model C then runs as B.
  virtual bool sends_may_be_deferred() const { return true; }
};

// The transport named by sf->opts.type, bound to the SF's communicator and plan.
// Collective (a transport may build communicators).
int create_transport(stf_sf sf, const Plan &plan, std::unique_ptr<Transport> *out);

// One per file: basic.cpp (persistent point-to-point), neighbor.cpp
// (neighbourhood collectives on distributed-graph communicators), window.cpp,
// collective.cpp.
std::unique_ptr<Transport> make_basic_transport(MPI_Comm comm, const Plan &plan);
int make_neighbor_transport(stf_sf sf, const Plan &plan, std::unique_ptr<Transport> *out);
// window.cpp: MPI-3 one-sided (sf->opts.window_sync: fence, lock, pscw).
int make_window_transport(stf_sf sf, const Plan &plan, std::unique_ptr<Transport> *out);
// collective.cpp: allgather(v), gather(v), alltoall, or "collective" (the one that fits).
int make_collective_transport(stf_sf sf, const Plan &plan, std::unique_ptr<Transport> *out);

}  // namespace stf
