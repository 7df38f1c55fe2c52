// A CSR block stored by row groups, and its products.
//
// Consecutive rows of the same length form a group of up to kMaxGroupRows
// rows that are multiplied together, one accumulator each: independent
// additions instead of one dependency chain per row, and one loop exit per
// group instead of one per row. A group's values are stored entry by entry
// across its rows (entry e of row j at e * K + j) in the slots that plain
// CSR gives those rows, so the row pointers stay those of CSR; its columns
// the same way. When the rows also have the same columns (an "inode": the
// unknowns of one mesh node) the group stores one column list and reads
// each x entry once for all of its rows. Column lists are packed one after
// the other, without gaps, so that they stream from memory like the values.
// Runs of groups of one shape form a segment; a segment of single rows is a
// plain CSR loop.
//
// Rows are stored in windows of kWindowRows. Where row lengths change often
// (road and census graphs), every length change mispredicts a branch; such a
// window is sorted by row length, so that rows of one length form groups and
// segments run long, in the manner of the SELL-C-sigma format (Kreutzer,
// Hager, Wellein, Fehske, Bishop, "A unified sparse matrix data format for
// efficient general sparse matrix-vector multiplication on modern processors
// with wide SIMD units", SIAM J. Sci. Comput. 36(5), 2014), without its
// padding. A block may also store only its rows with entries (the
// off-diagonal block), so that its product visits nothing else. The rows of
// sorted windows and of such blocks name their row of y.
#pragma once

#include <cstdint>
#include <vector>

#include "stf_apps.h"

namespace stf_apps {

constexpr int kMaxGroupRows = 8;
// Where groups of rows with their own columns would come out small (fewer
// than kMaxGroupRows / 2 rows on average in a window left in order), only
// rows of this length or more are grouped: shorter rows gain little (their
// sums are short chains that overlap anyway) and would pay for switching
// between segments.
constexpr stf_int kMinGroupedLength = 8;
// Stored rows per window; segments never cross windows, so they are also the
// device kernels' work items.
constexpr stf_int kWindowRows = 256;
// Segment shape: rows per group, plus kSharedColumns for one column list,
// plus kListedRows when the stored rows name their row of y.
constexpr std::uint8_t kGroupRowsMask = 15, kSharedColumns = 16, kListedRows = 32;

// Read-only view of a grouped block, in host or device memory. Stored row i
// has its values in slots rowptr[i] .. rowptr[i+1]-1; segment s holds the
// stored rows seg[s] .. seg[s+1]-1 in groups of shape[s], whose columns
// follow each other from col[segcol[s]] on (one list per shared group, one
// column per value otherwise); they are rows rows[i] of y if the shape says
// kListedRows, rows i otherwise.
struct CsrView {
  stf_int nseg = 0;
  const stf_int *rows = nullptr;
  const stf_int *rowptr = nullptr, *col = nullptr, *seg = nullptr, *segcol = nullptr;
  const std::uint8_t *shape = nullptr;
  const double *val = nullptr;
};

struct CsrBlock {
  stf_int nrows = 0;          // rows of the block (entries of y)
  std::vector<stf_int> rows;  // y row of each stored row; empty when no segment is listed
  std::vector<stf_int> rowptr, col, seg, segcol;
  std::vector<std::uint8_t> shape;
  std::vector<double> val;

  // From CSR arrays (columns ascending within a row). compress: store only
  // the rows with entries.
  void assign(stf_int nrows, const std::vector<stf_int> &rowptr, const std::vector<stf_int> &col,
              const std::vector<double> &val, bool compress);
  // B^T as a block of ncols rows (every row stored).
  CsrBlock transposed(stf_int ncols) const;
  CsrView view() const;
  stf_int nseg() const { return static_cast<stf_int>(shape.size()); }
  stf_int stored_rows() const { return static_cast<stf_int>(rowptr.size()) - 1; }
  stf_int groups() const;       // row groups (a single row is a group of one)
  stf_int shared_rows() const;  // stored rows in groups with one column list
};

}  // namespace stf_apps
