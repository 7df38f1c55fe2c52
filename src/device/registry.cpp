// The device registry, the process-wide active device and the public device calls.
#include "device/registry.h"

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "core/error.h"
#include "device/user_handles.h"

namespace stf {
namespace {

std::mutex device_mutex;  // changes of the active device
std::unique_ptr<Device> current;
// current.get(), read without the lock by every operation; devices are
// never freed while the process runs (retired below), so a reader that
// sees the previous one still holds a valid device.
std::atomic<Device *> active{nullptr};
// Devices replaced by stf_device_select stay alive until exit: request slots
// may still hold their events (and free their buffers into them).
std::vector<std::unique_ptr<Device>> retired;
// The device -stf_device names could not be made (its error, kept so that
// every device call reports it). Where it does not exist (STF_ERR_UNSUPPORTED:
// no GPU, no CUDA in this build) no device memory can exist either, so
// operations find all their data on the host (no_device).
int unavailable_code = STF_SUCCESS;
std::string unavailable_message;
std::atomic<bool> no_device{false};

const DeviceKind *find_kind(const std::string &name) {
  for (const DeviceKind &k : device_kinds())
    if (name == k.name) return &k;
  return nullptr;
}

std::string kind_names(const char *separator) {
  std::string s;
  for (const DeviceKind &k : device_kinds()) s += (s.empty() ? "" : separator) + std::string(k.name);
  return s;
}

int make_device(const std::string &name, std::unique_ptr<Device> *out) {
  const DeviceKind *k = find_kind(name);
  if (!k)
    return set_error(STF_ERR_OPTION, "device '%s' unknown (available: %s)", name.c_str(), kind_names(", ").c_str());
  return k->create(out);
}

}  // namespace

#ifndef STF_HAVE_CUDA
int make_cuda_device(std::unique_ptr<Device> *) {
  return set_error(STF_ERR_UNSUPPORTED, "device 'cuda': this build has no CUDA support (configure with -DSTF_CUDA=ON)");
}
#endif

const std::vector<DeviceKind> &device_kinds() {
  static const std::vector<DeviceKind> kinds = {
      {"host", "no device: all memory is host memory",
       [](std::unique_ptr<Device> *out) {
         *out = make_host_device();
         return static_cast<int>(STF_SUCCESS);
       }},
      {"emu", "the emulated device that runs device code paths on CPU threads",
       [](std::unique_ptr<Device> *out) {
         *out = make_emu_device();
         return static_cast<int>(STF_SUCCESS);
       }},
      {"cuda", "a CUDA GPU (builds with CUDA)", make_cuda_device},
  };
  return kinds;
}

const OptionSpec &device_option() {
  static const std::string values = kind_names("|");
  static const std::string help = [] {
    std::string h = "device backend, process-wide, taken when a device is first needed (stf_device_select overrides):";
    for (const DeviceKind &k : device_kinds()) h += std::string(" ") + k.name + " = " + k.help + ";";
    return h + " (default host)";
  }();
  static const OptionSpec spec = {"stf_device", "STF_DEVICE", values.c_str(), help.c_str(), "host",
                                  [](const std::string &v, Options *) {
                                    if (find_kind(v)) return static_cast<int>(STF_SUCCESS);
                                    return set_error(STF_ERR_OPTION, "-stf_device '%s' unknown (available: %s)",
                                                     v.c_str(), kind_names(", ").c_str());
                                  }};
  return spec;
}

int active_device(Device **dev) {
  *dev = active.load(std::memory_order_acquire);
  if (*dev) return STF_SUCCESS;
  std::lock_guard<std::mutex> l(device_mutex);
  if (!current) {
    if (unavailable_code) return set_error(unavailable_code, "%s", unavailable_message.c_str());
    const int rc = make_device(process_setting(device_option()), &current);
    if (rc) {
      unavailable_code = rc;
      unavailable_message = stf_last_error_message();
      no_device.store(rc == STF_ERR_UNSUPPORTED, std::memory_order_release);
      return rc;
    }
    active.store(current.get(), std::memory_order_release);
  }
  *dev = current.get();
  return STF_SUCCESS;
}

int operations_device(Device **dev) {
  *dev = active.load(std::memory_order_acquire);
  if (*dev) return STF_SUCCESS;
  if (!no_device.load(std::memory_order_acquire)) {
    const int rc = active_device(dev);
    if (rc != STF_ERR_UNSUPPORTED) return rc;
  }
  static const std::unique_ptr<Device> host = make_host_device();
  *dev = host.get();
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
  if (ptr_) pinned_ ? dev_->free_pinned(ptr_) : dev_->free(ptr_);  // a failure leaves nothing to do
  dev_ = nullptr, ptr_ = nullptr, bytes_ = 0;
}

}  // namespace stf

