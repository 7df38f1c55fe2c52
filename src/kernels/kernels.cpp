// Kernel tables: for each (element type, op) one static Kernels entry whose
// functions run the functors of kernels/functors.h serially on the host.
//
// Each call picks, at run time, the instantiation for its index pattern
// (contiguous, strided, indexed) and block size (1, 2, 4, 8 elements per unit
// or a generic count; sizes for copies, sums, MAX and MIN only), so each
// combination is its own tight loop. A local scatter is those pack and unpack
// loops in turn, through a small buffer. Opaque units and user-defined ops
// need MPI: mpi_kernels.cpp.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "core/error.h"
#include "kernels/functors.h"
#include "kernels/kernels.h"
#include "kernels/mpi_kernels.h"
#include "kernels/ops.h"

namespace stf {

stf_int IndexList::at(stf_int i) const {
  switch (kind) {
    case IndexKind::contiguous: return start + i;
    case IndexKind::strided: return Strided(*this).at(i);
    case IndexKind::indexed: break;
  }
  return idx[i];
}

namespace {

// ---- serial host walks ------------------------------------------------------
// g(i, unit) for i = 0..n-1 in increasing order, which the semantics of
// duplicate indices need. Strided boxes are nested loops: no divisions, and
// the innermost loop over a row is contiguous.

template <class G>
void walk(const Contig &p, stf_int n, G &&g, const void * = nullptr, std::size_t = 0) {
  for (stf_int i = 0; i < n; ++i) g(i, p.start + i);
}
template <class G>
void walk(const Strided &p, stf_int, G &&g, const void * = nullptr, std::size_t = 0) {
  stf_int i = 0;
  for (stf_int k = 0; k < p.dz; ++k)
    for (stf_int j = 0; j < p.dy; ++j) {
      const stf_int row = static_cast<stf_int>(p.start + p.XY * k + p.X * j);
      for (stf_int x = 0; x < p.dx; ++x) g(i++, row + x);
    }
}
template <class G>
// Indexed targets are scattered over memory and each one misses the cache:
// asking for the unit a few dozen positions ahead keeps several misses in
// flight (target: the array the indices point into, unit_bytes apart).
void walk(const Indexed &p, stf_int n, G &&g, const void *target = nullptr, std::size_t unit_bytes = 0) {
  constexpr stf_int ahead = 32;
  stf_int i = 0;
  if (target)
    for (; i + ahead < n; ++i) {
      __builtin_prefetch(static_cast<const char *>(target) + static_cast<std::size_t>(p.idx[i + ahead]) * unit_bytes);
      g(i, p.idx[i]);
    }
  for (; i < n; ++i) g(i, p.idx[i]);
}

// The units of a list in order, one at a time: a strided box steps its
// rows without a division per unit.
class Cursor {
 public:
  explicit Cursor(const IndexList &l) : p_(l), plane_(p_.box.start), row_(p_.box.start) {}
  stf_int next() {
    if (p_.kind == IndexKind::indexed) return p_.idx[i_++];
    if (p_.kind == IndexKind::contiguous) return p_.box.start + i_++;
    const stf_int u = static_cast<stf_int>(row_ + x_);
    if (++x_ == p_.box.dx) {
      x_ = 0;
      row_ += p_.box.X;
      if (++y_ == p_.box.dy) y_ = 0, plane_ += p_.box.XY, row_ = plane_;
    }
    return u;
  }

