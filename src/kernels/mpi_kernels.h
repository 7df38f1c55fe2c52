// Kernels that go through MPI, a unit at a time on the host: user-defined
// ops (MPI_Reduce_local) on any non-opaque unit, and units that only
// MPI_Pack and MPI_Unpack understand (opaque: MPI_REPLACE and MPI_NO_OP).
// kernels.cpp hands them out.
#pragma once

#include "kernels/kernels.h"

namespace stf {

// A user-defined op's unpack, scatter and fetch-and-op (its pack is the
// plain copy of kernels.cpp).
void unpack_user(const Unit &u, IndexList idx, const void *buf, void *data, MPI_Op op);
void scatter_user(const Unit &u, IndexList srcidx, const void *src, IndexList dstidx, void *dst, MPI_Op op);
void fetch_user(const Unit &u, IndexList idx, void *data, void *buf, MPI_Op op);

// Opaque units with MPI_REPLACE, and with MPI_NO_OP (fetch only).
extern const Kernels opaque_replace_kernels;
extern const Kernels opaque_no_op_kernels;

}  // namespace stf
