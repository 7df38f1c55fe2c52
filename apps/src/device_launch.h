// Kernels of the apps library, written once for every device: a functor
//   struct F { STF_APPS_HD void operator()(int64_t i) const; };
// run for i in [0, n) on a stream of the active device. "host" and "emu" run
// it through stf_device_launch; "cuda" through a __global__ kernel that nvcc
// compiles from the same functor (device_cuda.cu, which instantiates it for
// each functor the apps launch). The core library's pack kernels are written
// the same way.
#pragma once

#include <cstddef>
#include <cstdint>

#include "apps_error.h"
#include "stf_apps.h"

#ifdef __CUDACC__
#define STF_APPS_HD __host__ __device__
#define STF_APPS_NOINLINE __noinline__
#else
#define STF_APPS_HD
#define STF_APPS_NOINLINE __attribute__((noinline))
#endif

namespace stf_apps {

bool active_device_is_cuda();

#if STF_APPS_HAVE_CUDA
template <class F>
int cuda_launch(stf_stream s, int64_t n, const F &f, const char *what);
#else
template <class F>
int cuda_launch(stf_stream, int64_t, const F &, const char *what) {
  return fail(STF_ERR_UNSUPPORTED, "%s: the apps library was built without CUDA", what);
}
#endif

template <class F>
void run_range(int64_t begin, int64_t end, void *ctx) {
  const F &f = *static_cast<const F *>(ctx);
  for (int64_t i = begin; i < end; i++) f(i);
}

// (*f)(i) for i in [0, n), enqueued on s (NULL: the library stream). *f must
// stay valid until the work ran: "emu" reads it from its threads (CUDA
// copies it at the launch).
template <class F>
int launch(stf_stream s, int64_t n, const F *f, const char *what) {
  if (active_device_is_cuda()) return cuda_launch(s, n, *f, what);
  return core(stf_device_launch(s, n, run_range<F>, const_cast<F *>(f)), what);
}

#if STF_APPS_HAVE_CUDA
int cuda_launch_host(stf_stream s, void (*fn)(void *), void *ctx, const char *what);
#endif

template <class H>
void call_host(void *ctx) {
  (*static_cast<H *>(ctx))();
}
template <class H>
void call_host_range(int64_t, int64_t, void *ctx) {
  call_host<H>(ctx);
}

// (*h)() on the host once the work enqueued on s before it is done; later
// work on s waits for it (the calling thread does not). It runs on a thread
// of the device's: on "cuda" CUDA's callback thread, where no CUDA call may
// be made; elsewhere as a kernel of one item. *h must stay valid until it ran.
template <class H>
int launch_host(stf_stream s, H *h, const char *what) {
#if STF_APPS_HAVE_CUDA
  if (active_device_is_cuda()) return cuda_launch_host(s, call_host<H>, h, what);
#endif
  return core(stf_device_launch(s, 1, call_host_range<H>, h), what);
}

// Host memory that copies enqueued on a stream read and write without the
// host waiting: pinned on "cuda" (CUDA copies to pageable memory
// synchronously), ordinary memory elsewhere. Zeroed.
class HostStage {
 public:
  HostStage() = default;
  HostStage(const HostStage &) = delete;
  HostStage &operator=(const HostStage &) = delete;
  ~HostStage();
  int alloc(std::size_t bytes, const char *what);
  void *data() const { return p_; }

 private:
  void *p_ = nullptr;
  bool pinned_ = false;
};

#if STF_APPS_HAVE_CUDA
int cuda_pinned_alloc(std::size_t bytes, void **p, const char *what);
void cuda_pinned_free(void *p);
#endif

}  // namespace stf_apps
