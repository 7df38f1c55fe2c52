// The kernel bodies, each written once as a functor over the position i of a
// unit in its index list, templated on
//   T      element type (a builtin type, or a Word of bytes for plain copies)
//   Op     combining op (kernels/ops.h)
//   BS     elements per unit: 1, 2, 4, 8, or 0 for a count known at run time
//   P      index pattern: Contig, Strided or Indexed (AnyPattern: chosen per
//          index at run time)
//   Atomic combine through atomic_apply (parallel executors, duplicate targets)
// operator()(i) works for any i in any order: what a CUDA thread or a pool
// worker calls. apply(i, unit) is the same body with the unit already known,
// so a serial host walk can step through a pattern without dividing.
// Nothing here may call host-only code, allocate or throw.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/atomic.h"
#include "kernels/kernels.h"
#include "kernels/portability.h"

namespace stf {

// ---- index patterns --------------------------------------------------------

struct Contig {
  stf_int start;
  explicit Contig(const IndexList &l) : start(l.start) {}
  STF_HOST_DEVICE stf_int at(stf_int i) const { return start + i; }
};

// start + XY*k + X*j + i; plane and row offsets in 64 bits because X*Y may
// exceed stf_int when dz == 1 (only k == 0 is used then).
struct Strided {
  stf_int start, dx, dy, dz;
  std::int64_t X, XY;
  explicit Strided(const IndexList &l)
      : start(l.start), dx(l.dx), dy(l.dy), dz(l.dz), X(l.X), XY(static_cast<std::int64_t>(l.X) * l.Y) {}
  STF_HOST_DEVICE stf_int at(stf_int i) const {
    const stf_int row = i / dx;
    return static_cast<stf_int>(start + XY * (row / dy) + X * (row % dy) + i % dx);
  }
};

struct Indexed {
  const stf_int *idx;
  explicit Indexed(const IndexList &l) : idx(l.idx) {}
  STF_HOST_DEVICE stf_int at(stf_int i) const { return idx[i]; }
};

// A pattern resolved per index at run time: the source side of a scatter,
// so its kernels are instantiated per destination pattern only.
struct AnyPattern {
  IndexKind kind;
  Strided box;
  const stf_int *idx;
  explicit AnyPattern(const IndexList &l) : kind(l.kind), box(l), idx(l.idx) {}
  STF_HOST_DEVICE stf_int at(stf_int i) const {
    if (kind == IndexKind::strided) return box.at(i);
    return kind == IndexKind::indexed ? idx[i] : box.start + i;
  }
};

// ---- helpers ------------------------------------------------------------------

// Elements per unit: a compile-time constant (loops unroll) or a run-time count.
template <int BS>
struct Block {
  explicit Block(stf_int) {}
  STF_HOST_DEVICE constexpr stf_int size() const { return BS; }
};
template <>
struct Block<0> {
  stf_int n;
  explicit Block(stf_int count) : n(count) {}
  STF_HOST_DEVICE stf_int size() const { return n; }
};

// First element of unit u (size_t: no overflow on large arrays).
STF_HOST_DEVICE inline std::size_t first(stf_int u, stf_int per_unit) {
  return static_cast<std::size_t>(u) * static_cast<std::size_t>(per_unit);
}

template <class Op, bool Atomic>
struct Combine {
  template <class T>
  STF_HOST_DEVICE static void apply(T &acc, const T &in) {
    if constexpr (Atomic)
      atomic_apply<Op>(acc, in);
    else
      Op::apply(acc, in);
  }
};

// ---- kernels ------------------------------------------------------------------

// buf[i] = data[idx.at(i)]
template <class T, int BS, class P>
struct PackFn {
  P idx;
  const T *data;
  T *buf;
  Block<BS> bs;
  STF_HOST_DEVICE void operator()(stf_int i) const { apply(i, idx.at(i)); }
  STF_HOST_DEVICE void apply(stf_int i, stf_int u) const {
    const stf_int n = bs.size();
    const T *d = data + first(u, n);
    T *b = buf + first(i, n);
    for (stf_int e = 0; e < n; ++e) b[e] = d[e];
  }
};

// data[idx.at(i)] = data[idx.at(i)] op buf[i]
template <class T, class Op, int BS, class P, bool Atomic = false>
struct UnpackFn {
  P idx;
  const T *buf;
  T *data;
  Block<BS> bs;
  STF_HOST_DEVICE void operator()(stf_int i) const { apply(i, idx.at(i)); }
  STF_HOST_DEVICE void apply(stf_int i, stf_int u) const {
    const stf_int n = bs.size();
    T *d = data + first(u, n);
    const T *b = buf + first(i, n);
    for (stf_int e = 0; e < n; ++e) Combine<Op, Atomic>::apply(d[e], b[e]);
  }
};

// dst[didx.at(i)] = dst[didx.at(i)] op src[sidx.at(i)]
template <class T, class Op, int BS, class PS, class PD, bool Atomic = false>
struct ScatterFn {
  PS sidx;
  PD didx;
  const T *src;
  T *dst;
  Block<BS> bs;
  STF_HOST_DEVICE void operator()(stf_int i) const { apply(sidx.at(i), didx.at(i)); }
  STF_HOST_DEVICE void apply(stf_int us, stf_int ud) const {
    const stf_int n = bs.size();
    const T *s = src + first(us, n);
    T *d = dst + first(ud, n);
    for (stf_int e = 0; e < n; ++e) Combine<Op, Atomic>::apply(d[e], s[e]);
  }
};

// old = data[idx.at(i)]; data[idx.at(i)] = old op buf[i]; buf[i] = old.
// Ordered by definition (each contribution sees the previous ones), so it
// has no atomic form: executors run it serially.
template <class T, class Op, int BS, class P>
struct FetchFn {
  P idx;
  T *data;
  T *buf;
  Block<BS> bs;
  STF_HOST_DEVICE void operator()(stf_int i) const { apply(i, idx.at(i)); }
  STF_HOST_DEVICE void apply(stf_int i, stf_int u) const {
    const stf_int n = bs.size();
    T *d = data + first(u, n);
    T *b = buf + first(i, n);
    for (stf_int e = 0; e < n; ++e) {
      T old = d[e];
      Op::apply(d[e], b[e]);
      b[e] = old;
    }
  }
};

}  // namespace stf
