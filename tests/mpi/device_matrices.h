// Helpers of the device app tests: test matrices (a generated SPD one and
// the shared ones) and vectors moved between host and device memory.
#pragma once

#include <string>
#include <vector>

#include "check.h"
#include "stf_apps.h"

namespace stft {

// The 5-point Laplacian on an m x m grid (SPD, m*m rows): 4 on the
// diagonal, -1 to each grid neighbour.
stf_coo laplacian_2d(int m);
// The device the tests run on: $STF_DEVICE (the GPU checks set "cuda"), or
// "emu".
const char *test_device();
// Where the shared matrices are: $STF_SHARED_MATRICES, or STF_MATRIX_DIR.
std::string matrix_dir();
// Whether the shared matrices are present (tests exit 77 after the
// generated cases when not).
bool shared_matrices_present();
// Read <matrix_dir()>/<name>.mtx.gz; false (with a failed check) on error.
bool read_shared_matrix(Checker &ck, const char *name, stf_coo *out);
// y = A x on the global matrix, serially.
std::vector<double> serial_mult(const stf_coo &g, const std::vector<double> &x);

// A vector of doubles in device memory, freed at the end of its scope.
class DeviceVec {
 public:
  DeviceVec(Checker &ck, std::size_t n);
  DeviceVec(Checker &ck, const std::vector<double> &host);
  ~DeviceVec();
  DeviceVec(const DeviceVec &) = delete;
  DeviceVec &operator=(const DeviceVec &) = delete;
  double *data() { return p_; }
  // Copy to the host (waits for the library stream).
  std::vector<double> fetch(Checker &ck) const;

 private:
  double *p_ = nullptr;
  std::size_t n_;
};

}  // namespace stft
