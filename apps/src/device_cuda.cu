// The apps library's kernels on "cuda": each functor the apps launch
// (device_launch.h), compiled by nvcc and run by one grid-stride __global__
// kernel; and what else needs the CUDA runtime: host functions in a
// stream's order and pinned staging memory. Built only with CUDA.
#include <cuda_runtime.h>

#include <algorithm>

#include "cg_kernels.h"
#include "csr_kernels.h"
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

template int cuda_launch(stf_stream, int64_t, const BlockMult &, const char *);
template int cuda_launch(stf_stream, int64_t, const cg::ZeroScalars &, const char *);
template int cuda_launch(stf_stream, int64_t, const cg::Residual &, const char *);
template int cuda_launch(stf_stream, int64_t, const cg::DotPartial &, const char *);
template int cuda_launch(stf_stream, int64_t, const cg::SumLocal &, const char *);
template int cuda_launch(stf_stream, int64_t, const cg::Apply &, const char *);
template int cuda_launch(stf_stream, int64_t, const cg::UpdateXR<cg::Known> &, const char *);
template int cuda_launch(stf_stream, int64_t, const cg::UpdateXR<cg::OnDevice> &, const char *);
template int cuda_launch(stf_stream, int64_t, const cg::UpdateP<cg::Known> &, const char *);
template int cuda_launch(stf_stream, int64_t, const cg::UpdateP<cg::OnDevice> &, const char *);

int cuda_launch_host(stf_stream s, void (*fn)(void *), void *ctx, const char *what) {
  return cuda_fail(cudaLaunchHostFunc(native(s), fn, ctx), what);
}

int cuda_pinned_alloc(std::size_t bytes, void **p, const char *what) {
  return cuda_fail(cudaMallocHost(p, bytes ? bytes : 1), what);
}

void cuda_pinned_free(void *p) {
  if (p) cudaFreeHost(p);
}

}  // namespace stf_apps
