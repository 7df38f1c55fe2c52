// SF objects in shells that outlive them (see lifetime.h).
#include "sf/lifetime.h"

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <new>

namespace stf {
namespace {

constexpr std::uint32_t alive = 0x53464c56, dead = 0x53464444;

struct Shell {
  std::atomic<std::uint32_t> state{dead};
  alignas(stf_sf_s) unsigned char object[sizeof(stf_sf_s)];
};

std::mutex shells_mutex;
// Oldest first. Never destroyed, so that the shells stay reachable (and
// usable by SFs destroyed from other static destructors) until exit.
std::deque<Shell *> &dead_shells() {
  static auto *d = new std::deque<Shell *>;
  return *d;
}

Shell *shell_of(stf_sf sf) {
  return reinterpret_cast<Shell *>(reinterpret_cast<unsigned char *>(sf) - offsetof(Shell, object));
}

Shell *take_shell() {
  {
    std::lock_guard<std::mutex> l(shells_mutex);
    if (dead_shells().size() > sf_quarantine) {
      Shell *s = dead_shells().front();
      dead_shells().pop_front();
      return s;
    }
  }
  return new (std::nothrow) Shell;
}

void give_back(Shell *s) {
  s->state.store(dead, std::memory_order_release);
  std::lock_guard<std::mutex> l(shells_mutex);
  try {
    dead_shells().push_back(s);
  } catch (...) {
    // No memory to queue it: leaked, dead and readable, never reused.
  }
}

}  // namespace

stf_sf make_sf_object() {
  Shell *s = take_shell();
  if (!s) return nullptr;
  stf_sf sf = nullptr;
  try {
    sf = new (s->object) stf_sf_s;
  } catch (...) {
    give_back(s);
    throw;
  }
  s->state.store(alive, std::memory_order_release);
  return sf;
}

void unmake_sf_object(stf_sf sf) {
  Shell *s = shell_of(sf);
  sf->~stf_sf_s();
  give_back(s);
}

bool sf_object_alive(stf_sf sf) { return shell_of(sf)->state.load(std::memory_order_acquire) == alive; }

}  // namespace stf
