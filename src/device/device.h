// The device interface: memory, streams, events and kernel launches, the
// way the ops layer sees a GPU. Backends (rows of registry.cpp): "host"
// (host.cpp: plain memory, every call completes at once), "emu" (emu.cpp: an
// emulated device whose memory is registered host memory, whose streams are
// worker threads and whose kernels run on a thread pool, so ordering bugs
// and data races are real) and "cuda" (cuda/cuda_device.cpp: the CUDA
// runtime, built when CMake finds CUDA). Every call that can fail on some
// backend returns an stf_error (STF_ERR_DEVICE with the runtime's message).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "starforest.h"

namespace stf {

struct DeviceKernelTable;

// Opaque handles owned by the backend that made them.
using Stream = void *;
using Event = void *;

enum class CopyKind { h2d, d2h, d2d, h2h };

// What a device has done since it was created. Atomic: any host thread may
// drive a device.
struct DeviceCounters {
  std::atomic<long long> device_syncs{0}, stream_syncs{0}, event_syncs{0};
  std::atomic<long long> kernel_launches{0}, copies_h2d{0}, copies_d2h{0}, copies_d2d{0};
  std::atomic<long long> memtype_queries{0};  // lookups the cache did not answer
};

// What another process of the node needs to map a block of device memory
// (alloc_shared): the backend's handle, and the block's size.
struct SharedHandle {
  unsigned char data[64] = {};
  std::uint64_t bytes = 0;
};

// A kernel body over a range [begin, end) of indices, type-erased.
using Task = std::function<void(stf_int begin, stf_int end)>;

class Device {
 public:
  virtual ~Device() = default;
  virtual const char *name() const = 0;

  virtual int alloc(std::size_t bytes, void **ptr) = 0;  // device memory
  virtual int free(void *ptr) = 0;                       // ignores pointers it did not allocate
  virtual int alloc_pinned(std::size_t bytes, void **ptr) = 0;  // page-locked host memory
  virtual int free_pinned(void *ptr) = 0;
  // Where ptr lives. Real backends ask the driver, which is slow, so
  // backends cache answers (see emu.cpp); NULL is host memory.
  virtual stf_memtype memtype(const void *ptr) = 0;
  // Device memory blocks not freed yet (switching devices needs none).
  virtual long long live_allocations() const = 0;

  virtual int stream_create(Stream *s) = 0;
  virtual int stream_destroy(Stream s) = 0;
  // The stream the library runs its kernels and copies on (stream model B:
  // the user's data is produced and consumed on it too): the backend's own
  // stream unless the user named one (stf_device_set_stream).
  Stream library_stream() { return user_stream_ ? user_stream_ : own_stream(); }
  void set_library_stream(Stream s) { user_stream_ = s; }
  Stream user_stream() const { return user_stream_; }
  bool is_own_stream(Stream s) { return s == own_stream(); }

  // Whether MPI may be handed pointers to this device's memory (the
  // device-aware path). Backends whose memory is host memory say yes; a GPU
  // backend asks its MPI library.
  virtual bool mpi_accepts_device_memory() { return true; }
  // Whether kernels may be host functions (stf_device_launch): true where
  // kernels run on CPU threads.
  virtual bool runs_host_functions() { return true; }
  // Whether kernels may read and write ordinary host memory (a transport's
  // shared heap): true where they run on CPU threads.
  virtual bool kernels_reach_host_memory() { return true; }

  // Device memory the other processes of a node can map, for transports
  // that move messages device to device (cuda: IPC handles; emu: named
  // shared memory). The block comes zeroed; free() releases it. A mapping
  // of another process's block is device memory here until unmap_shared.
  // Backends without it answer STF_ERR_UNSUPPORTED (device.cpp).
  virtual int alloc_shared(std::size_t bytes, void **ptr, SharedHandle *h);
  virtual int map_shared(const SharedHandle &h, void **ptr);
  virtual int unmap_shared(void *ptr);
  // Every process that maps the block ptr (from alloc_shared) has mapped
  // it: the backend may drop what let them find it (emu: the segment's
  // name, which a crash would otherwise leave behind; cuda: nothing).
  virtual void shared_mapped(void *) {}
  // Stream memory operations on a 64-bit word of device memory, its own or
  // mapped: a release store once everything queued before it on s is done,
  // and a wait that holds back what is queued after it on s until the word
  // is >= value. No host thread waits for either.
  virtual int stream_write_word(Stream s, std::uint64_t *word, std::uint64_t value);
  virtual int stream_wait_word(Stream s, const std::uint64_t *word, std::uint64_t value);

