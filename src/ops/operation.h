// The ops layer's entry points for the public operation calls (sf/): one
// operation begun on a set-up SF and ended by its request.
#pragma once

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
};

// The unit and kernels of a's (type, op): an undefined combination fails
// here, on every rank alike, before anything is sent.
struct Resolved {
  const Unit *unit = nullptr;
  const Kernels *kernels = nullptr;
  const Kernels *copy = nullptr;  // MPI_REPLACE, for fetch-and-op
};
int resolve_unit(const OpArgs &a, Resolved *out);

// Begin a on mover's plan (set up), on behalf of owner (the SF the user
// called: its counters, its request). *req is NULL on failure.
int begin_operation(Engine &owner, Engine &mover, const OpArgs &a, const Resolved &res, stf_request *req);
// End the request *req of owner begun by kind; *req becomes NULL.
int end_operation(Engine &owner, stf_request *req, OpKind kind);
// stf_test: end *req (of any kind) if its messages have arrived (*done = 1),
// else leave it in flight (*done = 0).
int test_operation(Engine &owner, stf_request *req, int *done);

}  // namespace stf
