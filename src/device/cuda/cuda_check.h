// CUDA runtime errors become stf_errors (STF_ERR_DEVICE) with the runtime's
// own message; the runtime's last error is cleared so the next call starts
// clean.
#pragma once

#include <cuda_runtime_api.h>

#include "core/error.h"

namespace stf {

inline int cuda_error(cudaError_t e, const char *what) {
  if (e == cudaSuccess) return STF_SUCCESS;
  cudaGetLastError();
  return set_error(STF_ERR_DEVICE, "CUDA %s failed: %s", what, cudaGetErrorString(e));
}

}  // namespace stf
