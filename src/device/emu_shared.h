// The emulated device's memory that other processes map (Device::
// alloc_shared): a POSIX shared memory segment, named in the handle. The
// creator removes the name once every peer has mapped the segment
// (Device::shared_mapped), or when it frees the block; mappings made before
// stay valid until unmapped. A name removed early is not left in /dev/shm
// by a process that crashes.
#pragma once

#include <cstddef>
#include <string>

#include "device/device.h"

namespace stf {

struct EmuSegment {
  void *base = nullptr;
  std::size_t bytes = 0;
  std::string name;
  bool owner = false;  // made here
  bool named = false;  // its name is still in /dev/shm (owner only)
};

// A new zeroed segment of bytes, and its handle.
int create_emu_segment(std::size_t bytes, EmuSegment *out, SharedHandle *h);
// Another process's segment, mapped here.
int open_emu_segment(const SharedHandle &h, EmuSegment *out);
// Removes an own segment's name (mappings stay valid; no process can open it any more).
void unlink_emu_segment(EmuSegment *s);
// Unmaps it here, and removes its name if still there.
void close_emu_segment(EmuSegment *s);

// The emulated stream memory operations' wait: until *word >= value,
// yielding (ranks may outnumber cores).
void wait_for_word(const std::uint64_t *word, std::uint64_t value);

}  // namespace stf
