// Row-group detection: the layout of csr_block.h, built once per matrix.
#include <algorithm>

#include "csr_block.h"

namespace stf_apps {
namespace {

// The rows of a CSR block in stored order.
struct Rows {
  const std::vector<stf_int> &rowptr, &col;
  std::vector<stf_int> list;
  stf_int length(stf_int i) const { return rowptr[list[i] + 1] - rowptr[list[i]]; }
  bool same_columns(stf_int i, stf_int j) const {
    const stf_int n = length(i);
    const auto a = col.begin() + rowptr[list[i]];
    return n > 0 && n == length(j) && std::equal(a, a + n, col.begin() + rowptr[list[j]]);
  }
};

// Whether stored rows [w, end) change length so often that sorting them
// pays: a length change costs a mispredicted branch, about the time of
// kNonzerosPerChange nonzeros (measured on the shared matrices).
constexpr stf_int kNonzerosPerChange = 20;
bool irregular(const Rows &r, stf_int w, stf_int end) {
  stf_int changes = 0, nnz = r.length(w);
  for (stf_int i = w + 1; i < end; i++) {
    changes += r.length(i) != r.length(i - 1);
    nnz += r.length(i);
  }
  return changes * kNonzerosPerChange > nnz;
}

// Shape of the group that starts at stored row i of a window ending at end:
// rows of the same columns share them; otherwise rows of the same length
// (at least min_length), ending where a shared group could start.
std::uint8_t group_shape(const Rows &r, stf_int i, stf_int end, stf_int min_length) {
  const bool shared = i + 1 < end && r.same_columns(i, i + 1);
  if (!shared && r.length(i) < min_length) return 1;
  stf_int k = 1;
  while (i + k < end && k < kMaxGroupRows && r.length(i + k) == r.length(i)) {
    if (shared ? !r.same_columns(i, i + k) : i + k + 1 < end && r.same_columns(i + k, i + k + 1)) break;
    k++;
  }
  return static_cast<std::uint8_t>(k + (shared ? kSharedColumns : 0));
}

// Groups that stored rows [w, end) form when rows of min_length or more are grouped.
stf_int count_groups(const Rows &r, stf_int w, stf_int end, stf_int min_length) {
  stf_int n = 0;
  for (stf_int i = w; i < end; n++) i += group_shape(r, i, end, min_length) & kGroupRowsMask;
  return n;
}

}  // namespace

void CsrBlock::assign(stf_int n, const std::vector<stf_int> &rp, const std::vector<stf_int> &c,
                      const std::vector<double> &v, bool compress) {
  nrows = n;
  Rows r{rp, c, {}};
  for (stf_int i = 0; i < n; i++)
    if (!compress || rp[i + 1] > rp[i]) r.list.push_back(i);
  const stf_int m = static_cast<stf_int>(r.list.size());
  bool listed = false;
  rowptr.assign(1, 0);
  col.clear();
  val.clear();
  seg.clear();
  segcol.clear();
  shape.clear();
  for (stf_int w = 0; w < m; w += kWindowRows) {
    const stf_int end = std::min(m, w + kWindowRows);
    // Irregular windows are sorted by length (stably: identical neighbours
    // stay neighbours), so that runs of one length become groups.
    const bool sort = irregular(r, w, end);
    // Rows of any length are grouped where their groups come out large
    // (sorted windows; regular ones such as a mesh with one row length);
    // elsewhere only long rows, whose sums gain most from it.
    const bool large_groups = sort || count_groups(r, w, end, 1) * (kMaxGroupRows / 2) <= end - w;
    const stf_int min_length = large_groups ? 1 : kMinGroupedLength;
    if (sort)
      std::stable_sort(r.list.begin() + w, r.list.begin() + end,
                       [&](stf_int a, stf_int b) { return rp[a + 1] - rp[a] < rp[b + 1] - rp[b]; });
    // The window's rows name their row of y unless they are rows w.. in order.
    const bool window_listed = sort || r.list[end - 1] - r.list[w] != end - 1 - w || r.list[w] != w;
    listed |= window_listed;
    for (stf_int i = w; i < end;) {
      const std::uint8_t s = group_shape(r, i, end, min_length) | (window_listed ? kListedRows : 0);
      const stf_int k = s & kGroupRowsMask, len = r.length(i);
      if (i == w || shape.back() != s) {  // a segment: one shape, inside one window
        seg.push_back(i);
        segcol.push_back(static_cast<stf_int>(col.size()));
        shape.push_back(s);
      }
      // Entry e of row j at slot e * k + j; a shared group's columns once.
      const bool shared = s & kSharedColumns;
      for (stf_int e = 0; e < len; e++)
        for (stf_int j = 0; j < k; j++) {
          if (!shared || j == 0) col.push_back(c[rp[r.list[i + j]] + e]);
          val.push_back(v[rp[r.list[i + j]] + e]);
        }
      for (stf_int j = 0; j < k; j++) rowptr.push_back(rowptr.back() + len);
      i += k;
    }
  }
  seg.push_back(m);
  segcol.push_back(static_cast<stf_int>(col.size()));
  rows.clear();
  if (listed) rows = r.list;
}

CsrBlock CsrBlock::transposed(stf_int ncols) const {
  // Entries by column (counting sort), then each column's rows in order.
  std::vector<stf_int> tptr(ncols + 1, 0), tcol(val.size());
  std::vector<double> tval(val.size());
  auto for_each_entry = [&](auto &&f) {
    for (stf_int s = 0; s < nseg(); s++) {
      const stf_int k = shape[s] & kGroupRowsMask;
      const bool shared = shape[s] & kSharedColumns;
      const stf_int *c = col.data() + segcol[s];
      for (stf_int i = seg[s]; i < seg[s + 1]; i += k) {
        const stf_int at = rowptr[i], len = rowptr[i + 1] - at;
        for (stf_int j = 0; j < k; j++)
          for (stf_int e = 0; e < len; e++)
            f(rows.empty() ? i + j : rows[i + j], c[shared ? e : e * k + j], val[at + e * k + j]);
        c += shared ? len : k * len;
      }
    }
  };
  for_each_entry([&](stf_int, stf_int c, double) { tptr[c + 1]++; });
  for (stf_int c = 0; c < ncols; c++) tptr[c + 1] += tptr[c];
  std::vector<stf_int> next(tptr.begin(), tptr.end() - 1);
  for_each_entry([&](stf_int r, stf_int c, double v) {
    tcol[next[c]] = r;
    tval[next[c]++] = v;
  });
  std::vector<std::pair<stf_int, double>> line;
  for (stf_int c = 0; c < ncols; c++) {
    line.clear();
    for (stf_int k = tptr[c]; k < tptr[c + 1]; k++) line.push_back({tcol[k], tval[k]});
    std::sort(line.begin(), line.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
    for (stf_int k = tptr[c]; k < tptr[c + 1]; k++) {
      tcol[k] = line[k - tptr[c]].first;
      tval[k] = line[k - tptr[c]].second;
    }
  }
  CsrBlock t;
  t.assign(ncols, tptr, tcol, tval, false);
  return t;
}

CsrView CsrBlock::view() const {
  return CsrView{nseg(),      rows.empty() ? nullptr : rows.data(), rowptr.data(), col.data(), seg.data(),
                 segcol.data(), shape.data(),                         val.data()};
}

stf_int CsrBlock::groups() const {
  stf_int g = 0;
  for (stf_int s = 0; s < nseg(); s++) g += (seg[s + 1] - seg[s]) / (shape[s] & kGroupRowsMask);
  return g;
}

stf_int CsrBlock::shared_rows() const {
  stf_int n = 0;
  for (stf_int s = 0; s < nseg(); s++)
    if (shape[s] & kSharedColumns) n += seg[s + 1] - seg[s];
  return n;
}

}  // namespace stf_apps
