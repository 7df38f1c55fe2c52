// Where an operation's data lives, decided once per operation when it
// resolves its memory: host memory, or device memory (some of its data on
// the active device). The exchange's skeleton (exchange.cpp) is written once
// over a memory's hooks (hooks.h); a Memory runs the skeleton built for its
// hooks, so the skeleton never asks where the data is, and on host memory
// its hooks compile to nothing.
#pragma once

#include "ops/operation.h"

namespace stf {

class Memory {
 public:
  virtual ~Memory() = default;
  virtual int one_way_begin(stf_request r, Direction d) const = 0;
  virtual int one_way_end(stf_request r, Direction d) const = 0;
  virtual int fetch_begin(stf_request r) const = 0;
  virtual int fetch_end(stf_request r) const = 0;
  // A model C operation's sends, their turn come (deferred_sends.h).
  virtual int post_deferred_sends(stf_request r) const = 0;
};

extern const Memory &host_memory;    // exchange.cpp
extern const Memory &device_memory;  // exchange.cpp

// r->memory for a's data (and, on a device, r->device: the slot's device
// part and the device kernels). memory.cpp, which asks the active device.
int resolve_memory(const OpArgs &a, stf_request r);
// Whether a's data lies in host memory (false too where the device cannot
// be asked: a begin's resolve_memory then says why).
bool on_host(const OpArgs &a);

}  // namespace stf
