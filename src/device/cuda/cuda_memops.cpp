#include "device/cuda/cuda_memops.h"

#include <cuda.h>  // types and flags only: every driver call goes through an entry point

#include <mutex>
#include <string>

#include "core/error.h"

namespace stf {
namespace {

using WriteValue = CUresult (*)(CUstream, CUdeviceptr, cuuint64_t, unsigned int);
using WaitValue = CUresult (*)(CUstream, CUdeviceptr, cuuint64_t, unsigned int);
using DeviceAttribute = CUresult (*)(int *, CUdevice_attribute, CUdevice);
using DeviceGet = CUresult (*)(CUdevice *, int);

struct MemOps {
  WriteValue write = nullptr;
  WaitValue wait = nullptr;
  std::string missing;  // why there are none
};

template <class F>
bool entry(const char *symbol, F *out) {
  void *fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess || !fn) {
    cudaGetLastError();
    return false;
  }
  *out = reinterpret_cast<F>(fn);
  return true;
}

// Looked up once per process, on the GPU current then.
const MemOps &memops() {
  static MemOps ops;
  static std::once_flag once;
  std::call_once(once, [] {
    DeviceAttribute attribute = nullptr;
    DeviceGet device_get = nullptr;
    int ordinal = 0, can = 0;
    CUdevice gpu{};
    if (!entry("cuStreamWriteValue64", &ops.write) || !entry("cuStreamWaitValue64", &ops.wait) ||
        !entry("cuDeviceGetAttribute", &attribute) || !entry("cuDeviceGet", &device_get)) {
      ops.missing = "the CUDA driver has no 64-bit stream memory operations";
    } else if (cudaGetDevice(&ordinal) != cudaSuccess || device_get(&gpu, ordinal) != CUDA_SUCCESS ||
               attribute(&can, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, gpu) != CUDA_SUCCESS || !can) {
      cudaGetLastError();
      ops.missing = "this GPU does not support 64-bit stream memory operations";
    }
    if (!ops.missing.empty()) ops.write = nullptr, ops.wait = nullptr;
  });
  return ops;
}

int driver_error(CUresult r, const char *call) {
  return r == CUDA_SUCCESS ? STF_SUCCESS : set_error(STF_ERR_DEVICE, "CUDA %s failed: driver error %d", call, int(r));
}

}  // namespace

int cuda_stream_write_word(cudaStream_t s, std::uint64_t *word, std::uint64_t value) {
  const MemOps &ops = memops();
  if (!ops.write) return set_error(STF_ERR_UNSUPPORTED, "device 'cuda': %s", ops.missing.c_str());
  // The default flags order the store after the stream's earlier writes.
  return driver_error(ops.write(reinterpret_cast<CUstream>(s), reinterpret_cast<CUdeviceptr>(word), value,
                                CU_STREAM_WRITE_VALUE_DEFAULT),
                      "cuStreamWriteValue64");
}

int cuda_stream_wait_word(cudaStream_t s, const std::uint64_t *word, std::uint64_t value) {
  const MemOps &ops = memops();
  if (!ops.wait) return set_error(STF_ERR_UNSUPPORTED, "device 'cuda': %s", ops.missing.c_str());
  return driver_error(ops.wait(reinterpret_cast<CUstream>(s), reinterpret_cast<CUdeviceptr>(word), value,
                               CU_STREAM_WAIT_VALUE_GEQ),
                      "cuStreamWaitValue64");
}

}  // namespace stf
