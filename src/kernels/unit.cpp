// decode_unit(): what an MPI datatype is, as far as the kernels care.
//
// Builtin datatypes resolve through a table built once. Derived datatypes are
// decoded once and the Unit is cached as an MPI attribute on the type, so it
// dies with the type (a freed handle that MPI reuses never sees a stale Unit).
#include <climits>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "kernels/kernels.h"
#include "kernels/ops.h"

namespace stf {
namespace {

// Largest unit (in bytes) whose memory layout we verify by packing; larger
// derived types are treated as opaque, which is always correct.
constexpr MPI_Aint kMaxVerifiedExtent = MPI_Aint(64) << 20;

struct Registry {
  std::unordered_map<MPI_Datatype, Unit> builtin;  // immutable after construction
  std::mutex mutex;                                // guards others and attribute insertion
  std::unordered_map<MPI_Datatype, Unit> others;   // named types outside the table
  int keyval = MPI_KEYVAL_INVALID;
  MPI_Comm comm = MPI_COMM_NULL;  // MPI_COMM_SELF dup that returns errors instead of aborting
};

int delete_unit(MPI_Datatype, int, void *value, void *) {
  delete static_cast<Unit *>(value);
  return MPI_SUCCESS;
}

int free_comm(MPI_Comm, int, void *value, void *) {
  MPI_Comm *comm = static_cast<MPI_Comm *>(value);
  MPI_Comm_free(comm);
  delete comm;
  return MPI_SUCCESS;
}

// A unit's size in bytes, where MPI_Type_size says MPI_UNDEFINED (above
// INT_MAX): its large-count query names it, and the unit is refused (the
// kernels pack opaque units with MPI_Pack, whose positions are ints).
int check_size(MPI_Datatype type, int size, const char *name) {
  if (size > 0) return STF_SUCCESS;
  MPI_Count bytes = 0;
  STF_MPI(MPI_Type_size_x(type, &bytes));
  if (bytes > INT_MAX)
    return set_error(STF_ERR_TYPE, "datatype%s%s has %lld bytes: units of more than %d bytes are not supported",
                     *name ? " " : "", name, static_cast<long long>(bytes), INT_MAX);
  return set_error(STF_ERR_TYPE, "datatype%s%s has size 0", *name ? " " : "", name);
}

// Unit of a named type; base -1 makes it opaque.
int named_unit(MPI_Datatype type, int base, std::size_t csize, const char *name, Unit *unit) {
  int size = 0;
  MPI_Aint lb = 0, extent = 0;
  STF_MPI(MPI_Type_size(type, &size));
  STF_MPI(MPI_Type_get_extent(type, &lb, &extent));
  STF_CHECK(check_size(type, size, name));
  unit->type = type;
  unit->named = true;
  unit->extent = static_cast<std::size_t>(extent);
  // The C type must match MPI's layout exactly, or the kernels would misread it.
  if (base >= 0 && lb == 0 && unit->extent == csize) {
    unit->base = base;
    unit->count = 1;
    unit->packed_bytes = unit->extent;
  } else {
    int packed = 0;
    STF_MPI(MPI_Pack_size(1, type, MPI_COMM_SELF, &packed));
    unit->base = -1;
    unit->count = 0;
    unit->packed_bytes = static_cast<std::size_t>(packed);
  }
  return STF_SUCCESS;
}

Registry &registry() {
  static Registry *reg = [] {
    auto *r = new Registry;  // never destroyed: MPI may call back into it at finalize
#define STF_ADD_(name, ctype, handle, kind)                                          \
  if (handle != MPI_DATATYPE_NULL && !r->builtin.count(handle)) {                    \
    Unit u;                                                                          \
    if (named_unit(handle, kBase_##name, sizeof(ctype), #handle, &u) == STF_SUCCESS) \
      r->builtin.emplace(handle, u);                                                 \
  }
    STF_BASE_TYPES(STF_ADD_)
#undef STF_ADD_
    // Aliases of listed types (in Open MPI most are the same handle already).
    const std::pair<MPI_Datatype, MPI_Datatype> aliases[] = {
        {MPI_LONG_LONG_INT, MPI_LONG_LONG}, {MPI_C_COMPLEX, MPI_C_FLOAT_COMPLEX}};
    for (const auto &a : aliases) {
      auto it = r->builtin.find(a.second);
      if (a.first != MPI_DATATYPE_NULL && it != r->builtin.end() && !r->builtin.count(a.first)) {
        Unit u = it->second;
        u.type = a.first;
        r->builtin.emplace(a.first, u);
      }
    }
    MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, delete_unit, &r->keyval, nullptr);
    // Private error-returning communicator for trial packs of user types, so an
    // uncommitted type is reported instead of aborting the job. Freed at
    // MPI_Finalize through an attribute on MPI_COMM_SELF.
    auto *comm = new MPI_Comm(MPI_COMM_NULL);
    if (MPI_Comm_dup(MPI_COMM_SELF, comm) == MPI_SUCCESS) {
      MPI_Comm_set_errhandler(*comm, MPI_ERRORS_RETURN);
      r->comm = *comm;
      int kv = MPI_KEYVAL_INVALID;
      MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_comm, &kv, nullptr);
      MPI_Comm_set_attr(MPI_COMM_SELF, kv, comm);
    } else {
      delete comm;
    }
    return r;
  }();
  return *reg;
}

// Collect the named leaf types of a derived type. Returns false on MPI failure.
bool collect_leaves(MPI_Datatype type, std::vector<MPI_Datatype> *leaves) {
  int ni = 0, na = 0, nd = 0, combiner = 0;
  if (MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS) return false;
  if (combiner == MPI_COMBINER_NAMED) {
    for (MPI_Datatype t : *leaves)
      if (t == type) return true;
    leaves->push_back(type);
    return true;
  }
  std::vector<int> ints(ni);
  std::vector<MPI_Aint> addrs(na);
  std::vector<MPI_Datatype> types(nd);
  if (MPI_Type_get_contents(type, ni, na, nd, ints.data(), addrs.data(), types.data()) != MPI_SUCCESS)
    return false;
  bool ok = true;
  for (MPI_Datatype t : types) {
    if (ok) ok = collect_leaves(t, leaves);
    // get_contents hands out new references to derived types; named ones must not be freed.
    int ti = 0, ta = 0, td = 0, tc = 0;
    MPI_Type_get_envelope(t, &ti, &ta, &td, &tc);
    if (tc != MPI_COMBINER_NAMED) MPI_Type_free(&t);
  }
  return ok;
}

// Source byte offset of each packed byte of one unit of type, one byte of the
// offset per pass: pack a buffer whose byte j holds byte `pass` of j.
// Compares against expected(m) and returns true when every byte matches.
template <class Expected>
bool layout_matches(MPI_Comm comm, MPI_Datatype type, MPI_Aint extent, int size, Expected expected) {
  std::vector<unsigned char> src(static_cast<std::size_t>(extent)), out(static_cast<std::size_t>(size) + 64);
  for (int pass = 0; pass == 0 || (MPI_Aint(1) << (8 * pass)) < extent; ++pass) {
    for (MPI_Aint j = 0; j < extent; ++j) src[j] = static_cast<unsigned char>(j >> (8 * pass));
    int pos = 0;
    if (MPI_Pack(src.data(), 1, type, out.data(), static_cast<int>(out.size()), &pos, comm) != MPI_SUCCESS ||
        pos != size)
      return false;
    for (int m = 0; m < size; ++m)
      if (out[m] != static_cast<unsigned char>(expected(m) >> (8 * pass))) return false;
  }
  return true;
}

// Decode a derived (or unlisted named) type into *unit.
int decode_derived(const Registry &reg, MPI_Datatype type, Unit *unit) {
  int size = 0;
  MPI_Aint lb = 0, extent = 0, tlb = 0, textent = 0;
  STF_MPI(MPI_Type_size(type, &size));
  STF_CHECK(check_size(type, size, ""));
  STF_MPI(MPI_Type_get_extent(type, &lb, &extent));
  STF_MPI(MPI_Type_get_true_extent(type, &tlb, &textent));
  if (lb < 0) return set_error(STF_ERR_TYPE, "datatype has a negative lower bound (%ld)", (long)lb);
  // A zero-count pack fails on an uncommitted type without touching memory.
  char dummy = 0;
  int pos = 0, packed = 0;
  if (reg.comm == MPI_COMM_NULL ||
      MPI_Pack(&dummy, 0, type, &dummy, 1, &pos, reg.comm) != MPI_SUCCESS ||
      MPI_Pack_size(1, type, reg.comm, &packed) != MPI_SUCCESS)
    return set_error(STF_ERR_TYPE, "datatype cannot be packed (not committed?)");

  unit->type = type;
  unit->extent = static_cast<std::size_t>(extent);
  unit->base = -1;
  unit->count = 0;
  unit->packed_bytes = static_cast<std::size_t>(packed);

  // A dense array of k elements of one builtin base type B gets B's kernels.
  std::vector<MPI_Datatype> leaves;
  if (!collect_leaves(type, &leaves) || leaves.size() != 1) return STF_SUCCESS;
  auto it = reg.builtin.find(leaves[0]);
  if (it == reg.builtin.end() || it->second.opaque()) return STF_SUCCESS;
  const Unit &b = it->second;
  int bsize = 0;
  MPI_Aint btlb = 0, btextent = 0;
  STF_MPI(MPI_Type_size(b.type, &bsize));
  STF_MPI(MPI_Type_get_true_extent(b.type, &btlb, &btextent));
  const MPI_Aint bext = static_cast<MPI_Aint>(b.extent);
  if (size % bsize != 0) return STF_SUCCESS;
  const MPI_Aint k = size / bsize;
  if (lb != 0 || tlb != 0 || btlb != 0 || extent != k * bext || textent != (k - 1) * bext + btextent ||
      extent > kMaxVerifiedExtent)
    return STF_SUCCESS;
  // Sizes and bounds fit, but an indexed type could still permute or overlap
  // elements: check that the packed bytes come from exactly the places a
  // plain array of k B's would.
  std::vector<MPI_Aint> boff(static_cast<std::size_t>(bsize));
  for (int pass = 0; pass == 0 || (MPI_Aint(1) << (8 * pass)) < bext; ++pass) {
    std::vector<unsigned char> src(static_cast<std::size_t>(bext)), out(static_cast<std::size_t>(bsize));
    for (MPI_Aint j = 0; j < bext; ++j) src[j] = static_cast<unsigned char>(j >> (8 * pass));
    int p = 0;
    STF_MPI(MPI_Pack(src.data(), 1, b.type, out.data(), bsize, &p, reg.comm));
    for (int m = 0; m < bsize; ++m) boff[m] |= MPI_Aint(out[m]) << (8 * pass);
  }
  auto expected = [&](int m) { return (m / bsize) * bext + boff[m % bsize]; };
  if (!layout_matches(reg.comm, type, extent, size, expected)) return STF_SUCCESS;
  unit->base = b.base;
  unit->count = static_cast<int>(k);
  unit->packed_bytes = unit->extent;
  return STF_SUCCESS;
}

}  // namespace

int decode_unit(MPI_Datatype type, const Unit **unit) {
  if (!unit) return set_error(STF_ERR_NULL, "decode_unit: unit is NULL");
  if (type == MPI_DATATYPE_NULL) return set_error(STF_ERR_TYPE, "datatype is MPI_DATATYPE_NULL");
  // Operations pass the same builtin type again and again; builtin handles
  // are never freed, so the last one found stays right.
  thread_local const Unit *last_builtin = nullptr;
  if (last_builtin && last_builtin->type == type) {
    *unit = last_builtin;
    return STF_SUCCESS;
  }
  Registry &reg = registry();
  auto it = reg.builtin.find(type);
  if (it != reg.builtin.end()) {
    *unit = last_builtin = &it->second;
    return STF_SUCCESS;
  }

  int ni = 0, na = 0, nd = 0, combiner = 0;
  STF_MPI(MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner));
  if (combiner == MPI_COMBINER_NAMED) {
    // Other named types (MPI_PACKED, Fortran, C++ types): opaque, REPLACE only.
    std::lock_guard<std::mutex> lock(reg.mutex);
    auto o = reg.others.find(type);
    if (o == reg.others.end()) {
      char name[MPI_MAX_OBJECT_NAME] = "named datatype";
      int len = 0;
      MPI_Type_get_name(type, name, &len);
      Unit u;
      STF_CHECK(named_unit(type, -1, 0, name, &u));
      o = reg.others.emplace(type, u).first;
    }
    *unit = &o->second;  // unordered_map nodes are stable
    return STF_SUCCESS;
  }

  void *cached = nullptr;
  int flag = 0;
  STF_MPI(MPI_Type_get_attr(type, reg.keyval, &cached, &flag));
  if (flag) {
    *unit = static_cast<const Unit *>(cached);
    return STF_SUCCESS;
  }
  // Decode under the lock so that two threads never both attach a Unit (the
  // second set_attr would delete the first while its caller still holds it).
  std::lock_guard<std::mutex> lock(reg.mutex);
  STF_MPI(MPI_Type_get_attr(type, reg.keyval, &cached, &flag));
  if (!flag) {
    auto *u = new Unit;
    int rc = decode_derived(reg, type, u);
    if (rc != STF_SUCCESS) {
      delete u;
      return rc;
    }
    int mrc = MPI_Type_set_attr(type, reg.keyval, u);
    if (mrc != MPI_SUCCESS) {
      delete u;
      return mpi_error(mrc, "MPI_Type_set_attr");
    }
    cached = u;
  }
  *unit = static_cast<const Unit *>(cached);
  return STF_SUCCESS;
}

}  // namespace stf
