// The host backend, the active device and the public device calls.
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/options.h"
#include "device/device.h"

namespace stf {
namespace {

// No device at all: "device" memory is plain memory that memtype() calls
// host, and everything completes before the call returns. Operations on it
// take the host path, as before devices existed.
class HostDevice final : public Device {
 public:
  const char *name() const override { return "host"; }
  int alloc(std::size_t bytes, void **ptr) override {
    *ptr = std::malloc(bytes ? bytes : 1);
    if (!*ptr) return set_error(STF_ERR_MEMORY, "cannot allocate %zu bytes", bytes);
    return STF_SUCCESS;
  }
  void free(void *ptr) override { std::free(ptr); }
  int alloc_pinned(std::size_t bytes, void **ptr) override { return alloc(bytes, ptr); }
  void free_pinned(void *ptr) override { std::free(ptr); }
  stf_memtype memtype(const void *) override { return STF_MEMTYPE_HOST; }
  long long live_allocations() const override { return 0; }  // plain memory, valid under any device
  int stream_create(Stream *s) override {
    *s = nullptr;
    return STF_SUCCESS;
  }
  void stream_destroy(Stream) override {}
  Stream own_stream() override { return nullptr; }
  void memcpy_async(void *dst, const void *src, std::size_t bytes, CopyKind kind, Stream) override {
    count_copy(kind);
    std::memmove(dst, src, bytes);
  }
  int event_create(Event *e) override {
    // Not NULL: the public calls refuse a NULL event. Every event is complete.
    static char always_complete;
    *e = &always_complete;
    return STF_SUCCESS;
  }
  void event_destroy(Event) override {}
  void event_record(Event, Stream) override {}
  void stream_wait_event(Stream, Event) override {}
  bool event_query(Event) override { return true; }
  void event_synchronize(Event) override { counters.event_syncs++; }
  void stream_synchronize(Stream) override { counters.stream_syncs++; }
  void synchronize() override { counters.device_syncs++; }

 protected:
  void launch_task(Stream, stf_int n, Task task) override { task(0, n); }
};

std::mutex device_mutex;
std::unique_ptr<Device> current;
// Devices replaced by stf_device_select stay alive until exit: request slots
// may still hold their events (and free their buffers into them).
std::vector<std::unique_ptr<Device>> retired;

int make_device(const std::string &name, std::unique_ptr<Device> *out) {
  if (name == "host") *out = make_host_device();
  else if (name == "emu") *out = make_emu_device();
  else if (name == "cuda") return make_cuda_device(out);
  else return set_error(STF_ERR_OPTION, "device '%s' unknown (available: host, emu, cuda)", name.c_str());
  return STF_SUCCESS;
}

}  // namespace

#ifndef STF_HAVE_CUDA
int make_cuda_device(std::unique_ptr<Device> *) {
  return set_error(STF_ERR_UNSUPPORTED, "device 'cuda': this build has no CUDA support (configure with -DSTF_CUDA=ON)");
}
#endif

std::unique_ptr<Device> make_host_device() { return std::unique_ptr<Device>(new HostDevice); }

int active_device(Device **dev) {
  std::lock_guard<std::mutex> l(device_mutex);
  if (!current) {
    Options o;
    STF_CHECK(default_options(&o));
    STF_CHECK(make_device(o.device, &current));
  }
  *dev = current.get();
  return STF_SUCCESS;
}

int DeviceBuffer::reserve(Device *dev, std::size_t bytes) {
  if (ptr_ && dev_ == dev && bytes_ >= bytes) return STF_SUCCESS;
  release();
  void *p = nullptr;
  STF_CHECK(pinned_ ? dev->alloc_pinned(bytes, &p) : dev->alloc(bytes, &p));
  dev_ = dev, ptr_ = static_cast<char *>(p), bytes_ = bytes;
  return STF_SUCCESS;
}

void DeviceBuffer::release() {
  if (ptr_) pinned_ ? dev_->free_pinned(ptr_) : dev_->free(ptr_);
  dev_ = nullptr, ptr_ = nullptr, bytes_ = 0;
}

}  // namespace stf

using stf::Device;

extern "C" int stf_device_select(const char *name) {
  if (!name) return stf::set_error(STF_ERR_NULL, "stf_device_select: name is NULL");
  std::unique_ptr<Device> next;
  STF_CHECK(stf::make_device(name, &next));
  std::lock_guard<std::mutex> l(stf::device_mutex);
  if (stf::current && stf::current->live_allocations() > 0)
    return stf::set_error(STF_ERR_STATE,
                          "stf_device_select: device '%s' still has %lld allocations (free them, and destroy "
                          "SFs that moved device data, first)",
                          stf::current->name(), stf::current->live_allocations());
  if (stf::current) {
    stf::current->synchronize();
    stf::retired.push_back(std::move(stf::current));
  }
  stf::current = std::move(next);
  return STF_SUCCESS;
}

extern "C" int stf_device_get_name(const char **name) {
  if (!name) return stf::set_error(STF_ERR_NULL, "stf_device_get_name: name is NULL");
  Device *d = nullptr;
  STF_CHECK(stf::active_device(&d));
  *name = d->name();
  return STF_SUCCESS;
}

extern "C" int stf_device_malloc(size_t bytes, void **ptr) {
  if (!ptr) return stf::set_error(STF_ERR_NULL, "stf_device_malloc: ptr is NULL");
  Device *d = nullptr;
  STF_CHECK(stf::active_device(&d));
  return d->alloc(bytes, ptr);
}

extern "C" int stf_device_free(void *ptr) {
  Device *d = nullptr;
  STF_CHECK(stf::active_device(&d));
  d->synchronize();  // like cudaFree: no kernel may still use it
  d->free(ptr);
  return STF_SUCCESS;
}

extern "C" int stf_device_memcpy(void *dst, const void *src, size_t bytes) {
  if (bytes && (!dst || !src)) return stf::set_error(STF_ERR_NULL, "stf_device_memcpy: NULL pointer");
  Device *d = nullptr;
  STF_CHECK(stf::active_device(&d));
  const stf::CopyKind kind = d->copy_kind(dst, src);
  if (kind == stf::CopyKind::h2h) {
    std::memmove(dst, src, bytes);
    return STF_SUCCESS;
  }
  stf::Stream s = d->library_stream();
  d->memcpy_async(dst, src, bytes, kind, s);
  d->stream_synchronize(s);
  return STF_SUCCESS;
}

extern "C" int stf_device_synchronize(void) {
  Device *d = nullptr;
  STF_CHECK(stf::active_device(&d));
  d->stream_synchronize(d->library_stream());
  return STF_SUCCESS;
}

extern "C" int stf_get_memtype(const void *ptr, stf_memtype *type) {
  if (!type) return stf::set_error(STF_ERR_NULL, "stf_get_memtype: type is NULL");
  Device *d = nullptr;
  STF_CHECK(stf::active_device(&d));
  *type = d->memtype(ptr);
  return STF_SUCCESS;
}
