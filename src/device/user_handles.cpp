// The table of handles the public device calls gave out (user_handles.h).
#include "device/user_handles.h"

#include <mutex>
#include <unordered_map>

#include "core/error.h"

namespace stf {
namespace {

struct Key {
  HandleKind kind;
  const void *h;
  bool operator==(const Key &o) const { return kind == o.kind && h == o.h; }
};
struct KeyHash {
  std::size_t operator()(const Key &k) const {
    return std::hash<const void *>()(k.h) ^ static_cast<std::size_t>(k.kind);
  }
};

std::mutex table_mutex;
std::unordered_map<Key, Device *, KeyHash> &table() {
  static auto *t = new std::unordered_map<Key, Device *, KeyHash>;  // outlives static destructors
  return *t;
}

const char *kind_name(HandleKind kind) {
  switch (kind) {
    case HandleKind::memory: return "memory from stf_device_malloc";
    case HandleKind::stream: return "a stream from stf_stream_create";
    case HandleKind::event: return "an event from stf_event_create";
  }
  return "a handle";
}

}  // namespace

void remember_handle(HandleKind kind, const void *h, Device *d) {
  std::lock_guard<std::mutex> l(table_mutex);
  table()[Key{kind, h}] = d;
}

int handle_maker(HandleKind kind, const void *h, const char *what, Device **maker) {
  {
    std::lock_guard<std::mutex> l(table_mutex);
    auto it = table().find(Key{kind, h});
    if (it != table().end()) {
      *maker = it->second;
      return STF_SUCCESS;
    }
  }
  return set_error(STF_ERR_ARG, "%s: %p is not %s, or was already released", what, h, kind_name(kind));
}

int check_handle(HandleKind kind, const void *h, Device *active, const char *what) {
  Device *maker = nullptr;
  STF_CHECK(handle_maker(kind, h, what, &maker));
  if (maker != active)
    return set_error(STF_ERR_ARG, "%s: %p was made by device '%s', which is no longer the active device ('%s')",
                     what, h, maker->name(), active->name());
  return STF_SUCCESS;
}

void forget_handle(HandleKind kind, const void *h) {
  std::lock_guard<std::mutex> l(table_mutex);
  table().erase(Key{kind, h});
}

}  // namespace stf
