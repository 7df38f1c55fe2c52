// The "host" backend: no device at all. "Device" memory is plain memory that
// memtype() calls host, and everything completes before the call returns,
// so operations on it take the host path, as before devices existed.
#include <cstdlib>
#include <cstring>

#include "core/error.h"
#include "device/device.h"

namespace stf {
namespace {

class HostDevice final : public Device {
 public:
  const char *name() const override { return "host"; }
  int alloc(std::size_t bytes, void **ptr) override {
    *ptr = std::malloc(bytes ? bytes : 1);
    if (!*ptr) return set_error(STF_ERR_MEMORY, "cannot allocate %zu bytes", bytes);
    return STF_SUCCESS;
  }
  int free(void *ptr) override {
    std::free(ptr);
    return STF_SUCCESS;
  }
  int alloc_pinned(std::size_t bytes, void **ptr) override { return alloc(bytes, ptr); }
  int free_pinned(void *ptr) override { return free(ptr); }
  stf_memtype memtype(const void *) override { return STF_MEMTYPE_HOST; }
  long long live_allocations() const override { return 0; }  // plain memory, valid under any device
  int stream_create(Stream *s) override {
    *s = nullptr;
    return STF_SUCCESS;
  }
  int stream_destroy(Stream) override { return STF_SUCCESS; }
  Stream own_stream() override { return nullptr; }
  int memcpy_async(void *dst, const void *src, std::size_t bytes, CopyKind kind, Stream) override {
    count_copy(kind);
    std::memmove(dst, src, bytes);
    return STF_SUCCESS;
  }
  int event_create(Event *e) override {
    // Every event is complete; each still gets an address of its own, so
    // that the public calls can tell events apart (and a destroyed one).
    *e = new char;
    return STF_SUCCESS;
  }
  int event_destroy(Event e) override {
    delete static_cast<char *>(e);
    return STF_SUCCESS;
  }
  int event_record(Event, Stream) override { return STF_SUCCESS; }
  int stream_wait_event(Stream, Event) override { return STF_SUCCESS; }
  int event_query(Event, bool *done) override {
    *done = true;
    return STF_SUCCESS;
  }
  int event_synchronize(Event) override {
    counters.event_syncs++;
    return STF_SUCCESS;
  }
  int stream_synchronize(Stream) override {
    counters.stream_syncs++;
    return STF_SUCCESS;
  }
  int synchronize() override {
    counters.device_syncs++;
    return STF_SUCCESS;
  }

 protected:
  int launch_task(Stream, stf_int n, Task task) override {
    task(0, n);
    return STF_SUCCESS;
  }
};

}  // namespace

std::unique_ptr<Device> make_host_device() { return std::unique_ptr<Device>(new HostDevice); }

}  // namespace stf
