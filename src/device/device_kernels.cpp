#include "device/device_kernels.h"

#include <cstdlib>

#include "core/error.h"
#include "device/device_kernels_impl.h"

namespace stf {

bool device_atomics_allowed() {
  static const bool allowed = [] {
    const char *v = std::getenv("STF_TEST_NO_ATOMICS");
    return !(v && *v == '1');
  }();
  return allowed;
}

namespace {

struct TaskLaunch {
  template <class F>
  static int run(Device &d, Stream s, stf_int n, const F &f) {
    return d.launch(s, n, f);
  }
};

// Host and emu: kernels are Device::launch tasks.
constexpr DeviceKernelTable kLaunchTable = make_kernel_table<TaskLaunch>();

}  // namespace

const DeviceKernelTable &Device::kernel_table() const { return kLaunchTable; }

int get_device_kernels(Device &dev, const Unit &u, MPI_Op op, const DeviceKernels **k) {
  if (u.opaque())
    return set_error(STF_ERR_UNSUPPORTED, "device data needs a unit of one builtin type (this one is opaque)");
  const DeviceKernelTable &t = dev.kernel_table();
  if (op == MPI_REPLACE) {
    const int word = u.extent % 8 == 0 ? 0 : u.extent % 4 == 0 ? 1 : u.extent % 2 == 0 ? 2 : 3;
    *k = t.replace[word];
    return STF_SUCCESS;
  }
  const int id = op == MPI_SUM    ? DeviceKernelTable::kSum
                 : op == MPI_PROD ? DeviceKernelTable::kProd
                 : op == MPI_MAX  ? DeviceKernelTable::kMax
                 : op == MPI_MIN  ? DeviceKernelTable::kMin
                                  : -1;
  const DeviceKernels *found = id >= 0 && u.base >= 0 && u.base < kNumBaseTypes ? t.ops[u.base][id] : nullptr;
  if (!found)
    return set_error(STF_ERR_UNSUPPORTED, "%s on device data is not supported for this unit yet", op_name(op));
  *k = found;
  return STF_SUCCESS;
}

}  // namespace stf
