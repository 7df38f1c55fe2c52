// What a backend without memory other processes can map answers (device.h).
#include "core/error.h"
#include "device/device.h"

namespace stf {
namespace {

int no_sharing(const Device &d) {
  return set_error(STF_ERR_UNSUPPORTED,
                   "device '%s' has no memory other processes can map nor stream memory operations (emu and cuda do)",
                   d.name());
}

}  // namespace

int Device::alloc_shared(std::size_t, void **, SharedHandle *) { return no_sharing(*this); }
int Device::map_shared(const SharedHandle &, void **) { return no_sharing(*this); }
int Device::unmap_shared(void *) { return no_sharing(*this); }
int Device::stream_write_word(Stream, std::uint64_t *, std::uint64_t) { return no_sharing(*this); }
int Device::stream_wait_word(Stream, const std::uint64_t *, std::uint64_t) { return no_sharing(*this); }

}  // namespace stf
