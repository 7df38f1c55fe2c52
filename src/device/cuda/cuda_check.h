// CUDA errors where the Device interface has no error path (launches,
// asynchronous copies, synchronisation): fatal, with the runtime's message,
// rather than silently wrong data.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>

namespace stf {

inline void cuda_or_die(cudaError_t e, const char *what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "starforest: CUDA %s failed: %s\n", what, cudaGetErrorString(e));
  std::abort();
}

}  // namespace stf
