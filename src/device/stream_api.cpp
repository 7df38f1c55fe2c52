// The public stream, event and kernel calls: thin wrappers over the active
// device (device.h). Handles are the backend's own pointers.
#include <cstdint>

#include "core/error.h"
#include "device/device.h"
#include "device/user_handles.h"

namespace stf {
namespace {

Stream to_stream(stf_stream s) { return reinterpret_cast<Stream>(s); }
Event to_event(stf_event e) { return reinterpret_cast<Event>(e); }

// NULL means the library stream, as in every call below.
Stream pick(Device *d, stf_stream s) { return s ? to_stream(s) : d->library_stream(); }

// A stream given by the user must be d's: NULL, d's own stream (what
// stf_device_get_stream returns before any stf_device_set_stream) or one
// made by stf_stream_create on d.
int check_stream(Device *d, stf_stream s, const char *what) {
  if (!s || d->is_own_stream(to_stream(s))) return STF_SUCCESS;
  return check_handle(HandleKind::stream, s, d, what);
}
int check_event(Device *d, stf_event e, const char *what) {
  return check_handle(HandleKind::event, e, d, what);
}

}  // namespace
}  // namespace stf

using stf::Device;

extern "C" int stf_stream_create(stf_stream *s) try {
  if (!s) return stf::set_error(STF_ERR_NULL, "stf_stream_create: output pointer is NULL");
  Device *d = nullptr;
  STF_CHECK(stf::active_device(&d));
  stf::Stream st = nullptr;
  STF_CHECK(d->stream_create(&st));
  if (st) {
    try {
      stf::remember_handle(stf::HandleKind::stream, st, d);
    } catch (...) {
      d->stream_destroy(st);
      throw;
    }
  }
  *s = reinterpret_cast<stf_stream>(st);
  return STF_SUCCESS;
} STF_API_CATCH

// Destroyed by the device that made it, also after stf_device_select.
extern "C" int stf_stream_destroy(stf_stream s) try {
  if (!s) return STF_SUCCESS;
  Device *d = nullptr;
  STF_CHECK(stf::handle_maker(stf::HandleKind::stream, s, "stf_stream_destroy", &d));
  STF_CHECK(d->stream_synchronize(stf::to_stream(s)));
  if (d->user_stream() == stf::to_stream(s)) d->set_library_stream(nullptr);
  STF_CHECK(d->stream_destroy(stf::to_stream(s)));
  stf::forget_handle(stf::HandleKind::stream, s);
  return STF_SUCCESS;
} STF_API_CATCH

extern "C" int stf_stream_synchronize(stf_stream s) try {
  Device *d = nullptr;
  STF_CHECK(stf::active_device(&d));
  STF_CHECK(stf::check_stream(d, s, "stf_stream_synchronize"));
  return d->stream_synchronize(stf::pick(d, s));
} STF_API_CATCH

extern "C" int stf_event_create(stf_event *e) try {
  if (!e) return stf::set_error(STF_ERR_NULL, "stf_event_create: output pointer is NULL");
  Device *d = nullptr;
  STF_CHECK(stf::active_device(&d));
  stf::Event ev = nullptr;
  STF_CHECK(d->event_create(&ev));
  try {
    stf::remember_handle(stf::HandleKind::event, ev, d);
  } catch (...) {
    d->event_destroy(ev);
    throw;
  }
  *e = reinterpret_cast<stf_event>(ev);
  return STF_SUCCESS;
} STF_API_CATCH

// Destroyed by the device that made it, also after stf_device_select.
extern "C" int stf_event_destroy(stf_event e) try {
  if (!e) return STF_SUCCESS;
  Device *d = nullptr;
  STF_CHECK(stf::handle_maker(stf::HandleKind::event, e, "stf_event_destroy", &d));
  STF_CHECK(d->event_destroy(stf::to_event(e)));
  stf::forget_handle(stf::HandleKind::event, e);
  return STF_SUCCESS;
} STF_API_CATCH

