// Device copies of a plan's index arrays: device kernels read IndexList
// arrays, which must be in device memory on a GPU. Each array is copied up
// once, on first device use (on the library stream, so kernels queued after
// it see it), and lives until the cache is cleared (the SF's plan goes).
// Lists without an array (contiguous, strided) need nothing.
#pragma once

#include <mutex>
#include <vector>

#include "device/device.h"
#include "kernels/kernels.h"

namespace stf {

class DeviceIndexCache {
 public:
  DeviceIndexCache() = default;
  DeviceIndexCache(const DeviceIndexCache &) = delete;
  DeviceIndexCache &operator=(const DeviceIndexCache &) = delete;
  ~DeviceIndexCache() { clear(); }

  // host with its array (if any) replaced by a copy in dev's memory. The
  // array must stay unchanged while the cache lives (a plan's arrays do). A
  // list inside an array copied before (one message of a side's
  // concatenated list) reuses that copy.
  int get(Device &dev, const IndexList &host, IndexList *on_device);
  // Number of arrays copied to the device so far.
  int copies() const;
  // Free every copy (after waiting for the device: kernels may still read them).
  int clear();

 private:
  struct Block {
    const stf_int *host;
    stf_int n;
    stf_int *device;
  };
  int clear_locked();

  mutable std::mutex m_;
  Device *dev_ = nullptr;  // the device that holds blocks_
  std::vector<Block> blocks_;
};

}  // namespace stf
