// The product of a grouped CSR block (csr_block.h): one body per segment
// shape, with the group's row count K a compile-time constant so that the
// rows' accumulators live in registers and the loops over them unroll. The
// host's mult and mult_transpose (on transposed blocks) and the device
// kernels (csr_device.cpp: one segment per work item, on emu and CUDA) all
// run it. Each shape is its own small function (noinline): inlined into one
// dispatch loop, fifteen shapes would share registers and spill.
#pragma once

#include <cstdint>

#include "csr_block.h"
#include "device_launch.h"

namespace stf_apps {
namespace csr_detail {

// Single rows this long or longer are summed with four partial sums; shorter
// ones overlap with their neighbours anyway.
constexpr stf_int kLongRow = 16;

// Where stored row i goes in y: row i, or the row a listed segment names.
template <bool Listed>
STF_APPS_HD inline stf_int row_of(const CsrView &b, stf_int i) {
  if constexpr (Listed)
    return b.rows[i];
  else
    return i;
}

template <bool Accumulate>
STF_APPS_HD inline void put(double &out, double s) {
  if constexpr (Accumulate)
    out += s;
  else
    out = s;
}

STF_APPS_HD inline double row_dot(const stf_int *col, const double *v, stf_int n, const double *x) {
  double s = 0;
  for (stf_int e = 0; e < n; e++) s += v[e] * x[col[e]];
  return s;
}

// A long row: four partial sums, so that consecutive additions do not wait
// for each other.
STF_APPS_HD inline double long_row_dot(const stf_int *col, const double *v, stf_int n, const double *x) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  stf_int e = 0;
  for (; e + 4 <= n; e += 4) {
    s0 += v[e] * x[col[e]];
    s1 += v[e + 1] * x[col[e + 1]];
    s2 += v[e + 2] * x[col[e + 2]];
    s3 += v[e + 3] * x[col[e + 3]];
  }
  for (; e < n; e++) s0 += v[e] * x[col[e]];
  return (s0 + s1) + (s2 + s3);
}

// y (+)= B x on single stored rows [first, last), columns from col on.
template <bool Listed, bool Accumulate>
STF_APPS_NOINLINE STF_APPS_HD void mult_rows(const CsrView &b, const double *x, double *y, stf_int first,
                                              stf_int last, const stf_int *col) {
  for (stf_int i = first; i < last; i++) {
    const stf_int at = b.rowptr[i], n = b.rowptr[i + 1] - at;
    const double s = n < kLongRow ? row_dot(col, b.val + at, n, x) : long_row_dot(col, b.val + at, n, x);
    put<Accumulate>(y[row_of<Listed>(b, i)], s);
    col += n;
  }
}

// y (+)= B x on groups of K stored rows in [first, last), columns from col
// on: entry e of row j at slot e * K + j, one column per slot unless Shared.
template <int K, bool Shared, bool Listed, bool Accumulate>
STF_APPS_NOINLINE STF_APPS_HD void mult_groups(const CsrView &b, const double *x, double *y, stf_int first,
                                                stf_int last, const stf_int *col) {
  for (stf_int i = first; i < last; i += K) {
    const stf_int at = b.rowptr[i], n = b.rowptr[i + 1] - at;
    const double *v = b.val + at;
    double s[K] = {};
    for (stf_int e = 0; e < n; e++, v += K) {
      if constexpr (Shared) {
        const double xe = x[col[e]];
        for (int j = 0; j < K; j++) s[j] += v[j] * xe;
      } else {
        for (int j = 0; j < K; j++) s[j] += v[j] * x[col[e * K + j]];
      }
    }
    for (int j = 0; j < K; j++) put<Accumulate>(y[row_of<Listed>(b, i + j)], s[j]);
    col += Shared ? n : K * n;
  }
}

// Segment s, of groups of K rows.
template <int K, bool Shared, bool Accumulate>
STF_APPS_HD void mult_segment(const CsrView &b, const double *x, double *y, stf_int s) {
  const stf_int first = b.seg[s], last = b.seg[s + 1];
  const stf_int *col = b.col + b.segcol[s];
  const bool listed = b.shape[s] & kListedRows;
  if constexpr (K == 1) {
    if (listed)
      mult_rows<true, Accumulate>(b, x, y, first, last, col);
    else
      mult_rows<false, Accumulate>(b, x, y, first, last, col);
  } else {
    if (listed)
      mult_groups<K, Shared, true, Accumulate>(b, x, y, first, last, col);
    else
      mult_groups<K, Shared, false, Accumulate>(b, x, y, first, last, col);
  }
}

// y (+)= B x over segments [begin, end), each by the kernel of its shape.
template <bool Accumulate>
STF_APPS_HD void mult_segments(const CsrView &b, const double *x, double *y, stf_int begin, stf_int end) {
  static_assert(kMaxGroupRows == 8 && kGroupRowsMask == 15 && kSharedColumns == 16, "one case per shape");
  for (stf_int s = begin; s < end; s++) {
    switch (b.shape[s] & (kGroupRowsMask | kSharedColumns)) {
      case 2: mult_segment<2, false, Accumulate>(b, x, y, s); break;
      case 3: mult_segment<3, false, Accumulate>(b, x, y, s); break;
      case 4: mult_segment<4, false, Accumulate>(b, x, y, s); break;
      case 5: mult_segment<5, false, Accumulate>(b, x, y, s); break;
      case 6: mult_segment<6, false, Accumulate>(b, x, y, s); break;
      case 7: mult_segment<7, false, Accumulate>(b, x, y, s); break;
      case 8: mult_segment<8, false, Accumulate>(b, x, y, s); break;
      case 18: mult_segment<2, true, Accumulate>(b, x, y, s); break;
      case 19: mult_segment<3, true, Accumulate>(b, x, y, s); break;
      case 20: mult_segment<4, true, Accumulate>(b, x, y, s); break;
      case 21: mult_segment<5, true, Accumulate>(b, x, y, s); break;
      case 22: mult_segment<6, true, Accumulate>(b, x, y, s); break;
      case 23: mult_segment<7, true, Accumulate>(b, x, y, s); break;
      case 24: mult_segment<8, true, Accumulate>(b, x, y, s); break;
      default: mult_segment<1, false, Accumulate>(b, x, y, s); break;
    }
  }
}

}  // namespace csr_detail

// y = B x on the stored rows of segments [begin, end); accumulate: y += B x.
// Segments write disjoint rows, so ranges may run concurrently.
STF_APPS_HD inline void block_mult(const CsrView &b, const double *x, double *y, bool accumulate, stf_int begin,
                                   stf_int end) {
  if (accumulate)
    csr_detail::mult_segments<true>(b, x, y, begin, end);
  else
    csr_detail::mult_segments<false>(b, x, y, begin, end);
}

// One block's product as a device kernel, a work item per segment; never
// changed once enqueued.
struct BlockMult {
  CsrView block;
  const double *x;
  double *y;
  bool accumulate;  // y += B x instead of y = B x
  STF_APPS_HD void operator()(int64_t s) const {
    block_mult(block, x, y, accumulate, static_cast<stf_int>(s), static_cast<stf_int>(s + 1));
  }
};

}  // namespace stf_apps
