// Operations on device data (include/starforest.h, "devices"): the device
// memory space of an exchange, and the steps around it that only device
// data needs (DeviceHooks, hooks.h). Only the device side of the memory
// seam includes this header (device_space.cpp, memory.cpp).
//
// Two data paths: device-aware (device pointers go to MPI) and staged (pack
// on the device, one async copy to a pinned host buffer, MPI, one async
// copy back, unpack on the device; MPI never sees device memory). Packing,
// unpacking and the self part are kernel launches on the library stream.
//
// Three stream models say where the host waits (stf_stream_model):
//  A: device sync before anything reads the user's data, a stream sync before
//     MPI reads buffers the stream filled, and one at the end of end;
//  B: one stream sync in begin before MPI touches device memory, none in end;
//  C: no wait in begin: an event is recorded after packing, and the sends
//     are posted from end once it completed. Receives are posted in begin
//     (into library buffers, never straight into user device memory, which
//     the stream may still be reading), so messages can arrive early.
#pragma once

#include "device/device.h"
#include "device/device_kernels.h"
#include "ops/hooks.h"
#include "ops/space.h"

namespace stf {

// The device part of a request slot, kept between uses of the slot.
struct DeviceState {
  Device *dev = nullptr;  // the active device of the operation in flight
  const DeviceKernels *kernels = nullptr;
  DeviceBuffer send, recv, self;  // device pack buffers
  DeviceBuffer stage_send{true}, stage_recv{true}, stage_update{true};  // pinned host memory
  // After the slot's last device work (its next use waits for it before
  // reusing the buffers) and, in stream model C, after packing (end waits
  // for it before posting the sends).
  Event done_event = nullptr, ready_event = nullptr;
  Device *event_device = nullptr;  // the device that made the events
  bool pending = false;            // done_event recorded and maybe not reached
  bool self_to_host = false;       // self part: finish on the host in end
  bool staged = false;             // device data goes through stage_send/stage_recv
  // Model C: the deferred sends wait for ready_event before they are posted.
  bool send_waits_event = false;
  // Fetch-and-op on device data runs on host copies: the user's pointers.
  const void *user_src = nullptr;
  void *user_dst = nullptr, *user_update = nullptr;
  ~DeviceState();
};

}  // namespace stf
