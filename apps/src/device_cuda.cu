// The apps library's kernels on "cuda": each functor the apps launch
// (device_launch.h), compiled by nvcc and run by one grid-stride __global__
// kernel (device_launch_cuda.cuh); and what else needs the CUDA runtime:
// host functions in a stream's order and pinned staging memory. Built only
// with CUDA.
#include "cg_kernels.h"
#include "csr_kernels.h"
#include "device_launch_cuda.cuh"

namespace stf_apps {

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
