#include "stencils.h"

#include <cstdlib>
#include <vector>

namespace bench {

bool stencil_matrix(const std::string &name, stf_coo *out) {
  const std::size_t cut = name.rfind('_');
  if (cut == std::string::npos) return false;
  const std::string kind = name.substr(0, cut);
  const long n = std::atol(name.c_str() + cut + 1);
  if ((kind != "lap3d7" && kind != "elast3d27") || n < 2) return false;
  if (!out) return true;
  const bool elastic = kind == "elast3d27";
  const int dof = elastic ? 3 : 1;
  std::vector<int64_t> rows, cols;
  std::vector<double> vals;
  for (long k = 0; k < n; ++k)
    for (long j = 0; j < n; ++j)
      for (long i = 0; i < n; ++i) {
        const int64_t node = (k * n + j) * n + i;
        for (long dk = -1; dk <= 1; ++dk)
          for (long dj = -1; dj <= 1; ++dj)
            for (long di = -1; di <= 1; ++di) {
              const int far = (di != 0) + (dj != 0) + (dk != 0);
              if ((!elastic && far > 1) || i + di < 0 || i + di >= n || j + dj < 0 || j + dj >= n || k + dk < 0 ||
                  k + dk >= n)
                continue;
              const int64_t other = ((k + dk) * n + (j + dj)) * n + (i + di);
              for (int a = 0; a < dof; ++a)
                for (int b = 0; b < dof; ++b) {
                  rows.push_back(node * dof + a);
                  cols.push_back(other * dof + b);
                  vals.push_back(far == 0 ? (a == b ? 6.0 * dof : 0.5) : -1.0 / (far + (a != b)));
                }
            }
      }
  stf_coo g{};
  g.nrows = g.ncols = static_cast<int64_t>(n) * n * n * dof;
  g.nnz = static_cast<int64_t>(vals.size());
  // stf_coo_free releases these with free().
  g.row = static_cast<int64_t *>(std::malloc(rows.size() * sizeof(int64_t)));
  g.col = static_cast<int64_t *>(std::malloc(cols.size() * sizeof(int64_t)));
  g.val = static_cast<double *>(std::malloc(vals.size() * sizeof(double)));
  if (!g.row || !g.col || !g.val) {
    stf_coo_free(&g);
    return false;
  }
  for (std::size_t e = 0; e < vals.size(); ++e) g.row[e] = rows[e], g.col[e] = cols[e], g.val[e] = vals[e];
  *out = g;
  return true;
}

}  // namespace bench
