#include "device/emu_shared.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/error.h"

namespace stf {
namespace {

constexpr std::size_t kNameMax = sizeof(SharedHandle::data);

int segment_error(const char *what, const std::string &name) {
  return set_error(STF_ERR_DEVICE, "emu device: %s of shared segment %s: %s", what, name.c_str(), std::strerror(errno));
}

int map_fd(int fd, std::size_t bytes, const std::string &name, void **base) {
  void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return segment_error("mmap", name);
  *base = p;
  return STF_SUCCESS;
}

}  // namespace

int create_emu_segment(std::size_t bytes, EmuSegment *out, SharedHandle *h) {
  // A fresh name: the next free one (ranks that are threads of one process,
  // as under SMPI, may each count from 0).
  static std::atomic<unsigned> made{0};
  char name[kNameMax];
  int fd = -1;
  for (int tries = 0; fd < 0 && tries < 1000; tries++) {
    std::snprintf(name, sizeof name, "/stf-emu-%ld-%u", static_cast<long>(getpid()), made++);
    fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 && errno != EEXIST) break;
  }
  EmuSegment s;
  s.bytes = bytes ? bytes : 1;
  s.name = name;
  s.owner = true;
  s.named = fd >= 0;
  if (fd < 0) return segment_error("shm_open", s.name);
  if (ftruncate(fd, static_cast<off_t>(s.bytes)) != 0) {  // zero-filled
    const int rc = segment_error("ftruncate", s.name);
    close(fd);
    shm_unlink(name);
    return rc;
  }
  if (const int rc = map_fd(fd, s.bytes, s.name, &s.base)) {
    shm_unlink(name);
    return rc;
  }
  *h = SharedHandle{};
  std::memcpy(h->data, name, std::strlen(name) + 1);
  h->bytes = s.bytes;
  *out = s;
  return STF_SUCCESS;
}

int open_emu_segment(const SharedHandle &h, EmuSegment *out) {
  EmuSegment s;
  s.name.assign(reinterpret_cast<const char *>(h.data), strnlen(reinterpret_cast<const char *>(h.data), kNameMax));
  s.bytes = h.bytes;
  const int fd = shm_open(s.name.c_str(), O_RDWR, 0600);
  if (fd < 0) return segment_error("shm_open", s.name);
  STF_CHECK(map_fd(fd, s.bytes, s.name, &s.base));
  *out = s;
  return STF_SUCCESS;
}

void unlink_emu_segment(EmuSegment *s) {
  if (s->owner && s->named) shm_unlink(s->name.c_str());
  s->named = false;
}

void close_emu_segment(EmuSegment *s) {
  munmap(s->base, s->bytes);
  unlink_emu_segment(s);
}

void wait_for_word(const std::uint64_t *word, std::uint64_t value) {
  const struct timespec nap = {0, 20 * 1000};
  for (int polls = 0; __atomic_load_n(word, __ATOMIC_ACQUIRE) < value; ++polls) {
    if (polls < 256) sched_yield();
    else nanosleep(&nap, nullptr);
  }
}

}  // namespace stf
