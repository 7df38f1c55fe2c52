#include "test_csr_matrices.h"

#include <dirent.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <set>

namespace stft {
namespace {

struct Builder {
  std::vector<int64_t> rows, cols;
  std::vector<double> vals;
  std::mt19937_64 rng;
  explicit Builder(unsigned seed) : rng(seed) {}
  double value() { return std::uniform_real_distribution<double>(-1.0, 1.0)(rng); }
  int64_t below(int64_t n) { return static_cast<int64_t>(rng() % static_cast<uint64_t>(n)); }
  void add(int64_t r, int64_t c) { rows.push_back(r), cols.push_back(c), vals.push_back(value()); }
  void add_row(int64_t r, const std::set<int64_t> &c) {
    for (int64_t j : c) add(r, j);
  }
  TestMatrix take(const std::string &name, int64_t n) {
    stf_coo g{};
    g.nrows = g.ncols = n;
    g.nnz = static_cast<int64_t>(vals.size());
    // stf_coo_free releases these with free().
    g.row = static_cast<int64_t *>(std::malloc(std::max<std::size_t>(1, rows.size()) * sizeof(int64_t)));
    g.col = static_cast<int64_t *>(std::malloc(std::max<std::size_t>(1, cols.size()) * sizeof(int64_t)));
    g.val = static_cast<double *>(std::malloc(std::max<std::size_t>(1, vals.size()) * sizeof(double)));
    for (std::size_t k = 0; k < vals.size(); k++) g.row[k] = rows[k], g.col[k] = cols[k], g.val[k] = vals[k];
    return TestMatrix{name, g};
  }
};

TestMatrix random_lengths(int64_t n, unsigned seed) {
  Builder b(seed);
  for (int64_t r = 0; r < n; r++) {
    std::set<int64_t> c;
    const int64_t len = b.below(13);
    while (static_cast<int64_t>(c.size()) < len) c.insert(b.below(n));
    b.add_row(r, c);
  }
  return b.take("random", n);
}

TestMatrix identical_rows(int64_t n, unsigned seed) {
  Builder b(seed);
  const std::set<int64_t> c = {0, 1, n / 3, n / 2, 2 * n / 3 + 1, n - 2, n - 1};
  for (int64_t r = 0; r < n; r++) b.add_row(r, c);
  return b.take("identical", n);
}

TestMatrix distinct_rows(int64_t n, unsigned seed) {
  Builder b(seed);
  for (int64_t r = 0; r < n; r++) {
    std::set<int64_t> c = {r};  // the diagonal: no two rows alike
    while (c.size() < 6) c.insert(b.below(n));
    b.add_row(r, c);
  }
  return b.take("distinct", n);
}

TestMatrix node_blocks(int64_t n, unsigned seed) {
  Builder b(seed);
  std::vector<int64_t> first = {0};  // first unknown of each node
  while (first.back() < n)  // node k has 1 + (7k mod 11) unknowns
    first.push_back(std::min(n, first.back() + 1 + (static_cast<int64_t>(first.size()) * 7) % 11));
  const int64_t nodes = static_cast<int64_t>(first.size()) - 1;
  for (int64_t k = 0; k < nodes; k++) {
    std::set<int64_t> c;
    for (int64_t m : {k - 1, k, k + 1, (k * 5 + 3) % nodes})
      if (m >= 0 && m < nodes)
        for (int64_t j = first[m]; j < first[m + 1]; j++) c.insert(j);
    for (int64_t r = first[k]; r < first[k + 1]; r++) b.add_row(r, c);
  }
  return b.take("nodes", n);
}

TestMatrix long_rows(int64_t n, unsigned seed) {
  Builder b(seed);
  for (int64_t r = 0; r < n; r++) {
    const int64_t len = 16 + b.below(285);
    for (int64_t e = 0; e < len; e++) b.add(r, b.below(n));  // repeats are summed
  }
  return b.take("long", n);
}

TestMatrix mostly_empty(int64_t n, unsigned seed) {
  Builder b(seed);
  for (int64_t r = 0; r < n; r++)
    if (b.below(10) < 3) b.add(r, b.below(n));
  return b.take("empty", n);
}

}  // namespace

std::vector<TestMatrix> csr_test_matrices(int64_t n, unsigned seed) {
  return {random_lengths(n, seed),  identical_rows(n, seed + 1), distinct_rows(n, seed + 2),
          node_blocks(n, seed + 3), long_rows(n / 4, seed + 4),  mostly_empty(n, seed + 5)};
}

std::vector<std::string> matrix_names(const char *dir) {
  std::vector<std::string> names;
  if (DIR *d = opendir(dir)) {
    while (dirent *e = readdir(d)) {
      const std::string f = e->d_name;
      if (f.size() > 7 && f.compare(f.size() - 7, 7, ".mtx.gz") == 0) names.push_back(f.substr(0, f.size() - 7));
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

void row_loop(const stf_coo &a, const std::vector<double> &x, bool transpose, std::vector<double> *y,
              std::vector<double> *scale) {
  // Entries row by row (counting sort, file order within a row).
  std::vector<int64_t> start(a.nrows + 1, 0), order(a.nnz);
  for (int64_t k = 0; k < a.nnz; k++) start[a.row[k] + 1]++;
  for (int64_t r = 0; r < a.nrows; r++) start[r + 1] += start[r];
  for (int64_t k = 0; k < a.nnz; k++) order[start[a.row[k]]++] = k;
  y->assign(a.nrows, 0.0);
  scale->assign(a.nrows, 0.0);
  for (int64_t k : order) {
    const int64_t out = transpose ? a.col[k] : a.row[k], in = transpose ? a.row[k] : a.col[k];
    (*y)[out] += a.val[k] * x[in];
    (*scale)[out] += std::fabs(a.val[k] * x[in]);
  }
}

}  // namespace stft
