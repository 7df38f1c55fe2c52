// The device kernel table for CUDA: the functors of kernels/functors.h,
// compiled by nvcc, each run by one grid-stride __global__ kernel. The table
// itself is the one every backend shares (device_kernels_impl.h).
#include <cuda_runtime.h>

#include <algorithm>

#include "device/cuda/cuda_check.h"
#include "device/cuda/cuda_kernels.h"
#include "device/device_kernels_impl.h"

namespace stf {
namespace {

// f(i) for i in [0, n); i in 64 bits, so the stride never overflows stf_int.
template <class F>
__global__ void run(F f, stf_int n) {
  const long long stride = static_cast<long long>(blockDim.x) * gridDim.x;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n; i += stride)
    f(static_cast<stf_int>(i));
}

struct CudaLaunch {
  static constexpr int kBlock = 256;
  // Enough blocks to fill a large GPU; longer lists loop.
  static constexpr long long kMaxBlocks = 65536;
  template <class F>
  static int run(Device &d, Stream s, stf_int n, const F &f) {
    if (n <= 0) return STF_SUCCESS;
    d.counters.kernel_launches++;
    const long long blocks = std::min<long long>((static_cast<long long>(n) + kBlock - 1) / kBlock, kMaxBlocks);
    stf::run<<<static_cast<unsigned>(blocks), kBlock, 0, static_cast<cudaStream_t>(s)>>>(f, n);
    return cuda_error(cudaGetLastError(), "kernel launch");
  }
};

constexpr DeviceKernelTable kCudaTable = make_kernel_table<CudaLaunch>();

}  // namespace

const DeviceKernelTable &cuda_kernel_table() { return kCudaTable; }

}  // namespace stf
