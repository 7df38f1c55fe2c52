// halo3d's hand-written MPI baseline's messages in device memory
// (halo3d.h), as GPU code without a CUDA-aware MPI handles them: per message
// a pack kernel into a device buffer and an asynchronous copy to a pinned
// host buffer; the host waits for the stream (per message when each message
// goes on its own, per group otherwise) and sends; each message received is copied up and
// unpacked by a kernel, without the host waiting; the cycle ends with a wait
// for the stream (as the starforest variant's stf_device_synchronize).
// Everything on the library stream.
#include <mpi.h>

#include "check.h"
#include "halo3d.h"
#include "halo3d_kernels.h"

namespace halo3d {
namespace {

// A message's device zone list, device buffer and pinned host buffer.
struct Lane {
  long *zones = nullptr;
  double *dev = nullptr;
  stf_apps::HostStage host;
  long doubles = 0;
};

void stage(const std::vector<long> &zones, int vars, Lane &l) {
  l.doubles = static_cast<long>(zones.size()) * vars;
  const size_t zbytes = zones.size() * sizeof(long), bytes = l.doubles * sizeof(double);
  CHECK_STF(stf_device_malloc(zbytes, reinterpret_cast<void **>(&l.zones)));
  if (zbytes) CHECK_STF(stf_device_memcpy(l.zones, zones.data(), zbytes));
  CHECK_STF(stf_device_malloc(bytes, reinterpret_cast<void **>(&l.dev)));
  CHECK_STF(l.host.alloc(bytes, "halo3d"));
}

class DeviceMessages : public MpiMessages {
 public:
  explicit DeviceMessages(const Box &b) : b_(b) {
    for (int d = 0; d < kDirs; d++) {
      if (d == kSelf) continue;
      const std::vector<long> &out = b.send[opposite(d)], &in = b.recv[d];
      stage(out, b.vars, send_[d]);
      stage(in, b.vars, recv_[d]);
      pack_[d] = PackZones{send_[d].zones, static_cast<long>(out.size()), b.G, nullptr, send_[d].dev};
      unpack_[d] = UnpackZones{recv_[d].zones, static_cast<long>(in.size()), b.G, recv_[d].dev, nullptr};
      own_[d] = unpack_[d];
      own_[d].buf = send_[d].dev;  // --mock: the packed message is the one received
    }
  }
  ~DeviceMessages() override {
    CHECK_STF(stf_device_synchronize());
    for (Lane *l : {send_, recv_})
      for (int d = 0; d < kDirs; d++) {
        CHECK_STF(stf_device_free(l[d].zones));
        CHECK_STF(stf_device_free(l[d].dev));
      }
  }
  double *send_buffer(int d) override { return static_cast<double *>(send_[d].host.data()); }
  double *recv_buffer(int d) override { return static_cast<double *>(recv_[d].host.data()); }
  // Packed on the device, copied down (both enqueued). The kernels of the
  // previous cycle are done (it ended with a stream wait): their arguments
  // may change.
  void pack(int d, double *data) override {
    pack_[d].data = data;
    CHECK_STF(stf_apps::launch(nullptr, send_[d].doubles, &pack_[d], "halo3d"));
    if (!b_.mock)
      CHECK_STF(stf_device_memcpy_async(send_[d].host.data(), send_[d].dev, send_[d].doubles * sizeof(double),
                                        nullptr));
  }
  void ready() override { CHECK_STF(stf_device_synchronize()); }
  // Copied up and unpacked (both enqueued).
  void unpack(int d, double *data) override {
    unpack_[d].data = data;
    CHECK_STF(stf_device_memcpy_async(recv_[d].dev, recv_[d].host.data(), recv_[d].doubles * sizeof(double), nullptr));
    CHECK_STF(stf_apps::launch(nullptr, recv_[d].doubles, &unpack_[d], "halo3d"));
  }
  void unpack_own(int d, double *data) override {
    own_[d].data = data;
    CHECK_STF(stf_apps::launch(nullptr, send_[d].doubles, &own_[d], "halo3d"));
  }
  void finish() override { CHECK_STF(stf_device_synchronize()); }

 private:
  const Box &b_;
  Lane send_[kDirs], recv_[kDirs];  // send_[d]: message d, which fills the ghosts of direction d over there
  PackZones pack_[kDirs]{};
  UnpackZones unpack_[kDirs]{}, own_[kDirs]{};
};

}  // namespace

MpiMessages *device_messages(const Box &b) { return new DeviceMessages(b); }

}  // namespace halo3d
