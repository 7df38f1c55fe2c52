// The device-independent side of the apps' kernels (device_launch.h).
#include "device_launch.h"

#include <cstdlib>
#include <cstring>

namespace stf_apps {

bool active_device_is_cuda() {
  const char *name = nullptr;
  return stf_device_get_name(&name) == STF_SUCCESS && name && std::strcmp(name, "cuda") == 0;
}

HostStage::~HostStage() {
#if STF_APPS_HAVE_CUDA
  if (pinned_) {
    cuda_pinned_free(p_);
    return;
  }
#endif
  std::free(p_);
}

int HostStage::alloc(std::size_t bytes, const char *what) {
#if STF_APPS_HAVE_CUDA
  if (active_device_is_cuda()) {
    if (int rc = cuda_pinned_alloc(bytes, &p_, what)) return rc;
    pinned_ = true;
    std::memset(p_, 0, bytes);
    return STF_SUCCESS;
  }
#endif
  p_ = std::calloc(1, bytes ? bytes : 1);
  return p_ ? STF_SUCCESS : fail(STF_ERR_MEMORY, "%s: cannot allocate %zu bytes", what, bytes);
}

}  // namespace stf_apps