 private:
  const AnyPattern p_;
  stf_int i_ = 0, x_ = 0, y_ = 0;
  std::int64_t plane_, row_;
};

// ---- compile-time choices from run-time descriptions ------------------------

template <int N>
using BlockSize = std::integral_constant<int, N>;

// g(BlockSize<k>) for the specialised sizes, BlockSize<0> (generic) otherwise.
template <class G>
void with_block(stf_int n, G &&g) {
  switch (n) {
    case 1: return g(BlockSize<1>{});
    case 2: return g(BlockSize<2>{});
    case 4: return g(BlockSize<4>{});
    case 8: return g(BlockSize<8>{});
    default: return g(BlockSize<0>{});
  }
}
// Block sizes are specialised for the ops of halo exchanges and reductions
// (sums, MAX, MIN, plain copies); products, logical and bitwise ops and
// MAXLOC/MINLOC run the generic block: they are rare, and specialising them
// took 53 of this file's 121 s of compile, the build's longest.
template <class Op>
struct SpecialisedBlocks : std::false_type {};
template <class T>
struct SpecialisedBlocks<OpSum<T>> : std::true_type {};
template <class T>
struct SpecialisedBlocks<OpMax<T>> : std::true_type {};
template <class T>
struct SpecialisedBlocks<OpMin<T>> : std::true_type {};
template <class T>
struct SpecialisedBlocks<OpReplace<T>> : std::true_type {};
template <class Op, class G>
void with_block_for(stf_int n, G &&g) {
  if constexpr (SpecialisedBlocks<Op>::value)
    with_block(n, std::forward<G>(g));
  else
    g(BlockSize<0>{});
}
template <class G>
void with_pattern(const IndexList &l, G &&g) {
  switch (l.kind) {
    case IndexKind::contiguous: return g(Contig(l));
    case IndexKind::strided: return g(Strided(l));
    case IndexKind::indexed: return g(Indexed(l));
  }
}

// ---- the four kernels for units of bs elements of T ------------------------

template <class T>
void pack_units(stf_int bs, const IndexList &l, const void *data, void *buf) {
  with_block(bs, [&](auto b) {
    with_pattern(l, [&](auto p) {
      const PackFn<T, decltype(b)::value, decltype(p)> f{p, static_cast<const T *>(data), static_cast<T *>(buf),
                                                         Block<decltype(b)::value>(bs)};
      walk(p, l.n, [&](stf_int i, stf_int u) { f.apply(i, u); }, data, sizeof(T) * bs);
    });
  });
}

template <class T, class Op>
void unpack_units(stf_int bs, const IndexList &l, const void *buf, void *data) {
  with_block_for<Op>(bs, [&](auto b) {
    with_pattern(l, [&](auto p) {
      const UnpackFn<T, Op, decltype(b)::value, decltype(p)> f{p, static_cast<const T *>(buf), static_cast<T *>(data),
                                                               Block<decltype(b)::value>(bs)};
      walk(p, l.n, [&](stf_int i, stf_int u) { f.apply(i, u); }, data, sizeof(T) * bs);
    });
  });
}

// A strided source whose rows line up with the destination's (a contiguous
// destination, or a box with rows of the same length: a grid's
// local-to-global) goes row by row, each row pair a contiguous unpack that
// vectorises, instead of stepping a cursor per unit. Short rows keep the
// cursor: the per-row dispatch would cost more than it saves.
constexpr stf_int min_row_elements = 8;
bool rows_line_up(stf_int bs, const IndexList &s, const IndexList &d) {
  return s.kind == IndexKind::strided && static_cast<std::int64_t>(s.dx) * bs >= min_row_elements &&
         (d.kind == IndexKind::contiguous || (d.kind == IndexKind::strided && d.dx == s.dx));
}
// First unit of row r of a contiguous or strided list cut into rows of dx units.
std::int64_t row_start(const IndexList &l, stf_int dx, stf_int r) {
  if (l.kind == IndexKind::contiguous) return l.start + static_cast<std::int64_t>(r) * dx;
  return l.start + static_cast<std::int64_t>(l.X) * l.Y * (r / l.dy) + static_cast<std::int64_t>(l.X) * (r % l.dy);
}
template <class T, class Op>
void scatter_rows(stf_int bs, const IndexList &s, const void *src, const IndexList &d, void *dst) {
  const stf_int rows = s.n / s.dx;
  for (stf_int r = 0; r < rows; ++r)
    unpack_units<T, Op>(bs, IndexList::range(static_cast<stf_int>(row_start(d, s.dx, r)), s.dx),
                        static_cast<const T *>(src) + first(static_cast<stf_int>(row_start(s, s.dx, r)), bs), dst);
}

// Fetch-and-op is ordered by definition and runs once per fetch_and_op at the
// root, never on the halo path: patterns are specialised, the block size is
// not (a quarter of all instantiations saved).
template <class T, class Op>
void fetch_units(stf_int bs, const IndexList &l, void *data, void *buf) {
  with_pattern(l, [&](auto p) {
    const FetchFn<T, Op, 0, decltype(p)> f{p, static_cast<T *>(data), static_cast<T *>(buf), Block<0>(bs)};
    walk(p, l.n, [&](stf_int i, stf_int u) { f.apply(i, u); });
  });
}

// ---- non-opaque units: plain copies, typed ops ------------------------------

// One word of a unit for type-agnostic copies: packed (any address is valid)
// and may_alias (it may overlay any type), copied through its integer member
// so that runs of words vectorise, which a copy of a byte-array struct does not.
template <class U>
struct __attribute__((packed, may_alias)) Word {
  U v;
  Word() = default;
  Word(const Word &) = default;
  Word &operator=(const Word &o) {
    v = o.v;
    return *this;
  }
};

// Call f(Word<U>{}) with the widest word that divides the unit extent.
template <class F>
void by_width(std::size_t extent, F &&f) {
  if (extent % 8 == 0)
    f(Word<std::uint64_t>{});
  else if (extent % 4 == 0)
    f(Word<std::uint32_t>{});
  else if (extent % 2 == 0)
    f(Word<std::uint16_t>{});
  else
    f(Word<std::uint8_t>{});
}
template <class W>
stf_int words(const Unit &u) {
  return static_cast<stf_int>(u.extent / sizeof(W));
}

// Rows of a strided list hold dx consecutive units: a plain copy moves each
// row with one memcpy, which beats a per-unit loop once rows are long enough
// (host only; device executors use the functors). f(first unit of the row,
// position of the row in the message, bytes of the row).
constexpr std::size_t min_row_bytes = 64;
bool long_rows(const Unit &u, const IndexList &l) {
  return l.kind == IndexKind::strided && static_cast<std::size_t>(l.dx) * u.extent >= min_row_bytes;
}
template <class F>
void for_each_row(const Unit &u, const IndexList &l, F &&f) {
  const std::int64_t plane = static_cast<std::int64_t>(l.X) * l.Y;
  const std::size_t bytes = static_cast<std::size_t>(l.dx) * u.extent;
  stf_int i = 0;
  for (stf_int k = 0; k < l.dz; k++)
    for (stf_int j = 0; j < l.dy; j++, i += l.dx) f(l.start + plane * k + static_cast<std::int64_t>(l.X) * j, i, bytes);
}
std::size_t offset_of(std::int64_t unit, const Unit &u) { return static_cast<std::size_t>(unit) * u.extent; }

// The packed form of a non-opaque unit is its memory image, whatever the op.
void pack_plain(const Unit &u, IndexList idx, const void *data, void *buf) {
  if (idx.n <= 0) return;
  if (idx.kind == IndexKind::contiguous) {
    std::memcpy(buf, at(data, idx.start, u.extent), static_cast<std::size_t>(idx.n) * u.extent);
    return;
  }
  if (long_rows(u, idx)) {
    for_each_row(u, idx, [&](std::int64_t row, stf_int i, std::size_t bytes) {
      std::memcpy(at(buf, i, u.extent), static_cast<const char *>(data) + offset_of(row, u), bytes);
    });
    return;
  }
  by_width(u.extent, [&](auto w) { pack_units<decltype(w)>(words<decltype(w)>(u), idx, data, buf); });
}

// ---- local scatters: the pack and unpack kernels in turn ---------------------

using UnpackKernel = void (*)(const Unit &, IndexList, const void *, void *, MPI_Op);
constexpr std::size_t kChunkBytes = 8192;
constexpr stf_int kChunkUnits = 1024;

// Units i..i+c-1 of l (its cursor at i) as a list of their own: a slice of
// a range or index array, else their numbers written into idx.
IndexList slice(const IndexList &l, Cursor &at, stf_int i, stf_int c, stf_int *idx) {
  if (l.kind == IndexKind::contiguous) return IndexList::range(l.start + i, c);
  if (l.kind == IndexKind::indexed) return IndexList::array(l.idx + i, c, l.has_duplicates);
  for (stf_int k = 0; k < c; k++) idx[k] = at.next();
  return IndexList::array(idx, c, false);
}

// dst[d.at(i)] = dst[d.at(i)] op src[s.at(i)] for increasing i: chunks of
// source units packed into a buffer on the stack, each then unpacked as a
// message would be. A loop fused per pattern pair and block size instead
// took half of this file's compile time, in every build. One array on both
// sides goes a unit at a time from its place, so that a unit written early
// is read later, as in the loop; so do units too large for the buffer,
// beside which a call costs nothing.
void scatter_by_chunks(const Unit &u, const IndexList &s, const void *src, const IndexList &d, void *dst, MPI_Op op,
                       UnpackKernel unpack) {
  Cursor sc(s), dc(d);
  if (src == dst || u.extent > kChunkBytes / 8) {
    for (stf_int i = 0; i < s.n; i++) {
      const char *from = at(src, sc.next(), u.extent);
      const stf_int to = dc.next();
      if (op == MPI_REPLACE && from == at(dst, to, u.extent)) continue;  // a unit onto itself
      unpack(u, IndexList::range(to, 1), from, dst, op);
    }
    return;
  }
  alignas(64) char buf[kChunkBytes];
  stf_int sidx[kChunkUnits], didx[kChunkUnits];
  const stf_int per = static_cast<stf_int>(std::min<std::size_t>(kChunkUnits, kChunkBytes / u.extent));
  for (stf_int i = 0; i < s.n; i += per) {
    const stf_int c = std::min(per, s.n - i);
    pack_plain(u, slice(s, sc, i, c, sidx), src, buf);
    unpack(u, slice(d, dc, i, c, didx), buf, dst, op);
  }
}

// A few units (the gaps between a self part's runs, two ghosts a row) go
// straight from place to place, in order: through the buffer, the pack and
// unpack calls cost more than the units. In order, one array on both sides
// reads what earlier units wrote, as in the loop.
constexpr stf_int few_units = 16;
template <class T, class Op>
void scatter_few(stf_int bs, const IndexList &s, const void *src, const IndexList &d, void *dst) {
  Cursor sc(s), dc(d);
  for (stf_int i = 0; i < s.n; ++i) {
    const T *from = static_cast<const T *>(src) + first(sc.next(), bs);
    T *to = static_cast<T *>(dst) + first(dc.next(), bs);
    for (stf_int e = 0; e < bs; ++e) Op::apply(to[e], from[e]);
  }
}

// A contiguous source is a buffer already (the unpack kernel), a few units
// go one by one, rows that line up go row by row, the rest by chunks.
template <class T, class Op>
void scatter_units(const Unit &u, stf_int bs, const IndexList &s, const void *src, const IndexList &d, void *dst,
                   MPI_Op op, UnpackKernel unpack) {
  if (s.kind == IndexKind::contiguous)
    return unpack_units<T, Op>(bs, d, static_cast<const T *>(src) + first(s.start, bs), dst);
  if (s.n <= few_units) return scatter_few<T, Op>(bs, s, src, d, dst);
  if (rows_line_up(bs, s, d)) return scatter_rows<T, Op>(bs, s, src, d, dst);
  scatter_by_chunks(u, s, src, d, dst, op, unpack);
}

// MPI_REPLACE and MPI_NO_OP on any non-opaque unit: byte copies, no types.
template <template <class> class Op>
struct Plain {
  static constexpr bool kReplace = std::is_same<Op<int>, OpReplace<int>>::value;
  static constexpr bool kNoOp = std::is_same<Op<int>, OpNoOp<int>>::value;

