// The CUDA side of device_launch.h, for the .cu files that instantiate
// cuda_launch for their functors (the apps' device_cuda.cu, the halo3d
// benchmark's device baseline): one grid-stride __global__ kernel per
// functor type.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>

#include "device_launch.h"

namespace stf_apps {
namespace {

template <class F>
__global__ void run(F f, int64_t n) {
  const long long stride = static_cast<long long>(blockDim.x) * gridDim.x;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n; i += stride) f(i);
}

// An stf_stream on "cuda" is the CUDA stream itself; NULL is the library's.
cudaStream_t native(stf_stream s) {
  if (!s) stf_device_get_stream(&s);
  return reinterpret_cast<cudaStream_t>(s);
}

int cuda_fail(cudaError_t e, const char *what) {
  if (e == cudaSuccess) return STF_SUCCESS;
  cudaGetLastError();
  return fail(STF_ERR_DEVICE, "%s: CUDA: %s", what, cudaGetErrorString(e));
}

}  // namespace

template <class F>
int cuda_launch(stf_stream s, int64_t n, const F &f, const char *what) {
  constexpr int kBlock = 256;
  constexpr long long kMaxBlocks = 65536;  // enough to fill a large GPU; longer ranges loop
  if (n <= 0) return STF_SUCCESS;
  const long long blocks = std::min<long long>((n + kBlock - 1) / kBlock, kMaxBlocks);
  run<<<static_cast<unsigned>(blocks), kBlock, 0, native(s)>>>(f, n);
  return cuda_fail(cudaGetLastError(), what);
}

}  // namespace stf_apps
