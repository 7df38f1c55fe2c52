// An operation in flight. Request objects are pooled per SF and reused, so
// their buffers and the transport's cached requests survive between calls.
#pragma once

#include <vector>

#include "device/device_kernels.h"
#include "graph/sf.h"
#include "kernels/kernels.h"
#include "transport/transport.h"

namespace stf {

enum class OpKind { bcast, reduce, fetch_and_op, degree, gather, scatter };
const char *op_kind_name(OpKind k);

// Message tags: see transport/transport.h.

}  // namespace stf

struct stf_request_s {
  stf_sf owner = nullptr;  // the SF the user called (for gather/scatter: not the multi-SF)
  stf_sf sf = nullptr;     // the SF whose plan moves the data
  stf::OpKind kind = stf::OpKind::bcast;
  bool busy = false;
  std::size_t last_bytes = 0;  // unit bytes of the previous use (pool matching)

  const stf::Unit *unit = nullptr;
  const stf::Kernels *kernels = nullptr;  // for op
  const stf::Kernels *copy = nullptr;     // for MPI_REPLACE
  MPI_Op op = MPI_REPLACE;
  const void *src = nullptr;  // bcast: rootdata; reduce/fetch: leafdata
  void *dst = nullptr;        // bcast: leafdata; reduce/fetch: rootdata
  void *update = nullptr;     // fetch: leafupdate
  int fetch_tag = 0;
  unsigned long long fetch_seq = 0;  // fetch: position in this SF's begin order
  bool root_served = false;          // fetch: contributions applied, old values sent back

  // Device path (ops/device_exchange.cpp): where the data lives, the device
  // kernels, device pack buffers, pinned staging buffers (staged path), and
  // two events: after the slot's last device work (the next use waits for
  // it before reusing the buffers) and, in stream model C, after packing
  // (end waits for it before posting the sends).
  stf::Device *device = nullptr;
  stf_memtype src_mem = STF_MEMTYPE_HOST, dst_mem = STF_MEMTYPE_HOST, update_mem = STF_MEMTYPE_HOST;
  const stf::DeviceKernels *dkernels = nullptr;
  stf::DeviceBuffer dev_send, dev_recv, dev_self;
  stf::DeviceBuffer stage_send{true}, stage_recv{true}, stage_update{true};
  stf::Event done_event = nullptr, ready_event = nullptr;
  stf::Device *event_device = nullptr;  // the device that made the events
  bool device_pending = false;          // done_event recorded and maybe not reached
  bool self_to_host = false;            // self part: finish on the host in end
  bool staged = false;                  // device data goes through stage_send/stage_recv
  // Model C: sends posted from end (or an earlier end) after ready_event.
  bool send_deferred = false, send_waits_event = false;
  stf::Direction send_dir = stf::Direction::root_to_leaf;
  // Fetch-and-op on device data runs on host copies: the user's pointers.
  const void *user_src = nullptr;
  void *user_dst = nullptr, *user_update = nullptr;

  ~stf_request_s() {
    if (event_device) {
      event_device->event_destroy(done_event);
      event_device->event_destroy(ready_event);
    }
  }

  std::vector<char> rootbuf, leafbuf, returnbuf, selfbuf;
  std::vector<char> recv_direct;  // per receiving peer: data landed in user memory
  std::vector<void *> recv_ptrs;
  std::vector<const void *> send_ptrs;
  stf::Channel to_leaf, to_root;
};
