// How a plan's messages travel. A transport moves whole buffers between peer
// ranks; it never looks inside them (packing is the ops layer's business).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "starforest.h"

namespace stf {

struct Plan;

enum class Direction { root_to_leaf, leaf_to_root };

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
  Channel() = default;
  Channel(const Channel &) = delete;
  Channel &operator=(const Channel &) = delete;
  ~Channel();
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual const char *name() const = 0;
  // Receive into recv[k] from receiving-side peer k (size(k) * unit_bytes bytes).
  virtual int post_recv(Channel &c, Direction d, int tag, std::size_t unit_bytes, void *const *recv) = 0;
  // Send send[k] to sending-side peer k.
  virtual int post_send(Channel &c, Direction d, int tag, std::size_t unit_bytes, const void *const *send) = 0;
  virtual int wait_recv(Channel &c) = 0;
  virtual int wait_send(Channel &c) = 0;
};

// The transport named by sf->opts.type, bound to the SF's communicator and plan.
int create_transport(stf_sf sf, const Plan &plan, std::unique_ptr<Transport> *out);

}  // namespace stf
