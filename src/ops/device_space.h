// Operations on device data (include/starforest.h, "devices"): the device
// memory space of an exchange, and the steps around it that only device
// data needs.
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
  // Model C: sends posted from end (or an earlier end) after ready_event.
  bool send_deferred = false, send_waits_event = false;
  Direction send_dir = Direction::root_to_leaf;
  // Fetch-and-op on device data runs on host copies: the user's pointers.
  const void *user_src = nullptr;
  void *user_dst = nullptr, *user_update = nullptr;
  ~DeviceState();
};

// Begin of an operation on device data: the slot's previous device work,
// its events, model A's device sync, the data path (staged for fetch-and-op).
int device_begin_work(stf_request r, bool staged);
// The model's wait before MPI reads what the stream fills (sends) or writes
// user device memory the stream may still read (receives).
int device_wait_before_mpi(stf_request r, const Flow &f, bool enqueued);
// Model C: whether this operation's sends wait for end; if so, instead of
// posting them, begin records the packing event, and as its last step
// queues them for post_deferred_sends (a failed begin leaves nothing queued).
bool device_defers_sends(stf_request r);
int device_defer_sends(stf_request r, const Flow &f);
void device_queue_deferred_sends(stf_request r, Direction d);
// The self part when some side is on the device (the skip rule is the
// exchange's): one scatter kernel, or a gather and a copy across.
int device_self_part(stf_request r, const Flow &f);
// End of an operation on device data: a self part finishing on the host,
// then model A's wait or the slot's done event (and, for memory a transport
// lends, a stream wait: the unpack must have read it before it is released).
int device_end_work(stf_request r, const Flow &f);
// STF_DEVICE_CHECK_MPI=1: every buffer handed to MPI is looked up.
int check_for_mpi(stf_request r, const Messages &m, const void *const *bufs);
// Post the deferred sends of the queue, oldest first, up to and including
// upto (all of them if NULL; nothing if upto is not deferred), so that sends
// always leave in begin order. Every operation calls it; the queue is
// empty unless some operation runs stream model C.
int post_queued_sends(DeferredSends &queue, stf_request upto);
inline int post_deferred_sends(DeferredSends &queue, stf_request upto) {
  return queue.empty() ? STF_SUCCESS : post_queued_sends(queue, upto);
}
// Fetch-and-op on device data runs the host fetch on pinned host copies:
// copied down in begin, results copied back in end.
int device_stage_fetch_in(stf_request r);
int device_stage_fetch_out(stf_request r);

}  // namespace stf
