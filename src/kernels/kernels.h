// Memory kernels for one unit type and one op: pack, unpack, local scatter
// and fetch-and-op. The plan and transports call only these; they never look
// at element types themselves.
#pragma once

#include <cstddef>

#include "starforest.h"

namespace stf {

// Which units a message (or the self part) touches, in message order, in the
// cheapest form the pattern allows (plan/index_analysis.h finds it):
//   contiguous: unit start + i; no array
//   strided:    start + X*Y*k + X*j + i for 0 <= i < dx, 0 <= j < dy,
//               0 <= k < dz (i fastest): a box of dx*dy*dz units inside an
//               array whose rows hold X units and whose planes hold Y rows;
//               six integers, no array (when dz == 1, Y is dy)
//   indexed:    idx[i]
enum class IndexKind : unsigned char { contiguous, strided, indexed };

struct IndexList {
  stf_int n = 0;
  IndexKind kind = IndexKind::contiguous;
  stf_int start = 0;
  stf_int dx = 0, dy = 1, dz = 1, X = 0, Y = 0;
  const stf_int *idx = nullptr;
  // Some unit appears more than once (indexed lists only). Parallel writers
  // need atomics exactly for such destination lists; serial code ignores it.
  bool has_duplicates = false;

  static IndexList range(stf_int start, stf_int n);
  static IndexList box(stf_int start, stf_int dx, stf_int dy, stf_int dz, stf_int X, stf_int Y);
  static IndexList array(const stf_int *idx, stf_int n, bool has_duplicates);
  // Unit of position i (any pattern; slow for strided: kernels walk instead).
  stf_int at(stf_int i) const;
};

// Inline: the operations build lists for every call into the kernels.
inline IndexList IndexList::range(stf_int start, stf_int n) {
  IndexList l;
  l.n = n;
  l.start = start;
  return l;
}
inline IndexList IndexList::box(stf_int start, stf_int dx, stf_int dy, stf_int dz, stf_int X, stf_int Y) {
  IndexList l;
  l.n = dx * dy * dz;
  l.kind = IndexKind::strided;
  l.start = start;
  l.dx = dx, l.dy = dy, l.dz = dz, l.X = X, l.Y = Y;
  return l;
}
inline IndexList IndexList::array(const stf_int *idx, stf_int n, bool has_duplicates) {
  IndexList l;
  l.n = n;
  l.kind = IndexKind::indexed;
  l.idx = idx;
  l.has_duplicates = has_duplicates;
  return l;
}

// Whether writes through dst must be atomic: only when the kernel's index
// range is spread over threads and dst names a unit twice. The serial host
// kernels never need them; a parallel executor picks the atomic functors of
// kernels/functors.h by this.
inline bool needs_atomics(const IndexList &dst, bool parallel) { return parallel && dst.has_duplicates; }

// Where unit u lies in an array of units `bytes` apart.
inline char *at(void *base, stf_int u, std::size_t bytes) {
  return static_cast<char *>(base) + static_cast<std::size_t>(u) * bytes;
}
inline const char *at(const void *base, stf_int u, std::size_t bytes) {
  return static_cast<const char *>(base) + static_cast<std::size_t>(u) * bytes;
}

// What one unit (an MPI datatype) is, decoded once and cached.
struct Unit {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  std::size_t extent = 0;        // distance between consecutive units in user memory
  std::size_t packed_bytes = 0;  // bytes one unit occupies in a message buffer
  int base = -1;                 // element type (internal enum in kernels.cpp); -1: opaque
  int count = 0;                 // elements of the base type per unit (0 if opaque)
  bool named = false;            // a named (predefined) type: its handle is never freed
  bool opaque() const { return base < 0; }
};

// Decode an MPI datatype (cached: builtin types in a table, derived types
// through an MPI attribute that dies with the type). STF_ERR_TYPE for
// MPI_DATATYPE_NULL or types that cannot be used (zero size, negative lb).
int decode_unit(MPI_Datatype type, const Unit **unit);

// Serial host kernels (increasing i, no atomics), specialised per index
// pattern and unit block size.
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
// The same number on every rank for the same predefined op; -1 for a
// user-defined one (whose handles cannot be compared across ranks).
int op_id(MPI_Op op);

}  // namespace stf