  virtual int memcpy_async(void *dst, const void *src, std::size_t bytes, CopyKind kind, Stream s) = 0;
  // The kind of a copy between these pointers, by where they live.
  CopyKind copy_kind(const void *dst, const void *src) {
    const bool dd = memtype(dst) == STF_MEMTYPE_DEVICE, sd = memtype(src) == STF_MEMTYPE_DEVICE;
    return dd && sd ? CopyKind::d2d : dd ? CopyKind::h2d : sd ? CopyKind::d2h : CopyKind::h2h;
  }

  // Run f(i) for i in [0, n) on stream s, in any order and concurrently.
  // f is copied: it must hold values and pointers only (the functors of
  // kernels/functors.h).
  template <class F>
  int launch(Stream s, stf_int n, const F &f) {
    return launch_ranges(s, n, [f](stf_int b, stf_int e) {
      for (stf_int i = b; i < e; ++i) f(i);
    });
  }

  // A type-erased kernel over [0, n), run as ranges on s (the public
  // stf_device_launch; host-callable bodies only).
  int launch_ranges(Stream s, stf_int n, Task task) {
    if (n <= 0) return STF_SUCCESS;
    counters.kernel_launches++;
    return launch_task(s, n, std::move(task));
  }
  // The pack/unpack/scatter kernels of this backend (device_kernels.h); by
  // default the functors run through launch().
  virtual const DeviceKernelTable &kernel_table() const;

  virtual int event_create(Event *e) = 0;
  virtual int event_destroy(Event e) = 0;
  // Capture the current end of s's queue; the event completes when s gets there.
  virtual int event_record(Event e, Stream s) = 0;
  // Work enqueued on s after this waits for e's captured position (no host wait).
  virtual int stream_wait_event(Stream s, Event e) = 0;
  // *done: whether e has completed; never blocks.
  virtual int event_query(Event e, bool *done) = 0;
  // The same, for callers that need no error: a failed query says "done",
  // and the error comes back from the next synchronisation.
  bool event_query(Event e) {
    bool done = true;
    return event_query(e, &done) != STF_SUCCESS || done;
  }
  virtual int event_synchronize(Event e) = 0;
  virtual int stream_synchronize(Stream s) = 0;
  virtual int synchronize() = 0;  // every stream

  DeviceCounters counters;

 protected:
  void count_copy(CopyKind kind) {
    if (kind == CopyKind::h2d) counters.copies_h2d++;
    else if (kind == CopyKind::d2h) counters.copies_d2h++;
    else if (kind == CopyKind::d2d) counters.copies_d2d++;
  }
  virtual Stream own_stream() = 0;
  virtual int launch_task(Stream s, stf_int n, Task task) = 0;

 private:
  Stream user_stream_ = nullptr;
};

std::unique_ptr<Device> make_host_device();
std::unique_ptr<Device> make_emu_device();
// STF_ERR_UNSUPPORTED when this build has no CUDA or the runtime finds no
// device.
int make_cuda_device(std::unique_ptr<Device> *out);

// The process-wide active device: chosen by stf_device_select(), else on
// first use from -stf_device / STF_DEVICE (default "host"; registry.cpp).
// Fails, every time, when the device named there cannot be made.
int active_device(Device **dev);
// The device operations ask where their data lives: the active one, or the
// host when the device named by -stf_device does not exist on this machine
// or build (then no device memory can exist), so host data still moves.
int operations_device(Device **dev);
// The memory type of an operation's array p: `given` where the caller gave
// one (>= 0), else what dev says.
inline stf_memtype memtype_given(Device &dev, const void *p, int given) {
  return given >= 0 ? static_cast<stf_memtype>(given) : dev.memtype(p);
}

// Device memory owned by the ops layer (pack buffers), or with pinned =
// true page-locked host memory (staging buffers), freed by the device that
// allocated it.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(bool pinned = false) : pinned_(pinned) {}
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() { release(); }
  // At least bytes of memory from dev; keeps the old block if it fits.
  int reserve(Device *dev, std::size_t bytes);
  void release();
  char *data() const { return ptr_; }

 private:
  Device *dev_ = nullptr;
  char *ptr_ = nullptr;
  std::size_t bytes_ = 0;
  bool pinned_ = false;
};

}  // namespace stf
