// The default transport: one message per peer and direction over persistent
// point-to-point requests, created on first use and restarted afterwards.
// A request is rebuilt only when its buffer, size or tag changes.
#include <climits>

#include "core/error.h"
#include "graph/sf.h"
#include "plan/plan.h"
#include "transport/transport.h"

namespace stf {

Channel::~Channel() {
  for (auto *list : {&sends, &recvs})
    for (Cached &c : *list)
      if (c.req != MPI_REQUEST_NULL) MPI_Request_free(&c.req);
}

namespace {

class BasicTransport : public Transport {
 public:
  BasicTransport(MPI_Comm comm, const Plan &plan) : comm_(comm), plan_(plan) {}
  const char *name() const override { return "basic"; }
  std::string describe() const override { return "basic (persistent point-to-point, one message per peer)"; }

  int post_recv(Channel &c, Direction d, int tag, std::size_t unit_bytes, void *const *recv) override {
    const Messages &peers = d == Direction::root_to_leaf ? plan_.leaf : plan_.root;
    return post(peers, &c.recvs, &c.active_recvs, tag, unit_bytes, recv, false);
  }
  int post_send(Channel &c, Direction d, int tag, std::size_t unit_bytes, const void *const *send) override {
    const Messages &peers = d == Direction::root_to_leaf ? plan_.root : plan_.leaf;
    return post(peers, &c.sends, &c.active_sends, tag, unit_bytes, send, true);
  }
  int wait_recv(Channel &c) override { return wait(&c.active_recvs); }
  int wait_send(Channel &c) override { return wait(&c.active_sends); }

 private:
  int post(const Messages &peers, std::vector<Channel::Cached> *cache, std::vector<MPI_Request> *active, int tag,
           std::size_t unit_bytes, const void *const *bufs, bool send) {
    cache->resize(peers.count());
    active->clear();
    for (int k = 0; k < peers.count(); k++) {
      std::size_t bytes = static_cast<std::size_t>(peers.size(k)) * unit_bytes;
      if (bytes > INT_MAX)
        return set_error(STF_ERR_UNSUPPORTED, "message of %zu bytes to rank %d exceeds INT_MAX", bytes,
                         peers.ranks[k]);
      Channel::Cached &c = (*cache)[k];
      if (c.req == MPI_REQUEST_NULL || c.buf != bufs[k] || c.bytes != static_cast<int>(bytes) || c.tag != tag) {
        if (c.req != MPI_REQUEST_NULL) STF_MPI(MPI_Request_free(&c.req));
        c = Channel::Cached();
        if (send)
          STF_MPI(MPI_Send_init(bufs[k], static_cast<int>(bytes), MPI_BYTE, peers.ranks[k], tag, comm_, &c.req));
        else
          STF_MPI(MPI_Recv_init(const_cast<void *>(bufs[k]), static_cast<int>(bytes), MPI_BYTE, peers.ranks[k], tag,
                                comm_, &c.req));
        c.buf = bufs[k];
        c.bytes = static_cast<int>(bytes);
        c.tag = tag;
      }
      active->push_back(c.req);
    }
    if (!active->empty()) STF_MPI(MPI_Startall(static_cast<int>(active->size()), active->data()));
    return STF_SUCCESS;
  }

  static int wait(std::vector<MPI_Request> *active) {
    if (!active->empty()) STF_MPI(MPI_Waitall(static_cast<int>(active->size()), active->data(), MPI_STATUSES_IGNORE));
    active->clear();
    return STF_SUCCESS;
  }

  MPI_Comm comm_;
  const Plan &plan_;
};

}  // namespace

std::unique_ptr<Transport> make_basic_transport(MPI_Comm comm, const Plan &plan) {
  return std::make_unique<BasicTransport>(comm, plan);
}

int create_transport(stf_sf sf, const Plan &plan, std::unique_ptr<Transport> *out) {
  if (sf->opts.type == "basic") {
    *out = make_basic_transport(sf->comm, plan);
    return STF_SUCCESS;
  }
  if (sf->opts.type == "neighbor") return make_neighbor_transport(sf, plan, out);
  if (sf->opts.type == "window") return make_window_transport(sf, plan, out);
  return make_collective_transport(sf, plan, out);  // the collective names, or an error
}

}  // namespace stf
