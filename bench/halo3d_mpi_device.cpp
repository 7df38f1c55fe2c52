// halo3d's hand-written MPI baseline on device memory (halo3d.h), as GPU
// code without a CUDA-aware MPI does it: per message a pack kernel into a
// device buffer and an asynchronous copy to a pinned host buffer; the host
// waits for the stream (per message when each message goes on its own, per
// group otherwise) and sends; each message received is copied up and
// unpacked by a kernel, without the host waiting; the cycle ends with a wait
// for the stream (as the starforest variant's stf_device_synchronize).
// Everything on the library stream.
#include <mpi.h>

#include <algorithm>
#include <utility>

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

class MpiDeviceHalo : public Variant {
 public:
  MpiDeviceHalo(const Box &b, std::vector<std::vector<int>> groups, bool each)
      : b_(b), groups_(std::move(groups)), each_(each) {
    for (int d = 0; d < kDirs; d++) {
      if (d == kSelf) continue;
      const std::vector<long> &out = b.send[opposite(d)], &in = b.recv[d];
      stage(out, b.vars, send_[d]);
      stage(in, b.vars, recv_[d]);
      pack_[d] = PackZones{send_[d].zones, static_cast<long>(out.size()), b.G, nullptr, send_[d].dev};
      unpack_[d] = UnpackZones{recv_[d].zones, static_cast<long>(in.size()), b.G, recv_[d].dev, nullptr};
      if (b.mock) unpack_[d].buf = send_[d].dev;  // its own neighbour: the packed message is the message
    }
  }
  ~MpiDeviceHalo() override {
    CHECK_STF(stf_device_synchronize());
    for (Lane *l : {send_, recv_})
      for (int d = 0; d < kDirs; d++) {
        CHECK_STF(stf_device_free(l[d].zones));
        CHECK_STF(stf_device_free(l[d].dev));
      }
  }

  void cycle(double *data, Times &t) override {
    // The kernels of the previous cycle are done (it ended with a stream
    // wait): their arguments may change.
    for (int d = 0; d < kDirs; d++) pack_[d].data = data, unpack_[d].data = data;
    double t0 = MPI_Wtime();
    rreq_.clear(), sreq_.clear(), rdir_.clear();
    if (!b_.mock)
      for (const auto &g : groups_)
        for (int d : g)
          if (b_.nbr[d] >= 0) {
            rreq_.emplace_back();
            rdir_.push_back(d);
            MPI_Irecv(recv_[d].host.data(), static_cast<int>(recv_[d].doubles), MPI_DOUBLE, b_.nbr[d], d,
                      MPI_COMM_WORLD, &rreq_.back());
          }
    double t1 = MPI_Wtime();
    for (const auto &g : groups_) {
      for (int d : g)
        if (b_.nbr[opposite(d)] >= 0) {
          pack(d);
          if (each_ && !b_.mock) wait_and_send({d});
        }
      if (!each_ && !b_.mock) wait_and_send(g);
    }
    double t2 = MPI_Wtime();
    if (b_.mock) {
      for (const auto &g : groups_)
        for (int d : g) CHECK_STF(stf_apps::launch(nullptr, send_[d].doubles, &unpack_[d], "halo3d"));
    } else if (each_) {  // unpack in arrival order
      for (size_t k = 0; k < rreq_.size(); k++) {
        int idx;
        MPI_Waitany(static_cast<int>(rreq_.size()), rreq_.data(), &idx, MPI_STATUS_IGNORE);
        unpack(rdir_[idx]);
      }
    } else {
      size_t first = 0;
      for (const auto &g : groups_) {
        size_t count = std::count_if(g.begin(), g.end(), [&](int d) { return b_.nbr[d] >= 0; });
        MPI_Waitall(static_cast<int>(count), rreq_.data() + first, MPI_STATUSES_IGNORE);
        for (size_t k = first; k < first + count; k++) unpack(rdir_[k]);
        first += count;
      }
    }
    CHECK_STF(stf_device_synchronize());
    double t3 = MPI_Wtime();
    MPI_Waitall(static_cast<int>(sreq_.size()), sreq_.data(), MPI_STATUSES_IGNORE);
    double t4 = MPI_Wtime();
    t[kPostRecv] += t1 - t0, t[kPackPost] += t2 - t1, t[kWaitUnpack] += t3 - t2, t[kWaitSend] += t4 - t3;
    t[kCycle] += t4 - t0;
  }

 private:
  // Message d: packed on the device, copied down (both enqueued).
  void pack(int d) {
    CHECK_STF(stf_apps::launch(nullptr, send_[d].doubles, &pack_[d], "halo3d"));
    if (!b_.mock)
      CHECK_STF(stf_device_memcpy_async(send_[d].host.data(), send_[d].dev, send_[d].doubles * sizeof(double),
                                        nullptr));
  }
  // The host waits for the copies, then sends.
  void wait_and_send(const std::vector<int> &dirs) {
    CHECK_STF(stf_device_synchronize());
    for (int d : dirs)
      if (b_.nbr[opposite(d)] >= 0) {
        sreq_.emplace_back();
        MPI_Isend(send_[d].host.data(), static_cast<int>(send_[d].doubles), MPI_DOUBLE, b_.nbr[opposite(d)], d,
                  MPI_COMM_WORLD, &sreq_.back());
      }
  }
  // Message d arrived: copied up and unpacked (both enqueued).
  void unpack(int d) {
    CHECK_STF(stf_device_memcpy_async(recv_[d].dev, recv_[d].host.data(), recv_[d].doubles * sizeof(double), nullptr));
    CHECK_STF(stf_apps::launch(nullptr, recv_[d].doubles, &unpack_[d], "halo3d"));
  }

  const Box &b_;
  std::vector<std::vector<int>> groups_;
  bool each_;
  Lane send_[kDirs], recv_[kDirs];  // send_[d]: message d, which fills the ghosts of direction d over there
  PackZones pack_[kDirs]{};
  UnpackZones unpack_[kDirs]{};
  std::vector<MPI_Request> rreq_, sreq_;
  std::vector<int> rdir_;
};

}  // namespace

Variant *make_mpi_device_halo(const Box &b, std::vector<std::vector<int>> groups, bool each) {
  return new MpiDeviceHalo(b, std::move(groups), each);
}

}  // namespace halo3d
