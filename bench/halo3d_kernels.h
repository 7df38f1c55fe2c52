// halo3d's device baseline kernels: pack the zones of one message (every
// variable, variable by variable) from the data into its buffer, and unpack
// a buffer into ghost zones. Functors for the apps' kernel launcher (run by
// "emu" through stf_device_launch, compiled for "cuda" in
// halo3d_kernels.cu), as hand-written GPU code would be.
#pragma once

#include <cstdint>

#include "device_launch.h"

namespace halo3d {

// Item i: variable i / nzones, zone zones[i % nzones].
struct PackZones {
  const long *zones;  // device memory
  long nzones, G;     // G: zones of one variable's ghosted box
  const double *data;
  double *buf;
  STF_APPS_HD void operator()(int64_t i) const { buf[i] = data[i / nzones * G + zones[i % nzones]]; }
};

struct UnpackZones {
  const long *zones;
  long nzones, G;
  const double *buf;
  double *data;
  STF_APPS_HD void operator()(int64_t i) const { data[i / nzones * G + zones[i % nzones]] = buf[i]; }
};

}  // namespace halo3d
