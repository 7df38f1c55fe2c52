// The steps of an exchange that depend on where its data lives, as the
// skeleton (exchange.cpp) calls them, each unconditionally: one class of
// static hooks per memory. Host memory's are inline and do nothing but the
// self part's host kernel, so the skeleton built for them is the host path
// alone; device memory's are in device_space.cpp (this header includes no
// device header).
#pragma once

#include "ops/flow.h"

namespace stf {

// The self part by the host kernels (host_space.cpp).
void host_self_part(stf_request r, const Flow &f);

struct HostHooks {
  // Whether a transport may take a bcast or reduce whole (collectives on
  // the user's arrays, which only host memory allows).
  static constexpr bool whole_allowed = true;
  // Begin, before anything is aimed or packed.
  static int before_pack(stf_request) { return STF_SUCCESS; }
  // Every buffer about to be handed to the transport (a debugging check).
  static int check_for_mpi(stf_request, const Messages &, const void *const *) { return STF_SUCCESS; }
  // After packing, before the sends are posted (and, where messages may not
  // arrive early, the receives). enqueued: the packing queued work.
  static int before_mpi(stf_request, const Flow &, bool) { return STF_SUCCESS; }
  // Whether this operation's sends wait for end (model C); if so,
  // prepare_deferred_sends runs instead of posting them.
  static bool defers_sends(stf_request) { return false; }
  static int prepare_deferred_sends(stf_request, const Flow &) { return STF_SUCCESS; }
  // A deferred send's turn has come: before it is posted.
  static int before_deferred_post(stf_request) { return STF_SUCCESS; }
  // The self part (the skip rule is the skeleton's).
  static int self_part(stf_request r, const Flow &f) {
    host_self_part(r, f);
    return STF_SUCCESS;
  }
  // End, after the unpack and before the transport's memory is released.
  static int after_unpack(stf_request, const Flow &) { return STF_SUCCESS; }
  // Fetch-and-op runs on host memory: its data there in begin, back in end.
  static int fetch_in(stf_request) { return STF_SUCCESS; }
  static int fetch_out(stf_request) { return STF_SUCCESS; }
};

struct DeviceHooks {
  static constexpr bool whole_allowed = false;
  static int before_pack(stf_request r);
  static int check_for_mpi(stf_request r, const Messages &m, const void *const *bufs);
  static int before_mpi(stf_request r, const Flow &f, bool enqueued);
  static bool defers_sends(stf_request r);
  static int prepare_deferred_sends(stf_request r, const Flow &f);
  static int before_deferred_post(stf_request r);
  static int self_part(stf_request r, const Flow &f);
  static int after_unpack(stf_request r, const Flow &f);
  static int fetch_in(stf_request r);
  static int fetch_out(stf_request r);
};

}  // namespace stf
