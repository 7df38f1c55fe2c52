#include "device_matrices.h"

#include <sys/stat.h>

#include <cstdlib>

namespace stft {

stf_coo laplacian_2d(int m) {
  std::vector<int64_t> rows, cols;
  std::vector<double> vals;
  auto add = [&](int64_t r, int64_t c, double v) { rows.push_back(r), cols.push_back(c), vals.push_back(v); };
  for (int i = 0; i < m; i++)
    for (int j = 0; j < m; j++) {
      const int64_t r = static_cast<int64_t>(i) * m + j;
      add(r, r, 4.0);
      if (i > 0) add(r, r - m, -1.0);
      if (i < m - 1) add(r, r + m, -1.0);
      if (j > 0) add(r, r - 1, -1.0);
      if (j < m - 1) add(r, r + 1, -1.0);
    }
  stf_coo g{};
  g.nrows = g.ncols = static_cast<int64_t>(m) * m;
  g.nnz = static_cast<int64_t>(vals.size());
  // stf_coo_free releases these with free().
  g.row = static_cast<int64_t *>(std::malloc(rows.size() * sizeof(int64_t)));
  g.col = static_cast<int64_t *>(std::malloc(cols.size() * sizeof(int64_t)));
  g.val = static_cast<double *>(std::malloc(vals.size() * sizeof(double)));
  for (std::size_t k = 0; k < vals.size(); k++) g.row[k] = rows[k], g.col[k] = cols[k], g.val[k] = vals[k];
  return g;
}

const char *test_device() {
  const char *d = std::getenv("STF_DEVICE");
  return d && *d ? d : "emu";
}

std::string matrix_dir() {
  const char *d = std::getenv("STF_SHARED_MATRICES");
  return d && *d ? d : STF_MATRIX_DIR;
}

bool shared_matrices_present() {
  struct stat st;
  return stat(matrix_dir().c_str(), &st) == 0;
}

bool read_shared_matrix(Checker &ck, const char *name, stf_coo *out) {
  *out = stf_coo{};
  const std::string path = matrix_dir() + "/" + name + ".mtx.gz";
  return ck.code(stf_mm_read(path.c_str(), out), STF_SUCCESS, path.c_str());
}

std::vector<double> serial_mult(const stf_coo &g, const std::vector<double> &x) {
  std::vector<double> y(g.nrows, 0.0);
  for (int64_t k = 0; k < g.nnz; k++) y[g.row[k]] += g.val[k] * x[g.col[k]];
  return y;
}

DeviceVec::DeviceVec(Checker &ck, std::size_t n) : n_(n) {
  void *p = nullptr;
  ck.code(stf_device_malloc(n * sizeof(double), &p), STF_SUCCESS, "stf_device_malloc");
  p_ = static_cast<double *>(p);
}

DeviceVec::DeviceVec(Checker &ck, const std::vector<double> &host) : DeviceVec(ck, host.size()) {
  if (p_ && n_) ck.code(stf_device_memcpy(p_, host.data(), n_ * sizeof(double)), STF_SUCCESS, "memcpy h2d");
}

DeviceVec::~DeviceVec() {
  if (p_) stf_device_free(p_);
}

std::vector<double> DeviceVec::fetch(Checker &ck) const {
  std::vector<double> h(n_);
  if (p_ && n_) ck.code(stf_device_memcpy(h.data(), p_, n_ * sizeof(double)), STF_SUCCESS, "memcpy d2h");
  return h;
}

}  // namespace stft
