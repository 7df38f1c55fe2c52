// User-defined ops and opaque units (mpi_kernels.h): loops over at(i) that
// hand each unit to MPI.
#include "kernels/mpi_kernels.h"

#include <cstring>
#include <vector>

namespace stf {

// User-defined op on a non-opaque unit: MPI_Reduce_local(contribution, target)
// computes target = contribution op target.
void unpack_user(const Unit &u, IndexList idx, const void *buf, void *data, MPI_Op op) {
  for (stf_int i = 0; i < idx.n; ++i)
    MPI_Reduce_local(at(buf, i, u.extent), at(data, idx.at(i), u.extent), 1, u.type, op);
}
void scatter_user(const Unit &u, IndexList srcidx, const void *src, IndexList dstidx, void *dst, MPI_Op op) {
  for (stf_int i = 0; i < srcidx.n; ++i)
    MPI_Reduce_local(at(src, srcidx.at(i), u.extent), at(dst, dstidx.at(i), u.extent), 1, u.type, op);
}
void fetch_user(const Unit &u, IndexList idx, void *data, void *buf, MPI_Op op) {
  if (idx.n <= 0) return;
  std::vector<char> old(u.extent);
  for (stf_int i = 0; i < idx.n; ++i) {
    char *d = at(data, idx.at(i), u.extent), *b = at(buf, i, u.extent);
    std::memcpy(old.data(), d, u.extent);
    MPI_Reduce_local(b, d, 1, u.type, op);
    std::memcpy(b, old.data(), u.extent);
  }
}

// ---- opaque units: MPI_Pack/MPI_Unpack, one slot of packed_bytes per unit ----

namespace {

void pack_unit(const Unit &u, const void *unit, void *slot) {
  int pos = 0;
  MPI_Pack(unit, 1, u.type, slot, static_cast<int>(u.packed_bytes), &pos, MPI_COMM_SELF);
}
void unpack_unit(const Unit &u, const void *slot, void *unit) {
  int pos = 0;
  MPI_Unpack(slot, static_cast<int>(u.packed_bytes), &pos, unit, 1, u.type, MPI_COMM_SELF);
}
void pack_opaque(const Unit &u, IndexList idx, const void *data, void *buf) {
  for (stf_int i = 0; i < idx.n; ++i)
    pack_unit(u, at(data, idx.at(i), u.extent), at(buf, i, u.packed_bytes));
}
void unpack_opaque(const Unit &u, IndexList idx, const void *buf, void *data, MPI_Op) {
  for (stf_int i = 0; i < idx.n; ++i)
    unpack_unit(u, at(buf, i, u.packed_bytes), at(data, idx.at(i), u.extent));
}
void scatter_opaque(const Unit &u, IndexList srcidx, const void *src, IndexList dstidx, void *dst, MPI_Op) {
  if (srcidx.n <= 0) return;
  std::vector<char> tmp(u.packed_bytes);
  for (stf_int i = 0; i < srcidx.n; ++i) {
    pack_unit(u, at(src, srcidx.at(i), u.extent), tmp.data());
    unpack_unit(u, tmp.data(), at(dst, dstidx.at(i), u.extent));
  }
}
// kReplace false: MPI_NO_OP, fetch only.
template <bool kReplace>
void fetch_opaque(const Unit &u, IndexList idx, void *data, void *buf, MPI_Op) {
  if (idx.n <= 0) return;
  std::vector<char> old(u.packed_bytes);
  for (stf_int i = 0; i < idx.n; ++i) {
    char *d = at(data, idx.at(i), u.extent), *b = at(buf, i, u.packed_bytes);
    pack_unit(u, d, old.data());
    if (kReplace) unpack_unit(u, b, d);
    std::memcpy(b, old.data(), u.packed_bytes);
  }
}
void nothing_unpack(const Unit &, IndexList, const void *, void *, MPI_Op) {}
void nothing_scatter(const Unit &, IndexList, const void *, IndexList, void *, MPI_Op) {}

}  // namespace

const Kernels opaque_replace_kernels{pack_opaque, unpack_opaque, scatter_opaque, fetch_opaque<true>};
const Kernels opaque_no_op_kernels{pack_opaque, nothing_unpack, nothing_scatter, fetch_opaque<false>};

}  // namespace stf
