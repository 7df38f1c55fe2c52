// Kernel tables: for each (element type, op) one static Kernels entry whose
// functions are instantiated from the functors below.
//
// Each kernel body is written once as a functor over the index i of a unit in
// the IndexList; host kernels are plain loops over it. The functors avoid
// host-only calls so the same bodies can later run from CUDA kernels or a
// thread pool. Opaque units and user-defined ops need MPI and stay host-only.
#include <array>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/error.h"
#include "kernels/kernels.h"
#include "kernels/ops.h"
#include "kernels/portability.h"

namespace stf {
namespace {

// ---- functors -------------------------------------------------------------

// Bytes of one word for type-agnostic copies. Alignment 1, so any address is
// valid; copies of it still compile to single loads and stores.
template <int W>
struct Word {
  unsigned char b[W];
};

STF_HOST_DEVICE inline stf_int index_at(const IndexList &l, stf_int i) {
  return l.idx ? l.idx[i] : l.start + i;
}
// First element of unit u when every unit has n elements (size_t: no overflow).
STF_HOST_DEVICE inline std::size_t first(stf_int u, stf_int n) {
  return static_cast<std::size_t>(u) * static_cast<std::size_t>(n);
}

template <class T>
struct PackFn {
  const T *data;
  T *buf;
  IndexList idx;
  stf_int n;  // elements per unit
  STF_HOST_DEVICE void operator()(stf_int i) const {
    const T *d = data + first(index_at(idx, i), n);
    T *b = buf + first(i, n);
    for (stf_int e = 0; e < n; ++e) b[e] = d[e];
  }
};

template <class T, class Op>
struct UnpackFn {
  const T *buf;
  T *data;
  IndexList idx;
  stf_int n;
  STF_HOST_DEVICE void operator()(stf_int i) const {
    T *d = data + first(index_at(idx, i), n);
    const T *b = buf + first(i, n);
    for (stf_int e = 0; e < n; ++e) Op::apply(d[e], b[e]);
  }
};

template <class T, class Op>
struct ScatterFn {
  const T *src;
  IndexList srcidx;
  T *dst;
  IndexList dstidx;
  stf_int n;
  STF_HOST_DEVICE void operator()(stf_int i) const {
    const T *s = src + first(index_at(srcidx, i), n);
    T *d = dst + first(index_at(dstidx, i), n);
    for (stf_int e = 0; e < n; ++e) Op::apply(d[e], s[e]);
  }
};

template <class T, class Op>
struct FetchFn {
  T *data;
  IndexList idx;
  T *buf;
  stf_int n;
  STF_HOST_DEVICE void operator()(stf_int i) const {
    T *d = data + first(index_at(idx, i), n);
    T *b = buf + first(i, n);
    for (stf_int e = 0; e < n; ++e) {
      T old = d[e];
      Op::apply(d[e], b[e]);
      b[e] = old;
    }
  }
};

// Serial host execution: increasing i, which the duplicate-index semantics need.
template <class F>
void host_for(stf_int n, const F &f) {
  for (stf_int i = 0; i < n; ++i) f(i);
}

// ---- non-opaque units: plain copies, typed ops ------------------------------

// Call f(Word<W>{}) with the widest word that divides the unit extent.
template <class F>
void by_width(std::size_t extent, F &&f) {
  if (extent % 8 == 0)
    f(Word<8>{});
  else if (extent % 4 == 0)
    f(Word<4>{});
  else if (extent % 2 == 0)
    f(Word<2>{});
  else
    f(Word<1>{});
}
template <class W>
stf_int words(const Unit &u) {
  return static_cast<stf_int>(u.extent / sizeof(W));
}

const char *unit_ptr(const void *p, stf_int u, std::size_t bytes) {
  return static_cast<const char *>(p) + static_cast<std::size_t>(u) * bytes;
}
char *unit_ptr(void *p, stf_int u, std::size_t bytes) {
  return static_cast<char *>(p) + static_cast<std::size_t>(u) * bytes;
}

// The packed form of a non-opaque unit is its memory image, whatever the op.
void pack_plain(const Unit &u, IndexList idx, const void *data, void *buf) {
  if (idx.n <= 0) return;
  if (!idx.idx) {
    std::memcpy(buf, unit_ptr(data, idx.start, u.extent), static_cast<std::size_t>(idx.n) * u.extent);
    return;
  }
  by_width(u.extent, [&](auto w) {
    using W = decltype(w);
    host_for(idx.n, PackFn<W>{static_cast<const W *>(data), static_cast<W *>(buf), idx, words<W>(u)});
  });
}

// MPI_REPLACE and MPI_NO_OP on any non-opaque unit: byte copies, no types.
template <template <class> class Op>
struct Plain {
  static constexpr bool kReplace = std::is_same<Op<int>, OpReplace<int>>::value;
  static constexpr bool kNoOp = std::is_same<Op<int>, OpNoOp<int>>::value;

