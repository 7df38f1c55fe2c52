// halo3d's device baseline kernels (halo3d_kernels.h) compiled for "cuda".
#include "device_launch_cuda.cuh"
#include "halo3d_kernels.h"

namespace stf_apps {
template int cuda_launch(stf_stream, int64_t, const halo3d::PackZones &, const char *);
template int cuda_launch(stf_stream, int64_t, const halo3d::UnpackZones &, const char *);
}  // namespace stf_apps
