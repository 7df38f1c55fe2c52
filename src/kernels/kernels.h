// Memory kernels for one unit type and one op: pack, unpack, local scatter
// and fetch-and-op. The plan and transports call only these; they never look
// at element types themselves.
#pragma once

#include <cstddef>

#include "starforest.h"

namespace stf {

// A list of unit offsets: an explicit array, or the range start..start+n-1
// when idx is nullptr.
struct IndexList {
  stf_int n = 0;
  stf_int start = 0;
  const stf_int *idx = nullptr;
  stf_int at(stf_int i) const { return idx ? idx[i] : start + i; }
};

// What one unit (an MPI datatype) is, decoded once and cached.
struct Unit {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  std::size_t extent = 0;        // distance between consecutive units in user memory
  std::size_t packed_bytes = 0;  // bytes one unit occupies in a message buffer
  int base = -1;                 // element type (internal enum in kernels.cpp); -1: opaque
  int count = 0;                 // elements of the base type per unit (0 if opaque)
  bool opaque() const { return base < 0; }
};

// Decode an MPI datatype (cached: builtin types in a table, derived types
// through an MPI attribute that dies with the type). STF_ERR_TYPE for
// MPI_DATATYPE_NULL or types that cannot be used (zero size, negative lb).
int decode_unit(MPI_Datatype type, const Unit **unit);

struct Kernels {
  // buf[i] = data[idx.at(i)]
  void (*pack)(const Unit &u, IndexList idx, const void *data, void *buf);
  // data[idx.at(i)] = data[idx.at(i)] op buf[i], for i in increasing order
  void (*unpack)(const Unit &u, IndexList idx, const void *buf, void *data, MPI_Op op);
  // dst[dstidx.at(i)] = dst[dstidx.at(i)] op src[srcidx.at(i)], in increasing i
  void (*scatter)(const Unit &u, IndexList srcidx, const void *src, IndexList dstidx, void *dst,
                  MPI_Op op);
  // for i in increasing order: old = data[idx.at(i)];
  //   data[idx.at(i)] = old op buf[i]; buf[i] = old
  void (*fetch_and_op)(const Unit &u, IndexList idx, void *data, void *buf, MPI_Op op);
};

// Kernels for (unit, op). STF_ERR_OP with a message naming the op and type
// when MPI does not define op on the unit's type (e.g. MPI_BAND on double);
// STF_ERR_TYPE when the unit is opaque and op is not MPI_REPLACE.
// Builtin ops are applied natively; user-defined ops via MPI_Reduce_local
// (contribution op old value).
int get_kernels(const Unit &unit, MPI_Op op, const Kernels **kernels);

// Human-readable name of a builtin op or datatype, for messages and views.
const char *op_name(MPI_Op op);

}  // namespace stf
