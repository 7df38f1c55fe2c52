// The device kernel table of the CUDA backend (cuda_kernels.cu, nvcc).
#pragma once

#include "device/device_kernels.h"

namespace stf {

const DeviceKernelTable &cuda_kernel_table();

}  // namespace stf
