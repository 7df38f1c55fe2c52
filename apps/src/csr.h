// The distributed CSR matrix object, shared by the SpMV and CG files.
#pragma once

#include <vector>

#include "csr_block.h"
#include "stf_apps.h"

namespace stf_apps {
struct CsrDevice;  // the device copy (csr_device.cpp)
// Free the device copy, after the device finished with it.
int release_device(stf_csr A);
}  // namespace stf_apps

struct stf_csr_s {
  MPI_Comm comm = MPI_COMM_NULL;  // private duplicate: CG's allreduces never meet other traffic
  int64_t nglobal = 0, first = 0;
  stf_int nlocal = 0, nghost = 0;
  std::vector<int64_t> ghost_cols;  // global column of each ghost, ascending
  stf_apps::CsrBlock diag, off;     // off's columns index ghost entries; off stores its rows with entries only
  stf_apps::CsrBlock diag_t, off_t; // their transposes (off_t: a row per ghost), after the first mult_transpose
  bool transposed = false;
  stf_sf ghost_sf = nullptr;
  std::vector<double> ghost, ghost_t, work;  // ghost values, transposed contributions, their sums (zero between calls)
  std::vector<stf_int> ghosted_rows;          // rows that other ranks hold as ghosts
  bool alone = false;                         // one rank: nothing to exchange
  stf_apps::CsrDevice *dev = nullptr;         // after stf_csr_to_device
};
