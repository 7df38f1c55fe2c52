// halo3d's hand-written MPI baseline (halo3d.h), and its messages in host
// memory.
#include <mpi.h>

#include <algorithm>
#include <memory>
#include <utility>

#include "halo3d.h"

namespace halo3d {
namespace {

class MpiHalo : public Variant {
 public:
  // Message d fills the receiver's ghosts of direction d: the sender is the
  // receiver's neighbour at d, the receiver the sender's neighbour at
  // opposite(d). Both sides tag it d.
  MpiHalo(const Box &b, std::vector<std::vector<int>> groups, bool each, MpiMessages *messages)
      : b_(b), groups_(std::move(groups)), each_(each), m_(messages) {}

  void cycle(double *data, Times &t) override {
    double t0 = MPI_Wtime();
    rreq_.clear(), sreq_.clear(), rdir_.clear();  // keep their capacity: no allocation per cycle
    auto &rreq = rreq_, &sreq = sreq_;
    auto &rdir = rdir_;
    if (!b_.mock)
      for (const auto &g : groups_)
        for (int d : g)
          if (b_.nbr[d] >= 0) {
            rreq.emplace_back();
            rdir.push_back(d);
            MPI_Irecv(m_->recv_buffer(d), static_cast<int>(b_.message_doubles(d)), MPI_DOUBLE, b_.nbr[d], d,
                      MPI_COMM_WORLD, &rreq.back());
          }
    double t1 = MPI_Wtime();
    for (const auto &g : groups_) {
      for (int d : g)
        if (b_.nbr[opposite(d)] >= 0) {
          m_->pack(d, data);
          if (each_ && !b_.mock) {
            m_->ready();
            send(d, sreq);
          }
        }
      if (!each_ && !b_.mock) {
        m_->ready();
        for (int d : g)
          if (b_.nbr[opposite(d)] >= 0) send(d, sreq);
      }
    }
    double t2 = MPI_Wtime();
    if (b_.mock) {
      // This rank is its own neighbour: its packed message is the one received.
      for (const auto &g : groups_)
        for (int d : g) m_->unpack_own(d, data);
    } else if (each_) {  // unpack in arrival order
      for (size_t k = 0; k < rreq.size(); k++) {
        int idx;
        MPI_Waitany(static_cast<int>(rreq.size()), rreq.data(), &idx, MPI_STATUS_IGNORE);
        m_->unpack(rdir[idx], data);
      }
    } else {
      size_t first = 0;
      for (const auto &g : groups_) {
        size_t count = std::count_if(g.begin(), g.end(), [&](int d) { return b_.nbr[d] >= 0; });
        MPI_Waitall(static_cast<int>(count), rreq.data() + first, MPI_STATUSES_IGNORE);
        for (size_t k = first; k < first + count; k++) m_->unpack(rdir[k], data);
        first += count;
      }
    }
    m_->finish();
    double t3 = MPI_Wtime();
    MPI_Waitall(static_cast<int>(sreq.size()), sreq.data(), MPI_STATUSES_IGNORE);
    double t4 = MPI_Wtime();
    t[kPostRecv] += t1 - t0, t[kPackPost] += t2 - t1, t[kWaitUnpack] += t3 - t2, t[kWaitSend] += t4 - t3;
    t[kCycle] += t4 - t0;
  }

 private:
  void send(int d, std::vector<MPI_Request> &sreq) {
    sreq.emplace_back();
    MPI_Isend(m_->send_buffer(d), static_cast<int>(b_.message_doubles(d)), MPI_DOUBLE, b_.nbr[opposite(d)], d,
              MPI_COMM_WORLD, &sreq.back());
  }

  const Box &b_;
  std::vector<std::vector<int>> groups_;
  bool each_;
  std::unique_ptr<MpiMessages> m_;
  std::vector<MPI_Request> rreq_, sreq_;
  std::vector<int> rdir_;  // direction of each posted receive
};

class HostMessages : public MpiMessages {
 public:
  explicit HostMessages(const Box &b) : b_(b) {
    for (int d = 0; d < kDirs; d++) {
      sbuf_[d].resize(b.send[opposite(d)].size() * b.vars);
      rbuf_[d].resize(b.recv[d].size() * b.vars);
    }
  }
  double *send_buffer(int d) override { return sbuf_[d].data(); }
  double *recv_buffer(int d) override { return rbuf_[d].data(); }
  void pack(int d, double *data) override {
    const std::vector<long> &z = b_.send[opposite(d)];
    double *out = sbuf_[d].data();
    for (int v = 0; v < b_.vars; v++) {
      const double *src = data + v * b_.G;
      for (long zi : z) *out++ = src[zi];
    }
  }
  void unpack(int d, double *data) override { unpack_from(d, rbuf_[d], data); }
  void unpack_own(int d, double *data) override { unpack_from(d, sbuf_[d], data); }

 private:
  void unpack_from(int d, const std::vector<double> &buf, double *data) {
    const double *in = buf.data();
    for (int v = 0; v < b_.vars; v++) {
      double *dst = data + v * b_.G;
      for (long zi : b_.recv[d]) dst[zi] = *in++;
    }
  }

  const Box &b_;
  std::vector<double> sbuf_[kDirs], rbuf_[kDirs];
};

}  // namespace

Variant *make_mpi_halo(const Box &b, std::vector<std::vector<int>> groups, bool each, MpiMessages *messages) {
  return new MpiHalo(b, std::move(groups), each, messages);
}

MpiMessages *host_messages(const Box &b) { return new HostMessages(b); }

}  // namespace halo3d
