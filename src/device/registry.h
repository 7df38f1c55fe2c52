// The device backends: one row each. stf_device_select, -stf_device /
// STF_DEVICE and the options help all read this table, so a new backend is
// its own folder plus one row.
#pragma once

#include <memory>
#include <vector>

#include "core/options.h"
#include "device/device.h"

namespace stf {

struct DeviceKind {
  const char *name;
  const char *help;
  // A new device; STF_ERR_UNSUPPORTED where this build or machine has none.
  int (*create)(std::unique_ptr<Device> *out);
};

const std::vector<DeviceKind> &device_kinds();
// -stf_device / STF_DEVICE: process-wide, read when a device is first needed.
const OptionSpec &device_option();

}  // namespace stf
