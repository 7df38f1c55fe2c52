// What the transports that run putsignal's protocol (slot_ring.h) as
// device stream work share: ipc (ipc.cpp) and nvshmem (its plug-in, which
// calls nothing of libstarforest: so this header is inline only and errors
// go through the set_error it is given). Each direction's operations are
// numbered alike on every rank; posting and waiting queue work on the
// library stream and return; operation n may begin only once operation
// n - S has ended on this rank (stream waits cannot yield: more in flight
// could deadlock); each peer link's regions hold a fixed number of bytes per
// unit, set at set-up. A refusal of that rule, or an operation abandoned
// midway, leaves the ranks' numbering possibly out of step (the rule is
// checked locally): the transport then refuses every later operation
// (STF_ERR_STATE) rather than pair one rank's operation with another's.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "transport/slot_ring.h"
#include "transport/transport.h"

namespace stf {

// One peer of one direction, as sender or receiver.
struct StreamLink {
  int rank = 0;
  stf_int units = 0;
  std::size_t capacity = 0;  // bytes a region holds
  SlotRing mine;    // in my memory: receive side, my ring; send side, my credit words (or an outbox)
  SlotRing theirs;  // receive side: the sender's credit words; send side: the receiver's ring
  std::vector<std::uint64_t> last_in_region;  // send side: per region, its last message + 1
};

struct StreamChannel : ChannelState {
  std::uint64_t seq = 0;
  bool active = false;  // from the operation's first call to wait_send
  Direction dir = Direction::root_to_leaf;
  std::size_t unit_bytes = 0;
  void *const *recv = nullptr;  // the ops layer's receive buffers (post_recv)
  bool host_send = false;       // some send buffer is host memory
};

inline int direction_index(Direction d) { return d == Direction::root_to_leaf ? 0 : 1; }

template <class Link>
class StreamPutSignal : public TransportDefaults {
 public:
  using SetError = int (*)(int code, const char *fmt, ...);
  StreamPutSignal(const char *name, const char *slots_option, const char *unit_option, int slots,
                  std::size_t unit_capacity, SetError set_error)
      : slots_(slots), unit_capacity_(unit_capacity), name_(name), slots_option_(slots_option),
        unit_option_(unit_option), set_error_(set_error) {}

  bool sends_may_be_deferred() const override { return false; }  // already asynchronous on the stream
  bool queues_on_stream() const override { return true; }
  void abandon(Channel &c, bool) override {
    StreamChannel &s = c.get<StreamChannel>();
    if (s.active) broken_ = true;
    end(s);
  }
  int post_recv(Channel &c, Direction d, Leg, std::size_t ub, void *const *recv) override {
    StreamChannel *s = nullptr;
    if (int rc = start(c, d, ub, &s)) return rc;
    s->recv = recv;
    return STF_SUCCESS;
  }
  // Arrival is known to the stream only: the waits queue and return.
  int test_recv(Channel &, bool *done) override {
    *done = true;
    return STF_SUCCESS;
  }
  int test_send(Channel &, bool *done) override {
    *done = true;
    return STF_SUCCESS;
  }

 protected:
  // The operation on c: numbered at its first call, checked against the
  // regions and the operations in flight.
  int start(Channel &c, Direction d, std::size_t ub, StreamChannel **out) {
    StreamChannel &s = c.get<StreamChannel>();
    *out = &s;
    if (s.active) return STF_SUCCESS;
    if (broken_)
      return set_error_(STF_ERR_STATE, "%s transport: an earlier operation was refused or failed midway; the ranks' "
                                       "operations may be out of step, so this SF takes no more", name_);
    // By the unit alone (the same on every rank), not by each link's rounded capacity.
    if (ub > unit_capacity_)
      return set_error_(STF_ERR_UNSUPPORTED, "%s transport: units of %zu B are larger than its regions' (-%s %zu)",
                        name_, ub, unit_option_, unit_capacity_);
    const int i = direction_index(d);
    std::vector<std::uint64_t> &flying = in_flight_[i];
    const std::uint64_t n = next_seq_[i];
    if (!flying.empty() && *std::min_element(flying.begin(), flying.end()) + slots_ <= n) {
      broken_ = true;
      return set_error_(STF_ERR_UNSUPPORTED,
                        "%s transport: operation %llu of a direction begins before operation %llu has ended on this "
                        "rank (stream waits cannot yield: raise -%s, now %d); the SF takes no more operations",
                        name_, static_cast<unsigned long long>(n), static_cast<unsigned long long>(n - slots_),
                        slots_option_, slots_);
    }
    next_seq_[i]++;
    flying.push_back(n);
    s = StreamChannel{};
    s.seq = n;
    s.active = true;
    s.dir = d;
    s.unit_bytes = ub;
    return STF_SUCCESS;
  }
  // The operation's last call (wait_send, or abandon).
  void end(StreamChannel &s) {
    if (!s.active) return;
    std::vector<std::uint64_t> &flying = in_flight_[direction_index(s.dir)];
    flying.erase(std::find(flying.begin(), flying.end(), s.seq));
    s.active = false;
  }
  // Set-up: values[k] goes to to[k]'s rank, (*got)[k] comes from from[k]'s.
  template <class T>
  int exchange(MPI_Comm comm, int tag, const std::vector<Link> &to, const std::vector<T> &values,
               const std::vector<Link> &from, std::vector<T> *got) {
    got->assign(from.size(), T{});
    std::vector<MPI_Request> reqs(from.size() + to.size(), MPI_REQUEST_NULL);
    const int n = static_cast<int>(sizeof(T));
    bool ok = true;
    for (std::size_t k = 0; k < from.size(); k++)
      ok &= MPI_Irecv(&(*got)[k], n, MPI_BYTE, from[k].rank, tag, comm, &reqs[k]) == MPI_SUCCESS;
    for (std::size_t k = 0; k < to.size(); k++)
      ok &= MPI_Isend(&values[k], n, MPI_BYTE, to[k].rank, tag, comm, &reqs[from.size() + k]) == MPI_SUCCESS;
    ok &= MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE) == MPI_SUCCESS;
    return ok ? STF_SUCCESS : set_error_(STF_ERR_MPI, "%s transport: the set-up's exchange with its peers failed", name_);
  }

  bool broken() const { return broken_; }

  const int slots_;
  const std::size_t unit_capacity_;
  std::vector<Link> send_[2], recv_[2];  // per direction

 private:
  bool broken_ = false;
  const char *const name_, *const slots_option_, *const unit_option_;
  const SetError set_error_;
  std::uint64_t next_seq_[2] = {0, 0};
  std::vector<std::uint64_t> in_flight_[2];  // per direction: operations begun and not ended
};

}  // namespace stf