  static void unpack(const Unit &u, IndexList idx, const void *buf, void *data, MPI_Op) {
    if constexpr (!kNoOp) {
      if (idx.n <= 0) return;
      if (kReplace && idx.kind == IndexKind::contiguous) {
        std::memcpy(at(data, idx.start, u.extent), buf, static_cast<std::size_t>(idx.n) * u.extent);
        return;
      }
      if (kReplace && long_rows(u, idx)) {
        for_each_row(u, idx, [&](std::int64_t row, stf_int i, std::size_t bytes) {
          std::memcpy(static_cast<char *>(data) + offset_of(row, u), at(buf, i, u.extent), bytes);
        });
        return;
      }
      by_width(u.extent, [&](auto w) {
        using W = decltype(w);
        unpack_units<W, Op<W>>(words<W>(u), idx, buf, data);
      });
    }
  }
  static void scatter(const Unit &u, IndexList srcidx, const void *src, IndexList dstidx, void *dst, MPI_Op op) {
    if constexpr (!kNoOp) {
      if (srcidx.n <= 0) return;
      if (kReplace && dstidx.kind == IndexKind::contiguous) {
        char *d = at(dst, dstidx.start, u.extent);
        if (srcidx.kind != IndexKind::contiguous) {  // a contiguous destination is a buffer: pack into it
          pack_plain(u, srcidx, src, d);
          return;
        }
        const std::size_t bytes = static_cast<std::size_t>(srcidx.n) * u.extent;
        const char *s = at(src, srcidx.start, u.extent);
        if (s + bytes <= d || d + bytes <= s) {  // overlap keeps the loop's semantics
          std::memcpy(d, s, bytes);
          return;
        }
      } else if (kReplace && srcidx.kind == IndexKind::contiguous && src != dst) {
        // A contiguous source is a buffer: unpack from it (distinct arrays cannot overlap).
        unpack(u, dstidx, at(src, srcidx.start, u.extent), dst, MPI_REPLACE);
        return;
      }
      by_width(u.extent, [&](auto w) {
        using W = decltype(w);
        scatter_units<W, Op<W>>(u, words<W>(u), srcidx, src, dstidx, dst, op, unpack);
      });
    }
  }
  static void fetch_and_op(const Unit &u, IndexList idx, void *data, void *buf, MPI_Op) {
    if (idx.n <= 0) return;
    by_width(u.extent, [&](auto w) {
      using W = decltype(w);
      fetch_units<W, Op<W>>(words<W>(u), idx, data, buf);
    });
  }
  static constexpr Kernels k{pack_plain, unpack, scatter, fetch_and_op};
};

// A builtin op on units of u.count elements of T: the element type's
// kernels with block size u.count.
template <class T, template <class> class Op>
struct Typed {
  static void unpack(const Unit &u, IndexList idx, const void *buf, void *data, MPI_Op) {
    unpack_units<T, Op<T>>(u.count, idx, buf, data);
  }
  static void scatter(const Unit &u, IndexList srcidx, const void *src, IndexList dstidx, void *dst, MPI_Op op) {
    scatter_units<T, Op<T>>(u, u.count, srcidx, src, dstidx, dst, op, unpack);
  }
  static void fetch_and_op(const Unit &u, IndexList idx, void *data, void *buf, MPI_Op) {
    fetch_units<T, Op<T>>(u.count, idx, data, buf);
  }
  static constexpr Kernels k{pack_plain, unpack, scatter, fetch_and_op};
};

constexpr Kernels kUserKernels{pack_plain, unpack_user, scatter_user, fetch_user};

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

// The type an op is computed in. Integer ops other than MAX and MIN give the
// same bits for signed and unsigned operands (sums and products wrap, logical
// and bitwise ops ignore the sign), so they share the unsigned type's kernels;
// a type may be accessed through its unsigned variant, so this is legal C++.
template <class T, BaseKind K, int O>
struct ComputeType {
  using type = T;
};
template <class T, int O>
struct ComputeType<T, kInteger, O> {
  using type = std::conditional_t<O == kOpMax || O == kOpMin, T, std::make_unsigned_t<T>>;
};

template <class T, BaseKind K, int O>
constexpr const Kernels *entry() {
  if constexpr (defined(K, O))
    return &Typed<typename ComputeType<T, K, O>::type, OpOf<O>::template fn>::k;
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

int op_id(MPI_Op op) {
  const OpInfo *o = find_op(op);
  return o ? o->id : -1;
}

int get_kernels(const Unit &unit, MPI_Op op, const Kernels **kernels) {
  if (!kernels) return set_error(STF_ERR_NULL, "get_kernels: kernels is NULL");
  if (unit.base >= kNumBaseTypes || (!unit.opaque() && (unit.count <= 0 || unit.packed_bytes != unit.extent)))
    return set_error(STF_ERR_INTERNAL, "get_kernels: malformed unit (base %d, count %d)", unit.base, unit.count);
  const OpInfo *o = find_op(op);
  if (o && o->id == kOpNull) return set_error(STF_ERR_OP, "op is MPI_OP_NULL");
  if (o && o->id == kOpReplace) {
    *kernels = unit.opaque() ? &opaque_replace_kernels : &Plain<OpReplace>::k;
    return STF_SUCCESS;
  }
  if (o && o->id == kOpNoOp) {
    *kernels = unit.opaque() ? &opaque_no_op_kernels : &Plain<OpNoOp>::k;
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