  static void unpack(const Unit &u, IndexList idx, const void *buf, void *data, MPI_Op) {
    if (idx.n <= 0 || kNoOp) return;
    if (kReplace && !idx.idx) {
      std::memcpy(unit_ptr(data, idx.start, u.extent), buf, static_cast<std::size_t>(idx.n) * u.extent);
      return;
    }
    by_width(u.extent, [&](auto w) {
      using W = decltype(w);
      host_for(idx.n, UnpackFn<W, Op<W>>{static_cast<const W *>(buf), static_cast<W *>(data), idx, words<W>(u)});
    });
  }
  static void scatter(const Unit &u, IndexList srcidx, const void *src, IndexList dstidx, void *dst, MPI_Op) {
    if (srcidx.n <= 0 || kNoOp) return;
    if (kReplace && !srcidx.idx && !dstidx.idx) {
      const std::size_t bytes = static_cast<std::size_t>(srcidx.n) * u.extent;
      const char *s = unit_ptr(src, srcidx.start, u.extent);
      char *d = unit_ptr(dst, dstidx.start, u.extent);
      if (s + bytes <= d || d + bytes <= s) {  // overlap keeps the loop's semantics
        std::memcpy(d, s, bytes);
        return;
      }
    }
    by_width(u.extent, [&](auto w) {
      using W = decltype(w);
      host_for(srcidx.n, ScatterFn<W, Op<W>>{static_cast<const W *>(src), srcidx, static_cast<W *>(dst), dstidx,
                                             words<W>(u)});
    });
  }
  static void fetch_and_op(const Unit &u, IndexList idx, void *data, void *buf, MPI_Op) {
    if (idx.n <= 0) return;
    by_width(u.extent, [&](auto w) {
      using W = decltype(w);
      host_for(idx.n, FetchFn<W, Op<W>>{static_cast<W *>(data), idx, static_cast<W *>(buf), words<W>(u)});
    });
  }
  static constexpr Kernels k{pack_plain, unpack, scatter, fetch_and_op};
};

// A builtin op on units of u.count elements of T.
template <class T, template <class> class Op>
struct Typed {
  static void unpack(const Unit &u, IndexList idx, const void *buf, void *data, MPI_Op) {
    host_for(idx.n, UnpackFn<T, Op<T>>{static_cast<const T *>(buf), static_cast<T *>(data), idx, u.count});
  }
  static void scatter(const Unit &u, IndexList srcidx, const void *src, IndexList dstidx, void *dst, MPI_Op) {
    host_for(srcidx.n,
             ScatterFn<T, Op<T>>{static_cast<const T *>(src), srcidx, static_cast<T *>(dst), dstidx, u.count});
  }
  static void fetch_and_op(const Unit &u, IndexList idx, void *data, void *buf, MPI_Op) {
    host_for(idx.n, FetchFn<T, Op<T>>{static_cast<T *>(data), idx, static_cast<T *>(buf), u.count});
  }
  static constexpr Kernels k{pack_plain, unpack, scatter, fetch_and_op};
};

// User-defined op on a non-opaque unit: MPI_Reduce_local(contribution, target)
// computes target = contribution op target.
void unpack_user(const Unit &u, IndexList idx, const void *buf, void *data, MPI_Op op) {
  for (stf_int i = 0; i < idx.n; ++i)
    MPI_Reduce_local(unit_ptr(buf, i, u.extent), unit_ptr(data, idx.at(i), u.extent), 1, u.type, op);
}
void scatter_user(const Unit &u, IndexList srcidx, const void *src, IndexList dstidx, void *dst, MPI_Op op) {
  for (stf_int i = 0; i < srcidx.n; ++i)
    MPI_Reduce_local(unit_ptr(src, srcidx.at(i), u.extent), unit_ptr(dst, dstidx.at(i), u.extent), 1, u.type, op);
}
void fetch_user(const Unit &u, IndexList idx, void *data, void *buf, MPI_Op op) {
  if (idx.n <= 0) return;
  std::vector<char> old(u.extent);
  for (stf_int i = 0; i < idx.n; ++i) {
    char *d = unit_ptr(data, idx.at(i), u.extent), *b = unit_ptr(buf, i, u.extent);
    std::memcpy(old.data(), d, u.extent);
    MPI_Reduce_local(b, d, 1, u.type, op);
    std::memcpy(b, old.data(), u.extent);
  }
}
constexpr Kernels kUserKernels{pack_plain, unpack_user, scatter_user, fetch_user};

// ---- opaque units: MPI_Pack/MPI_Unpack, one slot of packed_bytes per unit ----

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
    pack_unit(u, unit_ptr(data, idx.at(i), u.extent), unit_ptr(buf, i, u.packed_bytes));
}
void unpack_opaque(const Unit &u, IndexList idx, const void *buf, void *data, MPI_Op) {
  for (stf_int i = 0; i < idx.n; ++i)
    unpack_unit(u, unit_ptr(buf, i, u.packed_bytes), unit_ptr(data, idx.at(i), u.extent));
}
void scatter_opaque(const Unit &u, IndexList srcidx, const void *src, IndexList dstidx, void *dst, MPI_Op) {
  if (srcidx.n <= 0) return;
  std::vector<char> tmp(u.packed_bytes);
  for (stf_int i = 0; i < srcidx.n; ++i) {
    pack_unit(u, unit_ptr(src, srcidx.at(i), u.extent), tmp.data());
    unpack_unit(u, tmp.data(), unit_ptr(dst, dstidx.at(i), u.extent));
  }
}
// kReplace false: MPI_NO_OP, fetch only.
template <bool kReplace>
void fetch_opaque(const Unit &u, IndexList idx, void *data, void *buf, MPI_Op) {
  if (idx.n <= 0) return;
  std::vector<char> old(u.packed_bytes);
  for (stf_int i = 0; i < idx.n; ++i) {
    char *d = unit_ptr(data, idx.at(i), u.extent), *b = unit_ptr(buf, i, u.packed_bytes);
    pack_unit(u, d, old.data());
    if (kReplace) unpack_unit(u, b, d);
    std::memcpy(b, old.data(), u.packed_bytes);
  }
}
void nothing_unpack(const Unit &, IndexList, const void *, void *, MPI_Op) {}
void nothing_scatter(const Unit &, IndexList, const void *, IndexList, void *, MPI_Op) {}
constexpr Kernels kOpaqueReplace{pack_opaque, unpack_opaque, scatter_opaque, fetch_opaque<true>};
constexpr Kernels kOpaqueNoOp{pack_opaque, nothing_unpack, nothing_scatter, fetch_opaque<false>};

// ---- dispatch ------------------------------------------------------------------

enum OpId {
  kOpSum, kOpProd, kOpMax, kOpMin, kOpLand, kOpLor, kOpLxor, kOpBand, kOpBor, kOpBxor, kOpMaxloc, kOpMinloc,
  kNumTypedOps,  // ops below are not per element type
  kOpReplace = kNumTypedOps, kOpNoOp, kOpNull
};

template <int O> struct OpOf;
template <> struct OpOf<kOpSum> { template <class T> using fn = OpSum<T>; };
template <> struct OpOf<kOpProd> { template <class T> using fn = OpProd<T>; };
template <> struct OpOf<kOpMax> { template <class T> using fn = OpMax<T>; };
template <> struct OpOf<kOpMin> { template <class T> using fn = OpMin<T>; };
template <> struct OpOf<kOpLand> { template <class T> using fn = OpLand<T>; };
template <> struct OpOf<kOpLor> { template <class T> using fn = OpLor<T>; };
template <> struct OpOf<kOpLxor> { template <class T> using fn = OpLxor<T>; };
template <> struct OpOf<kOpBand> { template <class T> using fn = OpBand<T>; };
template <> struct OpOf<kOpBor> { template <class T> using fn = OpBor<T>; };
template <> struct OpOf<kOpBxor> { template <class T> using fn = OpBxor<T>; };
template <> struct OpOf<kOpMaxloc> { template <class T> using fn = OpMaxloc<T>; };
template <> struct OpOf<kOpMinloc> { template <class T> using fn = OpMinloc<T>; };

// Which ops MPI defines for which kind of type (MPI-3.1 5.9.2).
constexpr bool defined(BaseKind k, int op) {
  switch (op) {
    case kOpSum: case kOpProd: return k == kInteger || k == kFloat || k == kComplex;
    case kOpMax: case kOpMin: return k == kInteger || k == kFloat;
    case kOpLand: case kOpLor: case kOpLxor: return k == kInteger || k == kBool;
    case kOpBand: case kOpBor: case kOpBxor: return k == kInteger || k == kByte;
    case kOpMaxloc: case kOpMinloc: return k == kPair;
    default: return false;
  }
}

template <class T, BaseKind K, int O>
constexpr const Kernels *entry() {
  if constexpr (defined(K, O))
    return &Typed<T, OpOf<O>::template fn>::k;
  else
    return nullptr;  // not instantiated: BAND on double would not compile
}
using Row = std::array<const Kernels *, kNumTypedOps>;
template <class T, BaseKind K, int... O>
constexpr Row row(std::integer_sequence<int, O...>) {
  return Row{{entry<T, K, O>()...}};
}

#define STF_ROW_(name, ctype, handle, kind) row<ctype, kind>(std::make_integer_sequence<int, kNumTypedOps>{}),
constexpr std::array<Row, kNumBaseTypes> kTable{{STF_BASE_TYPES(STF_ROW_)}};
#undef STF_ROW_

#define STF_NAME_(name, ctype, handle, kind) #handle,
constexpr const char *kBaseNames[kNumBaseTypes] = {STF_BASE_TYPES(STF_NAME_)};
#undef STF_NAME_

struct OpInfo {
  MPI_Op op;
  int id;
  const char *name;
};
// Searched linearly: MPI_Op handles are not compile-time constants in every
// MPI, and 15 pointer compares cost less than hashing.
const OpInfo *find_op(MPI_Op op) {
  static const OpInfo ops[] = {
      {MPI_SUM, kOpSum, "MPI_SUM"},       {MPI_PROD, kOpProd, "MPI_PROD"},
      {MPI_MAX, kOpMax, "MPI_MAX"},       {MPI_MIN, kOpMin, "MPI_MIN"},
      {MPI_REPLACE, kOpReplace, "MPI_REPLACE"},
      {MPI_LAND, kOpLand, "MPI_LAND"},    {MPI_LOR, kOpLor, "MPI_LOR"},
      {MPI_LXOR, kOpLxor, "MPI_LXOR"},    {MPI_BAND, kOpBand, "MPI_BAND"},
      {MPI_BOR, kOpBor, "MPI_BOR"},       {MPI_BXOR, kOpBxor, "MPI_BXOR"},
      {MPI_MAXLOC, kOpMaxloc, "MPI_MAXLOC"}, {MPI_MINLOC, kOpMinloc, "MPI_MINLOC"},
      {MPI_NO_OP, kOpNoOp, "MPI_NO_OP"},  {MPI_OP_NULL, kOpNull, "MPI_OP_NULL"}};
  for (const OpInfo &o : ops)
    if (o.op == op) return &o;
  return nullptr;
}

}  // namespace

