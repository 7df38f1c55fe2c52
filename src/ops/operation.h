// The ops layer's entry points for the public operation calls (sf/): one
// operation begun on a set-up SF and ended by its request.
#pragma once

#include <string>

#include "ops/request.h"

namespace stf {

struct OpArgs {
  OpKind kind;
  MPI_Datatype type;
  MPI_Op op;
  const void *src;
  void *dst;
  void *update;
  int src_mem = -1, dst_mem = -1;  // stf_memtype, or -1: ask the device
  bool prepare = false;  // stf_bcast_init or stf_reduce_init: made, not begun
};
// The public call a's checks speak for: "bcast_begin", "reduce_init", ...
std::string begin_call_name(const OpArgs &a);

// The unit and kernels of a's (type, op): an undefined combination fails
// here, on every rank alike, before any of the operation's messages.
struct Resolved {
  const Unit *unit = nullptr;
  const Kernels *kernels = nullptr;
  const Kernels *copy = nullptr;  // MPI_REPLACE, for fetch-and-op
};
int resolve_unit(const OpArgs &a, Resolved *out);
// Slot r takes a's data and op and res's unit and kernels.
inline void hold_arguments(stf_request r, const OpArgs &a, const Resolved &res) {
  r->unit = res.unit;
  r->kernels = res.kernels;
  r->copy = res.copy;
  r->op = a.op;
  r->src = a.src;
  r->dst = a.dst;
  r->update = a.update;
}
// STF_ERR_NULL for NULL data where g has roots (leaves) the operation touches.
int check_data(const Graph &g, const OpArgs &a);

// Begin a on mover's plan (set up), on behalf of owner (the SF the user
// called: its counters, its request). *req is NULL on failure.
int begin_operation(Engine &owner, Engine &mover, const OpArgs &a, const Resolved &res, stf_request *req);
// A prepared operation (stf_bcast_init): begin_operation's checks and
// slot, nothing posted; start_operation posts it, each time anew, and its
// end leaves the slot prepared. A failed start leaves nothing posted.
int prepare_operation(Engine &owner, Engine &mover, const OpArgs &a, const Resolved &res, stf_request *req);
int start_operation(stf_request r);
// End the operation in slot r (take_request found it from the user's *req),
// *req becomes NULL (a prepared request's stays). A failed begin or end
// leaves the slot free (a prepared one prepared) and nothing posted, so the
// SF stays usable.
int end_operation(stf_request r, stf_request *req);
// stf_test: end slot r if its messages have arrived (*done = 1), else leave
// it in flight (*done = 0).
int test_operation(stf_request r, stf_request *req, int *done);

}  // namespace stf
