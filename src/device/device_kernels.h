// Pack, unpack and scatter for one (unit, op) as kernel launches on a
// device stream: the functors of kernels/functors.h, run by Device::launch.
// Only the index pattern is resolved per index (AnyPattern) and the block
// size is a run-time count, so each (type, op) costs a handful of
// instantiations; the host tables keep the fully specialised loops.
#pragma once

#include "device/device.h"
#include "kernels/kernels.h"

namespace stf {

struct DeviceKernels {
  // buf[i] = data[idx.at(i)]
  void (*pack)(Device &d, Stream s, const Unit &u, const IndexList &idx, const void *data, void *buf);
  // data[idx.at(i)] op= buf[i]; atomic combines (duplicate targets, see needs_atomics)
  void (*unpack)(Device &d, Stream s, const Unit &u, const IndexList &idx, const void *buf, void *data,
                 bool atomic);
  // dst[didx.at(i)] op= src[sidx.at(i)]
  void (*scatter)(Device &d, Stream s, const Unit &u, const IndexList &sidx, const void *src,
                  const IndexList &didx, void *dst, bool atomic);
};

// STF_ERR_UNSUPPORTED for what has no device kernels yet: opaque units,
// user-defined ops, ops other than REPLACE/SUM/PROD/MAX/MIN, long double,
// complex and pair types. The caller has checked (unit, op) with get_kernels.
int get_device_kernels(const Unit &u, MPI_Op op, const DeviceKernels **k);

}  // namespace stf
