// Pack, unpack and scatter for one (unit, op) as kernel launches on a
// device stream: the functors of kernels/functors.h, launched by the
// device's own means (Device::launch for host and emu, a __global__ kernel
// for CUDA; one table definition for all, device_kernels_impl.h). Only the
// index pattern is resolved per index (AnyPattern) and the block size is a
// run-time count, so each (type, op) costs a handful of instantiations; the
// host tables keep the fully specialised loops.
#pragma once

#include "device/device.h"
#include "kernels/kernels.h"
#include "kernels/ops.h"

namespace stf {

// Index lists given to these must be readable by the device: their arrays
// in its memory (device_indices.h).
// Each returns the launch's error code.
struct DeviceKernels {
  // buf[i] = data[idx.at(i)]
  int (*pack)(Device &d, Stream s, const Unit &u, const IndexList &idx, const void *data, void *buf);
  // data[idx.at(i)] op= buf[i]; atomic combines (duplicate targets, see needs_atomics)
  int (*unpack)(Device &d, Stream s, const Unit &u, const IndexList &idx, const void *buf, void *data,
                bool atomic);
  // dst[didx.at(i)] op= src[sidx.at(i)]
  int (*scatter)(Device &d, Stream s, const Unit &u, const IndexList &sidx, const void *src,
                 const IndexList &didx, void *dst, bool atomic);
};

// Every kernel set of one backend. Empty entries: not supported.
struct DeviceKernelTable {
  enum { kSum, kProd, kMax, kMin, kOps };
  // REPLACE as words of 8, 4, 2 and 1 bytes.
  const DeviceKernels *replace[4];
  // SUM, PROD, MAX, MIN per builtin element type (Unit::base).
  const DeviceKernels *ops[kNumBaseTypes][kOps];
};

// The kernels of dev (Device::kernel_table) for (unit, op).
// STF_ERR_UNSUPPORTED for what has no device kernels yet: opaque units,
// user-defined ops, ops other than REPLACE/SUM/PROD/MAX/MIN, long double,
// complex and pair types. The caller has checked (unit, op) with get_kernels.
int get_device_kernels(Device &dev, const Unit &u, MPI_Op op, const DeviceKernels **k);

}  // namespace stf
