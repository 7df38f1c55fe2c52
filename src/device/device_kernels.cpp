#include "device/device_kernels.h"

#include <array>
#include <cstdint>
#include <cstdlib>
#include <type_traits>

#include "core/error.h"
#include "kernels/functors.h"
#include "kernels/ops.h"

namespace stf {
namespace {

// STF_TEST_NO_ATOMICS=1 in the environment (tests only) drops the atomic
// variants, so that a test can show that duplicate targets need them.
bool atomics_allowed() {
  static const bool allowed = [] {
    const char *v = std::getenv("STF_TEST_NO_ATOMICS");
    return !(v && *v == '1');
  }();
  return allowed;
}

// Element T, op Op<T>: units of u.count elements (or u.extent / sizeof(T)
// words for plain copies, see words()).
template <class T, template <class> class Op>
struct Launchers {
  static stf_int per_unit(const Unit &u) { return static_cast<stf_int>(u.extent / sizeof(T)); }
  static void pack(Device &d, Stream s, const Unit &u, const IndexList &idx, const void *data, void *buf) {
    d.launch(s, idx.n,
             PackFn<T, 0, AnyPattern>{AnyPattern(idx), static_cast<const T *>(data), static_cast<T *>(buf),
                                      Block<0>(per_unit(u))});
  }
  template <bool A>
  static void unpack_as(Device &d, Stream s, const Unit &u, const IndexList &idx, const void *buf, void *data) {
    d.launch(s, idx.n,
             UnpackFn<T, Op<T>, 0, AnyPattern, A>{AnyPattern(idx), static_cast<const T *>(buf),
                                                  static_cast<T *>(data), Block<0>(per_unit(u))});
  }
  static void unpack(Device &d, Stream s, const Unit &u, const IndexList &idx, const void *buf, void *data,
                     bool atomic) {
    atomic && atomics_allowed() ? unpack_as<true>(d, s, u, idx, buf, data) : unpack_as<false>(d, s, u, idx, buf, data);
  }
  template <bool A>
  static void scatter_as(Device &d, Stream s, const Unit &u, const IndexList &si, const void *src,
                         const IndexList &di, void *dst) {
    d.launch(s, di.n,
             ScatterFn<T, Op<T>, 0, AnyPattern, AnyPattern, A>{AnyPattern(si), AnyPattern(di),
                                                               static_cast<const T *>(src), static_cast<T *>(dst),
                                                               Block<0>(per_unit(u))});
  }
  static void scatter(Device &d, Stream s, const Unit &u, const IndexList &si, const void *src,
                      const IndexList &di, void *dst, bool atomic) {
    atomic && atomics_allowed() ? scatter_as<true>(d, s, u, si, src, di, dst)
                              : scatter_as<false>(d, s, u, si, src, di, dst);
  }
  static constexpr DeviceKernels k{pack, unpack, scatter};
};

// Plain copies move the unit's bytes as the widest unsigned word dividing
// its extent (buffers are at least that aligned: units are laid out at
// multiples of the extent).
const DeviceKernels *replace_kernels(const Unit &u) {
  if (u.extent % 8 == 0) return &Launchers<std::uint64_t, OpReplace>::k;
  if (u.extent % 4 == 0) return &Launchers<std::uint32_t, OpReplace>::k;
  if (u.extent % 2 == 0) return &Launchers<std::uint16_t, OpReplace>::k;
  return &Launchers<std::uint8_t, OpReplace>::k;
}

enum { kSum, kProd, kMax, kMin, kOps };
using Row = std::array<const DeviceKernels *, kOps>;

template <class T, BaseKind K>
constexpr Row row() {
  if constexpr ((K == kInteger || K == kFloat) && !std::is_same_v<T, long double>)
    return Row{{&Launchers<T, OpSum>::k, &Launchers<T, OpProd>::k, &Launchers<T, OpMax>::k,
                &Launchers<T, OpMin>::k}};
  else
    return Row{};
}

#define STF_DEV_ROW_(name, ctype, handle, kind) row<ctype, kind>(),
constexpr Row kTable[] = {STF_BASE_TYPES(STF_DEV_ROW_)};
#undef STF_DEV_ROW_

}  // namespace

int get_device_kernels(const Unit &u, MPI_Op op, const DeviceKernels **k) {
  if (u.opaque())
    return set_error(STF_ERR_UNSUPPORTED, "device data needs a unit of one builtin type (this one is opaque)");
  if (op == MPI_REPLACE) return *k = replace_kernels(u), STF_SUCCESS;
  int id = op == MPI_SUM ? kSum : op == MPI_PROD ? kProd : op == MPI_MAX ? kMax : op == MPI_MIN ? kMin : -1;
  const DeviceKernels *found = id >= 0 && u.base >= 0 && static_cast<std::size_t>(u.base) < std::size(kTable)
                                   ? kTable[u.base][id]
                                   : nullptr;
  if (!found)
    return set_error(STF_ERR_UNSUPPORTED, "%s on device data is not supported for this unit yet", op_name(op));
  *k = found;
  return STF_SUCCESS;
}

}  // namespace stf