const char *op_name(MPI_Op op) {
  const OpInfo *o = find_op(op);
  return o ? o->name : "user-defined MPI_Op";
}

int get_kernels(const Unit &unit, MPI_Op op, const Kernels **kernels) {
  if (!kernels) return set_error(STF_ERR_NULL, "get_kernels: kernels is NULL");
  if (unit.base >= kNumBaseTypes || (!unit.opaque() && (unit.count <= 0 || unit.packed_bytes != unit.extent)))
    return set_error(STF_ERR_INTERNAL, "get_kernels: malformed unit (base %d, count %d)", unit.base, unit.count);
  const OpInfo *o = find_op(op);
  if (o && o->id == kOpNull) return set_error(STF_ERR_OP, "op is MPI_OP_NULL");
  if (o && o->id == kOpReplace) {
    *kernels = unit.opaque() ? &kOpaqueReplace : &Plain<OpReplace>::k;
    return STF_SUCCESS;
  }
  if (o && o->id == kOpNoOp) {
    *kernels = unit.opaque() ? &kOpaqueNoOp : &Plain<OpNoOp>::k;
    return STF_SUCCESS;
  }
  if (unit.opaque())
    return set_error(STF_ERR_TYPE,
                     "%s needs a unit of one builtin type (a builtin or contiguous derived datatype); "
                     "this datatype supports only MPI_REPLACE",
                     op_name(op));
  if (!o) {
    *kernels = &kUserKernels;
    return STF_SUCCESS;
  }
  const Kernels *k = kTable[unit.base][o->id];
  if (!k) {
    if (unit.count == 1)
      return set_error(STF_ERR_OP, "%s is not defined for %s", o->name, kBaseNames[unit.base]);
    return set_error(STF_ERR_OP, "%s is not defined for %s (unit of %d elements)", o->name,
                     kBaseNames[unit.base], unit.count);
  }
  *kernels = k;
  return STF_SUCCESS;
}

}  // namespace stf
