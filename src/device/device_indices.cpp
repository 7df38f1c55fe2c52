#include "device/device_indices.h"

#include "core/error.h"

namespace stf {

int DeviceIndexCache::get(Device &dev, const IndexList &host, IndexList *on_device) {
  *on_device = host;
  if (host.kind != IndexKind::indexed || host.n == 0) return STF_SUCCESS;
  std::lock_guard<std::mutex> l(m_);
  if (dev_ != &dev) {  // another device became active: its copies are of no use
    STF_CHECK(clear_locked());
    dev_ = &dev;
  }
  for (const Block &b : blocks_)
    if (host.idx >= b.host && host.idx + host.n <= b.host + b.n) {
      on_device->idx = b.device + (host.idx - b.host);
      return STF_SUCCESS;
    }
  const std::size_t bytes = static_cast<std::size_t>(host.n) * sizeof(stf_int);
  void *p = nullptr;
  STF_CHECK(dev.alloc(bytes, &p));
  Block b{host.idx, host.n, static_cast<stf_int *>(p)};
  blocks_.push_back(b);
  STF_CHECK(dev.memcpy_async(b.device, host.idx, bytes, CopyKind::h2d, dev.library_stream()));
  on_device->idx = b.device;
  return STF_SUCCESS;
}

int DeviceIndexCache::copies() const {
  std::lock_guard<std::mutex> l(m_);
  return static_cast<int>(blocks_.size());
}

int DeviceIndexCache::clear() {
  std::lock_guard<std::mutex> l(m_);
  return clear_locked();
}

// Kernels queued on the device may still read the arrays: wait for them
// first (as cudaFree would).
int DeviceIndexCache::clear_locked() {
  if (blocks_.empty()) return STF_SUCCESS;
  int rc = dev_->synchronize();
  for (const Block &b : blocks_) {
    const int freed = dev_->free(b.device);
    if (!rc) rc = freed;
  }
  blocks_.clear();
  return rc;
}

}  // namespace stf
