// The CUDA backend: device memory from cudaMalloc, the library stream and
// user streams are CUDA streams, events are CUDA events, kernels are the
// nvcc-compiled functors of cuda_kernels.cu. The active GPU is the calling
// thread's current CUDA device (cudaSetDevice before first use).
#include <cuda_runtime_api.h>

#include <cstring>
#include <map>
#include <mutex>

#include <mpi.h>
#if defined(STF_HAVE_MPIX_QUERY_CUDA_SUPPORT)
#include <mpi-ext.h>
#endif

#include "core/error.h"
#include "device/cuda/cuda_check.h"
#include "device/cuda/cuda_kernels.h"
#include "device/cuda/cuda_memops.h"
#include "device/device.h"

namespace stf {
namespace {

// Whether the MPI library takes device pointers: Open MPI says so through
// mpi-ext.h, at build time (MPIX_CUDA_AWARE_SUPPORT) and at run time
// (MPIX_Query_cuda_support). Without the extension: assume not.
bool query_mpi_cuda_support() {
#if defined(STF_HAVE_MPIX_QUERY_CUDA_SUPPORT) && defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

class CudaDevice final : public Device {
 public:
  explicit CudaDevice(cudaStream_t library) : library_(library) {}
  ~CudaDevice() override {
    cudaStreamDestroy(library_);
    for (auto &b : blocks_) {
      void *p = reinterpret_cast<void *>(b.first);
      if (b.second.kind == Kind::mapped) cudaIpcCloseMemHandle(p);
      else (b.second.kind == Kind::device ? cudaFree : cudaFreeHost)(p);
    }
  }
  const char *name() const override { return "cuda"; }

  int alloc(std::size_t bytes, void **ptr) override {
    // Never zero bytes, so every block has its own address range.
    const cudaError_t e = cudaMalloc(ptr, bytes ? bytes : 1);
    if (e != cudaSuccess) return alloc_error(e, "cudaMalloc", bytes);
    remember(*ptr, bytes, Kind::device);
    return STF_SUCCESS;
  }
  int free(void *ptr) override {
    return forget(ptr, Kind::device) ? cuda_error(cudaFree(ptr), "cudaFree") : STF_SUCCESS;
  }
  int alloc_pinned(std::size_t bytes, void **ptr) override {
    const cudaError_t e = cudaMallocHost(ptr, bytes ? bytes : 1);
    if (e != cudaSuccess) return alloc_error(e, "cudaMallocHost", bytes);
    remember(*ptr, bytes, Kind::pinned);
    return STF_SUCCESS;
  }
  int free_pinned(void *ptr) override {
    return forget(ptr, Kind::pinned) ? cuda_error(cudaFreeHost(ptr), "cudaFreeHost") : STF_SUCCESS;
  }
  // CUDA IPC. Zeroed before the handle is given out: no peer may see old bytes.
  // Zeroed on a stream of its own that waits for no other (another SF's
  // stream may wait for a peer that is in this set-up).
  int alloc_shared(std::size_t bytes, void **ptr, SharedHandle *h) override {
    static_assert(sizeof(cudaIpcMemHandle_t) <= sizeof(h->data), "an IPC handle fits the handle's bytes");
    STF_CHECK(alloc(bytes, ptr));
    cudaIpcMemHandle_t ipc{};
    cudaStream_t zeroing = nullptr;
    int rc = cuda_error(cudaStreamCreateWithFlags(&zeroing, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    if (!rc) rc = cuda_error(cudaMemsetAsync(*ptr, 0, bytes, zeroing), "cudaMemsetAsync");
    if (!rc) rc = cuda_error(cudaStreamSynchronize(zeroing), "cudaStreamSynchronize");
    if (zeroing) cudaStreamDestroy(zeroing);
    if (!rc) rc = cuda_error(cudaIpcGetMemHandle(&ipc, *ptr), "cudaIpcGetMemHandle");
    if (rc) {
      free(*ptr);
      *ptr = nullptr;
      return rc;
    }
    *h = SharedHandle{};
    std::memcpy(h->data, &ipc, sizeof ipc);
    h->bytes = bytes;
    return STF_SUCCESS;
  }
  int map_shared(const SharedHandle &h, void **ptr) override {
    cudaIpcMemHandle_t ipc;
    std::memcpy(&ipc, h.data, sizeof ipc);
    STF_CHECK(cuda_error(cudaIpcOpenMemHandle(ptr, ipc, cudaIpcMemLazyEnablePeerAccess), "cudaIpcOpenMemHandle"));
    remember(*ptr, h.bytes, Kind::mapped);
    return STF_SUCCESS;
  }
  int unmap_shared(void *ptr) override {
    return forget(ptr, Kind::mapped) ? cuda_error(cudaIpcCloseMemHandle(ptr), "cudaIpcCloseMemHandle") : STF_SUCCESS;
  }
  int stream_write_word(Stream s, std::uint64_t *word, std::uint64_t value) override {
    return cuda_stream_write_word(stream(s), word, value);
  }
  int stream_wait_word(Stream s, const std::uint64_t *word, std::uint64_t value) override {
    return cuda_stream_wait_word(stream(s), word, value);
  }

  // Our own blocks answer from their address ranges; only pointers we did
  // not allocate ask the driver (counted: the slow case).
  stf_memtype memtype(const void *ptr) override {
    if (!ptr) return STF_MEMTYPE_HOST;
    const auto key = reinterpret_cast<std::uintptr_t>(ptr);
    {
      std::lock_guard<std::mutex> l(m_);
      auto it = blocks_.upper_bound(key);
      if (it != blocks_.begin() && key < std::prev(it)->first + std::prev(it)->second.bytes)
        return std::prev(it)->second.kind == Kind::pinned ? STF_MEMTYPE_HOST : STF_MEMTYPE_DEVICE;
    }
    counters.memtype_queries++;
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, ptr) != cudaSuccess) {
      cudaGetLastError();  // older runtimes fail on plain host memory: clear it
      return STF_MEMTYPE_HOST;
    }
    return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged ? STF_MEMTYPE_DEVICE
                                                                            : STF_MEMTYPE_HOST;
  }
  long long live_allocations() const override {
    std::lock_guard<std::mutex> l(m_);
    return device_blocks_;
  }

  int stream_create(Stream *s) override {
    cudaStream_t st = nullptr;
    STF_CHECK(cuda_error(cudaStreamCreate(&st), "cudaStreamCreate"));
    *s = st;
    return STF_SUCCESS;
  }
  int stream_destroy(Stream s) override {
    return s && s != library_ ? cuda_error(cudaStreamDestroy(stream(s)), "cudaStreamDestroy") : STF_SUCCESS;
  }
  Stream own_stream() override { return library_; }
  bool runs_host_functions() override { return false; }
  bool kernels_reach_host_memory() override { return false; }
  // Asked on first use: the device may be selected before MPI_Init.
  bool mpi_accepts_device_memory() override {
    std::call_once(mpi_asked_, [this] { mpi_aware_ = query_mpi_cuda_support(); });
    return mpi_aware_;
  }

  int memcpy_async(void *dst, const void *src, std::size_t bytes, CopyKind kind, Stream s) override {
    count_copy(kind);
    return cuda_error(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream(s)), "cudaMemcpyAsync");
  }

  const DeviceKernelTable &kernel_table() const override { return cuda_kernel_table(); }

  int event_create(Event *e) override {
    cudaEvent_t ev = nullptr;
    STF_CHECK(cuda_error(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "cudaEventCreate"));
    *e = ev;
    return STF_SUCCESS;
  }
  int event_destroy(Event e) override {
    return cuda_error(cudaEventDestroy(static_cast<cudaEvent_t>(e)), "cudaEventDestroy");
  }
  int event_record(Event e, Stream s) override {
    return cuda_error(cudaEventRecord(static_cast<cudaEvent_t>(e), stream(s)), "cudaEventRecord");
  }
  int stream_wait_event(Stream s, Event e) override {
    return cuda_error(cudaStreamWaitEvent(stream(s), static_cast<cudaEvent_t>(e), 0), "cudaStreamWaitEvent");
  }
  int event_query(Event e, bool *done) override {
    const cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(e));
    *done = err != cudaErrorNotReady;
    return err == cudaErrorNotReady ? STF_SUCCESS : cuda_error(err, "cudaEventQuery");
  }
  int event_synchronize(Event e) override {
    counters.event_syncs++;
    return cuda_error(cudaEventSynchronize(static_cast<cudaEvent_t>(e)), "cudaEventSynchronize");
  }
  int stream_synchronize(Stream s) override {
    counters.stream_syncs++;
    return cuda_error(cudaStreamSynchronize(stream(s)), "cudaStreamSynchronize");
  }
  int synchronize() override {
    counters.device_syncs++;
    return cuda_error(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  }

 protected:
  // Type-erased host tasks cannot run on a GPU; this backend's kernels come
  // from kernel_table() (stf_device_launch refuses it before getting here).
  int launch_task(Stream, stf_int, Task) override {
    return set_error(STF_ERR_UNSUPPORTED, "the cuda device cannot run host functions as kernels");
  }

 private:
  enum class Kind { device, pinned, mapped };  // mapped: another process's block (IPC)
  struct Block {
    std::size_t bytes;
    Kind kind;
  };
  // nullptr is the library stream, as on emu.
  cudaStream_t stream(Stream s) const { return static_cast<cudaStream_t>(s ? s : library_); }
  static int alloc_error(cudaError_t e, const char *call, std::size_t bytes) {
    cudaGetLastError();
    return set_error(STF_ERR_MEMORY, "%s of %zu bytes: %s", call, bytes, cudaGetErrorString(e));
  }
  void remember(void *p, std::size_t bytes, Kind kind) {
    std::lock_guard<std::mutex> l(m_);
    blocks_[reinterpret_cast<std::uintptr_t>(p)] = Block{bytes ? bytes : 1, kind};
    device_blocks_ += kind != Kind::pinned;
  }
  // Whether p was ours (of that kind); ignored otherwise, like freeing twice.
  bool forget(void *p, Kind kind) {
    std::lock_guard<std::mutex> l(m_);
    auto it = blocks_.find(reinterpret_cast<std::uintptr_t>(p));
    if (!p || it == blocks_.end() || it->second.kind != kind) return false;
    blocks_.erase(it);
    device_blocks_ -= kind != Kind::pinned;
    return true;
  }

  mutable std::mutex m_;  // blocks_, device_blocks_
  std::map<std::uintptr_t, Block> blocks_;
  long long device_blocks_ = 0;
  cudaStream_t library_;
  std::once_flag mpi_asked_;
  bool mpi_aware_ = false;
};

}  // namespace

int make_cuda_device(std::unique_ptr<Device> *out) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    cudaGetLastError();
    // Without a GPU the runtime may blame the driver's version (no driver at
    // all); say what it means.
    if (e == cudaSuccess || e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver)
      return set_error(STF_ERR_UNSUPPORTED, "device 'cuda': no CUDA device (no GPU or no NVIDIA driver here)");
    return set_error(STF_ERR_UNSUPPORTED, "device 'cuda': no CUDA device usable (%s)", cudaGetErrorString(e));
  }
  // A blocking stream: work the user queued on the legacy default stream
  // is ordered before the library's.
  cudaStream_t library = nullptr;
  const cudaError_t se = cudaStreamCreate(&library);
  if (se != cudaSuccess) {
    cudaGetLastError();
    return set_error(STF_ERR_UNSUPPORTED, "device 'cuda': cudaStreamCreate: %s", cudaGetErrorString(se));
  }
  out->reset(new CudaDevice(library));
  return STF_SUCCESS;
}

}  // namespace stf
