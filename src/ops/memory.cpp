// The seam between host and device memory: which Memory an operation's data
// needs, asked of the active device once per operation, and the request
// slot's lifetime, whose device part only this side of the seam knows.
#include "ops/memory.h"

#include "core/error.h"
#include "device/device_kernels.h"
#include "ops/device_space.h"

stf_request_s::stf_request_s() = default;
stf_request_s::~stf_request_s() = default;

namespace stf {

// For data on a device, the slot's device part and the device kernels
// (fetch-and-op runs the host kernels on host copies).
int resolve_memory(const OpArgs &a, stf_request r) {
  r->memory = &host_memory;
  Device *dev = nullptr;
  STF_CHECK(operations_device(&dev));
  r->src_mem = memtype_given(*dev, a.src, a.src_mem);
  r->dst_mem = memtype_given(*dev, a.dst, a.dst_mem);
  r->update_mem = a.update ? dev->memtype(a.update) : STF_MEMTYPE_HOST;
  if (r->src_mem != STF_MEMTYPE_DEVICE && r->dst_mem != STF_MEMTYPE_DEVICE && r->update_mem != STF_MEMTYPE_DEVICE)
    return STF_SUCCESS;
  if (!r->device) r->device = std::make_unique<DeviceState>();
  r->device->dev = dev;
  r->device->kernels = nullptr;
  r->memory = &device_memory;
  if (a.kind == OpKind::fetch_and_op) return STF_SUCCESS;
  return get_device_kernels(*dev, *r->unit, a.op, &r->device->kernels);
}

bool on_host(const OpArgs &a) {
  Device *dev = nullptr;
  if (operations_device(&dev)) return false;
  return memtype_given(*dev, a.src, a.src_mem) == STF_MEMTYPE_HOST &&
         memtype_given(*dev, a.dst, a.dst_mem) == STF_MEMTYPE_HOST;
}

}  // namespace stf
