// Reduction op functors and the element types they are instantiated on.
// Everything here must stay usable from CUDA device code: no host-only
// calls, no exceptions, no allocation.
#pragma once

#include <complex>
#include <cstdint>
#include <type_traits>

#include "kernels/portability.h"

namespace stf {

// C layout of the MPI pair types (MPI_DOUBLE_INT is struct{double v; int i;}).
template <class V>
struct ValIdx {
  V v;
  int i;
};

// Which ops MPI defines for an element type (MPI-3.1 5.9.2 groups).
enum BaseKind {
  kInteger,  // C integer: SUM PROD MAX MIN LAND LOR LXOR BAND BOR BXOR
  kFloat,    // floating point: SUM PROD MAX MIN
  kComplex,  // SUM PROD
  kBool,     // MPI_C_BOOL: LAND LOR LXOR
  kByte,     // MPI_BYTE: BAND BOR BXOR
  kPair,     // MAXLOC MINLOC
  kText      // MPI_CHAR, MPI_WCHAR: no arithmetic (REPLACE only)
};

// Every builtin element type: X(enum suffix, C type, MPI handle, kind). The
// list is expanded only in .cpp files that include <mpi.h>; the position in
// the list is the Unit::base value.
#define STF_BASE_TYPES(X)                                              \
  X(CHAR, char, MPI_CHAR, kText)                                       \
  X(SIGNED_CHAR, signed char, MPI_SIGNED_CHAR, kInteger)               \
  X(UNSIGNED_CHAR, unsigned char, MPI_UNSIGNED_CHAR, kInteger)         \
  X(BYTE, unsigned char, MPI_BYTE, kByte)                              \
  X(WCHAR, wchar_t, MPI_WCHAR, kText)                                  \
  X(SHORT, short, MPI_SHORT, kInteger)                                 \
  X(UNSIGNED_SHORT, unsigned short, MPI_UNSIGNED_SHORT, kInteger)      \
  X(INT, int, MPI_INT, kInteger)                                       \
  X(UNSIGNED, unsigned, MPI_UNSIGNED, kInteger)                        \
  X(LONG, long, MPI_LONG, kInteger)                                    \
  X(UNSIGNED_LONG, unsigned long, MPI_UNSIGNED_LONG, kInteger)         \
  X(LONG_LONG, long long, MPI_LONG_LONG, kInteger)                     \
  X(UNSIGNED_LONG_LONG, unsigned long long, MPI_UNSIGNED_LONG_LONG, kInteger) \
  X(INT8_T, std::int8_t, MPI_INT8_T, kInteger)                         \
  X(INT16_T, std::int16_t, MPI_INT16_T, kInteger)                      \
  X(INT32_T, std::int32_t, MPI_INT32_T, kInteger)                      \
  X(INT64_T, std::int64_t, MPI_INT64_T, kInteger)                      \
  X(UINT8_T, std::uint8_t, MPI_UINT8_T, kInteger)                      \
  X(UINT16_T, std::uint16_t, MPI_UINT16_T, kInteger)                   \
  X(UINT32_T, std::uint32_t, MPI_UINT32_T, kInteger)                   \
  X(UINT64_T, std::uint64_t, MPI_UINT64_T, kInteger)                   \
  X(AINT, MPI_Aint, MPI_AINT, kInteger)                                \
  X(OFFSET, MPI_Offset, MPI_OFFSET, kInteger)                          \
  X(COUNT, MPI_Count, MPI_COUNT, kInteger)                             \
  X(C_BOOL, bool, MPI_C_BOOL, kBool)                                   \
  X(FLOAT, float, MPI_FLOAT, kFloat)                                   \
  X(DOUBLE, double, MPI_DOUBLE, kFloat)                                \
  X(LONG_DOUBLE, long double, MPI_LONG_DOUBLE, kFloat)                 \
  X(C_FLOAT_COMPLEX, std::complex<float>, MPI_C_FLOAT_COMPLEX, kComplex) \
  X(C_DOUBLE_COMPLEX, std::complex<double>, MPI_C_DOUBLE_COMPLEX, kComplex) \
  X(C_LONG_DOUBLE_COMPLEX, std::complex<long double>, MPI_C_LONG_DOUBLE_COMPLEX, kComplex) \
  X(FLOAT_INT, ValIdx<float>, MPI_FLOAT_INT, kPair)                    \
  X(DOUBLE_INT, ValIdx<double>, MPI_DOUBLE_INT, kPair)                 \
  X(LONG_INT, ValIdx<long>, MPI_LONG_INT, kPair)                       \
  X(TWO_INT, ValIdx<int>, MPI_2INT, kPair)                             \
  X(SHORT_INT, ValIdx<short>, MPI_SHORT_INT, kPair)                    \
  X(LONG_DOUBLE_INT, ValIdx<long double>, MPI_LONG_DOUBLE_INT, kPair)

#define STF_BASE_ENUM_(name, ctype, handle, kind) kBase_##name,
enum BaseType : int { STF_BASE_TYPES(STF_BASE_ENUM_) kNumBaseTypes };
#undef STF_BASE_ENUM_

// Integer arithmetic wraps (computed in an unsigned type at least as wide as
// unsigned int) so overflow is never undefined behaviour, even for
// unsigned short * unsigned short, which would otherwise promote to int.
template <class T, bool = std::is_integral<T>::value>
struct Arith {
  using type = T;
};
template <class T>
struct Arith<T, true> {
  using type = typename std::common_type<typename std::make_unsigned<T>::type, unsigned>::type;
};

// Each op: acc = acc op in.
template <class T>
struct OpSum {
  STF_HOST_DEVICE static void apply(T &acc, const T &in) {
    using A = typename Arith<T>::type;
    acc = static_cast<T>(static_cast<A>(acc) + static_cast<A>(in));
  }
};
template <class T>
struct OpProd {
  STF_HOST_DEVICE static void apply(T &acc, const T &in) {
    using A = typename Arith<T>::type;
    acc = static_cast<T>(static_cast<A>(acc) * static_cast<A>(in));
  }
};
// Argument order matches MPI implementations (in > acc), which only matters
// for NaN.
template <class T>
struct OpMax {
  STF_HOST_DEVICE static void apply(T &acc, const T &in) { acc = in > acc ? in : acc; }
};
template <class T>
struct OpMin {
  STF_HOST_DEVICE static void apply(T &acc, const T &in) { acc = in < acc ? in : acc; }
};
template <class T>
struct OpReplace {
  STF_HOST_DEVICE static void apply(T &acc, const T &in) { acc = in; }
};
// MPI_NO_OP: the target keeps its value (fetch_and_op only fetches).
template <class T>
struct OpNoOp {
  STF_HOST_DEVICE static void apply(T &, const T &) {}
};
template <class T>
struct OpLand {
  STF_HOST_DEVICE static void apply(T &acc, const T &in) { acc = static_cast<T>(acc && in); }
};
template <class T>
struct OpLor {
  STF_HOST_DEVICE static void apply(T &acc, const T &in) { acc = static_cast<T>(acc || in); }
};
template <class T>
struct OpLxor {
  STF_HOST_DEVICE static void apply(T &acc, const T &in) { acc = static_cast<T>(!acc != !in); }
};
template <class T>
struct OpBand {
  STF_HOST_DEVICE static void apply(T &acc, const T &in) { acc = static_cast<T>(acc & in); }
};
template <class T>
struct OpBor {
  STF_HOST_DEVICE static void apply(T &acc, const T &in) { acc = static_cast<T>(acc | in); }
};
template <class T>
struct OpBxor {
  STF_HOST_DEVICE static void apply(T &acc, const T &in) { acc = static_cast<T>(acc ^ in); }
};
// Pairs: the larger (smaller) value wins; on a tie the smaller index wins,
// which makes the op commutative like MPI's.
template <class T>
struct OpMaxloc {
  STF_HOST_DEVICE static void apply(T &acc, const T &in) {
    if (in.v > acc.v || (in.v == acc.v && in.i < acc.i)) acc = in;
  }
};
template <class T>
struct OpMinloc {
  STF_HOST_DEVICE static void apply(T &acc, const T &in) {
    if (in.v < acc.v || (in.v == acc.v && in.i < acc.i)) acc = in;
  }
};

}  // namespace stf