extern "C" int stf_event_record(stf_event e, stf_stream s) try {
  if (!e) return stf::set_error(STF_ERR_NULL, "stf_event_record: event is NULL");
  Device *d = nullptr;
  STF_CHECK(stf::active_device(&d));
  STF_CHECK(stf::check_event(d, e, "stf_event_record"));
  STF_CHECK(stf::check_stream(d, s, "stf_event_record"));
  return d->event_record(stf::to_event(e), stf::pick(d, s));
} STF_API_CATCH

extern "C" int stf_stream_wait_event(stf_stream s, stf_event e) try {
  if (!e) return stf::set_error(STF_ERR_NULL, "stf_stream_wait_event: event is NULL");
  Device *d = nullptr;
  STF_CHECK(stf::active_device(&d));
  STF_CHECK(stf::check_event(d, e, "stf_stream_wait_event"));
  STF_CHECK(stf::check_stream(d, s, "stf_stream_wait_event"));
  return d->stream_wait_event(stf::pick(d, s), stf::to_event(e));
} STF_API_CATCH

extern "C" int stf_event_synchronize(stf_event e) try {
  if (!e) return stf::set_error(STF_ERR_NULL, "stf_event_synchronize: event is NULL");
  Device *d = nullptr;
  STF_CHECK(stf::active_device(&d));
  STF_CHECK(stf::check_event(d, e, "stf_event_synchronize"));
  return d->event_synchronize(stf::to_event(e));
} STF_API_CATCH

extern "C" int stf_event_query(stf_event e, int *done) try {
  if (!e || !done) return stf::set_error(STF_ERR_NULL, "stf_event_query: NULL argument");
  Device *d = nullptr;
  STF_CHECK(stf::active_device(&d));
  STF_CHECK(stf::check_event(d, e, "stf_event_query"));
  bool complete = false;
  STF_CHECK(d->event_query(stf::to_event(e), &complete));
  *done = complete ? 1 : 0;
  return STF_SUCCESS;
} STF_API_CATCH

extern "C" int stf_device_memcpy_async(void *dst, const void *src, size_t bytes, stf_stream s) try {
  if (bytes && (!dst || !src)) return stf::set_error(STF_ERR_NULL, "stf_device_memcpy_async: NULL pointer");
  Device *d = nullptr;
  STF_CHECK(stf::active_device(&d));
  STF_CHECK(stf::check_stream(d, s, "stf_device_memcpy_async"));
  return d->memcpy_async(dst, src, bytes, d->copy_kind(dst, src), stf::pick(d, s));
} STF_API_CATCH

extern "C" int stf_device_launch(stf_stream s, int64_t n, stf_kernel_fn fn, void *ctx) try {
  if (!fn) return stf::set_error(STF_ERR_NULL, "stf_device_launch: function is NULL");
  if (n < 0 || n > INT32_MAX) return stf::set_error(STF_ERR_ARG, "stf_device_launch: n = %lld out of range", (long long)n);
  Device *d = nullptr;
  STF_CHECK(stf::active_device(&d));
  STF_CHECK(stf::check_stream(d, s, "stf_device_launch"));
  if (!d->runs_host_functions())
    return stf::set_error(STF_ERR_UNSUPPORTED, "stf_device_launch: device '%s' cannot run host functions", d->name());
  return d->launch_ranges(stf::pick(d, s), static_cast<stf_int>(n),
                          [fn, ctx](stf_int b, stf_int e) { fn(b, e, ctx); });
} STF_API_CATCH

extern "C" int stf_device_set_stream(stf_stream s) try {
  Device *d = nullptr;
  STF_CHECK(stf::active_device(&d));
  STF_CHECK(stf::check_stream(d, s, "stf_device_set_stream"));
  d->set_library_stream(stf::to_stream(s));
  return STF_SUCCESS;
} STF_API_CATCH

extern "C" int stf_device_get_stream(stf_stream *s) try {
  if (!s) return stf::set_error(STF_ERR_NULL, "stf_device_get_stream: output pointer is NULL");
  Device *d = nullptr;
  STF_CHECK(stf::active_device(&d));
  *s = reinterpret_cast<stf_stream>(d->library_stream());
  return STF_SUCCESS;
} STF_API_CATCH