using stf::Device;

extern "C" int stf_device_select(const char *name) try {
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
    STF_CHECK(stf::current->synchronize());
    stf::retired.push_back(std::move(stf::current));
  }
  stf::current = std::move(next);
  stf::active.store(stf::current.get(), std::memory_order_release);
  return STF_SUCCESS;
} STF_API_CATCH

extern "C" int stf_device_get_name(const char **name) try {
  if (!name) return stf::set_error(STF_ERR_NULL, "stf_device_get_name: name is NULL");
  Device *d = nullptr;
  STF_CHECK(stf::active_device(&d));
  *name = d->name();
  return STF_SUCCESS;
} STF_API_CATCH

extern "C" int stf_device_malloc(size_t bytes, void **ptr) try {
  if (!ptr) return stf::set_error(STF_ERR_NULL, "stf_device_malloc: ptr is NULL");
  Device *d = nullptr;
  STF_CHECK(stf::active_device(&d));
  STF_CHECK(d->alloc(bytes, ptr));
  try {
    stf::remember_handle(stf::HandleKind::memory, *ptr, d);
  } catch (...) {
    d->free(*ptr);
    *ptr = nullptr;
    throw;
  }
  return STF_SUCCESS;
} STF_API_CATCH

// Freed by the device that allocated it, also after stf_device_select.
extern "C" int stf_device_free(void *ptr) try {
  if (!ptr) return STF_SUCCESS;
  Device *maker = nullptr;
  STF_CHECK(stf::handle_maker(stf::HandleKind::memory, ptr, "stf_device_free", &maker));
  STF_CHECK(maker->synchronize());  // like cudaFree: no kernel may still use it
  STF_CHECK(maker->free(ptr));
  stf::forget_handle(stf::HandleKind::memory, ptr);
  return STF_SUCCESS;
} STF_API_CATCH

extern "C" int stf_device_memcpy(void *dst, const void *src, size_t bytes) try {
  if (bytes && (!dst || !src)) return stf::set_error(STF_ERR_NULL, "stf_device_memcpy: NULL pointer");
  Device *d = nullptr;
  STF_CHECK(stf::active_device(&d));
  const stf::CopyKind kind = d->copy_kind(dst, src);
  if (kind == stf::CopyKind::h2h) {
    std::memmove(dst, src, bytes);
    return STF_SUCCESS;
  }
  stf::Stream s = d->library_stream();
  STF_CHECK(d->memcpy_async(dst, src, bytes, kind, s));
  return d->stream_synchronize(s);
} STF_API_CATCH

extern "C" int stf_device_synchronize(void) try {
  Device *d = nullptr;
  STF_CHECK(stf::active_device(&d));
  return d->stream_synchronize(d->library_stream());
} STF_API_CATCH

extern "C" int stf_get_memtype(const void *ptr, stf_memtype *type) try {
  if (!type) return stf::set_error(STF_ERR_NULL, "stf_get_memtype: type is NULL");
  Device *d = nullptr;
  STF_CHECK(stf::active_device(&d));
  *type = d->memtype(ptr);
  return STF_SUCCESS;
} STF_API_CATCH
