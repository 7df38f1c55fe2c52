// The device kernel table, written once for every backend: Launch is how a
// backend runs a functor over [0, n) on a stream,
//   template <class F> static int Launch::run(Device &, Stream, stf_int n, const F &f);
// device_kernels.cpp instantiates it with Device::launch, cuda_kernels.cu
// with a __global__ kernel compiled by nvcc from the same functors.
#pragma once

#include <cstdint>
#include <type_traits>

#include "device/device_kernels.h"
#include "kernels/functors.h"
#include "kernels/ops.h"

namespace stf {

// False when STF_TEST_NO_ATOMICS=1 (tests only): atomic variants are
// dropped, so that a test can show that duplicate targets need them.
bool device_atomics_allowed();

// f(0), f(1), ..., f(n - 1) in order, as one device thread: REPLACE onto
// duplicate targets with units of several elements, where element-wise
// atomics would let one unit end up with elements of different leaves.
// Slow (one thread) but rare; the host kernels give the same result.
template <class F>
struct InOrderFn {
  F f;
  stf_int n;
  STF_HOST_DEVICE void operator()(stf_int) const {
    for (stf_int i = 0; i < n; ++i) f(i);
  }
};

// Element T, op Op<T>: units of u.extent / sizeof(T) elements (the unit's
// count of T, or its bytes as words for plain copies).
template <class Launch, class T, template <class> class Op>
struct Launchers {
  static stf_int per_unit(const Unit &u) { return static_cast<stf_int>(u.extent / sizeof(T)); }
  static int pack(Device &d, Stream s, const Unit &u, const IndexList &idx, const void *data, void *buf) {
    using F = PackFn<T, 0, AnyPattern>;
    const F f{AnyPattern(idx), static_cast<const T *>(data), static_cast<T *>(buf), Block<0>(per_unit(u))};
    return Launch::run(d, s, idx.n, f);
  }
  template <bool A>
  static int unpack_as(Device &d, Stream s, const Unit &u, const IndexList &idx, const void *buf, void *data) {
    using F = UnpackFn<T, Op<T>, 0, AnyPattern, A>;
    const F f{AnyPattern(idx), static_cast<const T *>(buf), static_cast<T *>(data), Block<0>(per_unit(u))};
    return Launch::run(d, s, idx.n, f);
  }
  // Whole units must win, not single elements (see InOrderFn).
  static bool in_order(const Unit &u, bool atomic) {
    return std::is_same_v<Op<T>, OpReplace<T>> && atomic && per_unit(u) > 1 && device_atomics_allowed();
  }
  static int unpack(Device &d, Stream s, const Unit &u, const IndexList &idx, const void *buf, void *data,
                    bool atomic) {
    if (in_order(u, atomic)) {
      using F = UnpackFn<T, Op<T>, 0, AnyPattern, false>;
      const F f{AnyPattern(idx), static_cast<const T *>(buf), static_cast<T *>(data), Block<0>(per_unit(u))};
      return Launch::run(d, s, 1, InOrderFn<F>{f, idx.n});
    }
    return atomic && device_atomics_allowed() ? unpack_as<true>(d, s, u, idx, buf, data)
                                              : unpack_as<false>(d, s, u, idx, buf, data);
  }
  template <bool A>
  static int scatter_as(Device &d, Stream s, const Unit &u, const IndexList &si, const void *src,
                        const IndexList &di, void *dst) {
    using F = ScatterFn<T, Op<T>, 0, AnyPattern, AnyPattern, A>;
    const F f{AnyPattern(si), AnyPattern(di), static_cast<const T *>(src), static_cast<T *>(dst),
              Block<0>(per_unit(u))};
    return Launch::run(d, s, di.n, f);
  }
  static int scatter(Device &d, Stream s, const Unit &u, const IndexList &si, const void *src,
                     const IndexList &di, void *dst, bool atomic) {
    if (in_order(u, atomic)) {
      using F = ScatterFn<T, Op<T>, 0, AnyPattern, AnyPattern, false>;
      const F f{AnyPattern(si), AnyPattern(di), static_cast<const T *>(src), static_cast<T *>(dst),
                Block<0>(per_unit(u))};
      return Launch::run(d, s, 1, InOrderFn<F>{f, di.n});
    }
    return atomic && device_atomics_allowed() ? scatter_as<true>(d, s, u, si, src, di, dst)
                                              : scatter_as<false>(d, s, u, si, src, di, dst);
  }
  static constexpr DeviceKernels k{pack, unpack, scatter};
};

template <class Launch, class T, BaseKind K>
constexpr void fill_row(const DeviceKernels **row) {
  if constexpr ((K == kInteger || K == kFloat) && !std::is_same_v<T, long double>) {
    row[DeviceKernelTable::kSum] = &Launchers<Launch, T, OpSum>::k;
    row[DeviceKernelTable::kProd] = &Launchers<Launch, T, OpProd>::k;
    row[DeviceKernelTable::kMax] = &Launchers<Launch, T, OpMax>::k;
    row[DeviceKernelTable::kMin] = &Launchers<Launch, T, OpMin>::k;
  }
}

template <class Launch>
constexpr DeviceKernelTable make_kernel_table() {
  // Plain copies move the unit's bytes as the widest unsigned word dividing
  // its extent (buffers are at least that aligned: units are laid out at
  // multiples of the extent).
  DeviceKernelTable t{{&Launchers<Launch, std::uint64_t, OpReplace>::k, &Launchers<Launch, std::uint32_t, OpReplace>::k,
                       &Launchers<Launch, std::uint16_t, OpReplace>::k, &Launchers<Launch, std::uint8_t, OpReplace>::k},
                      {}};
#define STF_DEV_ROW_(name, ctype, handle, kind) fill_row<Launch, ctype, kind>(t.ops[kBase_##name]);
  STF_BASE_TYPES(STF_DEV_ROW_)
#undef STF_DEV_ROW_
  return t;
}

}  // namespace stf
