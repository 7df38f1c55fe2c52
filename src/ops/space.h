// What differs between memory spaces in an exchange: how one side's data
// reaches MPI and comes back from it. Host memory (host_space.cpp) packs
// and unpacks with the serial host kernels, message by message; device
// memory (device_space.cpp) launches one kernel over all messages and may
// stage through pinned host buffers. The exchange (exchange.cpp) runs the
// same steps for every memory and asks each side's space for these.
#pragma once

#include "ops/flow.h"

namespace stf {

class Space {
 public:
  virtual ~Space() = default;
  // Receiving side: the buffer for every received message that does not land
  // in user memory (f.to's units), and whether user memory may take messages.
  virtual int recv_buffer(stf_request r, const Flow &f, char **base) const = 0;
  virtual bool user_memory_may_receive(stf_request r) const = 0;
  // Sending side: r->send_ptrs, one per peer: user memory where the slots
  // are contiguous (and the space allows), else packed. When the transport
  // lends its memory (r->lent), each message goes where r->lent_ptrs says
  // (user memory where the transport kept the offered pointer).
  // *enqueued: device work was queued that the sends must wait for.
  virtual int prepare_send(stf_request r, const Flow &f, bool *enqueued) const = 0;
  // Where the transport lends its memory: whether contiguous messages may
  // go from and to user memory instead, where the transport has no use for
  // its own (Transport::lend_send). Device memory never: lent memory is
  // the host's, reached by copies.
  virtual bool offers_user_memory() const = 0;
  // Receiving side, in end: what did not land in user memory, from
  // r->recv_ptrs.
  virtual int unpack(stf_request r, const Flow &f) const = 0;
};

extern const Space &host_space;    // host_space.cpp
extern const Space &device_space;  // device_space.cpp
inline const Space &space_of(stf_memtype m) { return m == STF_MEMTYPE_DEVICE ? device_space : host_space; }

}  // namespace stf
