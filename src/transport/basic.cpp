// The default transport: one message per peer and direction over persistent
// point-to-point requests, created on first use and restarted afterwards.
// A request is rebuilt only when its buffer, size or tag changes.
#include <vector>

#include "core/error.h"
#include "transport/large_count.h"
#include "transport/mpi_requests.h"
#include "transport/registry.h"
#include "transport/size_mismatch.h"

namespace stf {
namespace {

// Per channel: a persistent request per peer, and those started.
struct BasicChannel : ChannelState {
  struct Cached {
    MPI_Request req = MPI_REQUEST_NULL;
    const void *buf = nullptr;
    std::size_t bytes = 0;
    int tag = -1;
    ByteCount type;  // a message above INT_MAX bytes without MPI-4 large-count calls
  };
  std::vector<Cached> sends, recvs;  // one per peer of the sending/receiving side
  std::vector<MPI_Request> active_sends, active_recvs;
  std::vector<MPI_Status> recv_statuses;
  SizeMismatch mismatch;  // a received message of another size than posted for
  bool test_failed = false;  // a test of the receives failed: so does the end
  ~BasicChannel() override {
    for (auto *list : {&sends, &recvs})
      for (Cached &c : *list)
        if (c.req != MPI_REQUEST_NULL) MPI_Request_free(&c.req);
  }
};

class BasicTransport : public TransportDefaults {
 public:
  explicit BasicTransport(const TransportContext &ctx) : comm_(ctx.comm), plan_(ctx.plan) {}
  const char *name() const override { return "basic"; }
  std::string describe() const override { return "basic (persistent point-to-point, one message per peer)"; }

  int post_recv(Channel &c, Direction d, Leg leg, std::size_t unit_bytes, void *const *recv) override {
    BasicChannel &s = c.get<BasicChannel>();
    s.mismatch.clear();
    s.recv_statuses.clear();  // an operation abandoned midway leaves some
    s.test_failed = false;
    return post(receivers(plan_, d), &s.recvs, &s.active_recvs, message_tag(comm_, d, leg), unit_bytes, recv, false);
  }
  int post_send(Channel &c, Direction d, Leg leg, std::size_t unit_bytes, const void *const *send) override {
    BasicChannel &s = c.get<BasicChannel>();
    return post(senders(plan_, d), &s.sends, &s.active_sends, message_tag(comm_, d, leg), unit_bytes, send, true);
  }
  int wait_recv(Channel &c) override {
    BasicChannel &s = c.get<BasicChannel>();
    STF_CHECK(wait_all(&s.active_recvs, &s.recv_statuses));
    STF_CHECK(check_sizes(s));
    if (s.test_failed) {  // its request stayed in flight, its error must not vanish
      s.test_failed = false;
      return set_error(STF_ERR_MPI, "basic transport: a receive of this operation failed in an earlier stf_test");
    }
    return s.mismatch.report("basic");  // also one a test saw, before anything is unpacked
  }
  int wait_send(Channel &c) override { return wait_all(&c.get<BasicChannel>().active_sends); }
  int test_recv(Channel &c, bool *done) override {
    BasicChannel &s = c.get<BasicChannel>();
    const int rc = test_all(&s.active_recvs, done, &s.recv_statuses);
    if (rc != STF_SUCCESS) {
      s.test_failed = true;
      return rc;
    }
    return *done ? check_sizes(s) : STF_SUCCESS;
  }
  int test_send(Channel &c, bool *done) override { return test_all(&c.get<BasicChannel>().active_sends, done); }
  void abandon(Channel &c) override {
    if (!c.state) return;
    BasicChannel &s = c.get<BasicChannel>();
    settle(&s.active_recvs, &s.recvs, true);
    settle(&s.active_sends, &s.sends, false);
  }

 private:
#if defined(STF_SMPI)
  // SimGrid 3.32's SMPI loses the message of a restarted persistent send:
  // there each operation makes its sends afresh.
  static constexpr bool kFreshSends = true;
#else
  static constexpr bool kFreshSends = false;
#endif
  // Inlined into both callers: it is most of the cost of a small operation.
  __attribute__((always_inline)) int post(const Messages &peers, std::vector<BasicChannel::Cached> *cache,
                                          std::vector<MPI_Request> *active, int tag, std::size_t unit_bytes,
                                          const void *const *bufs, bool send) {
    cache->resize(peers.count());
    active->clear();
    for (int k = 0; k < peers.count(); k++) {
      std::size_t bytes = static_cast<std::size_t>(peers.size(k)) * unit_bytes;
      BasicChannel::Cached &c = (*cache)[k];
      if (c.req == MPI_REQUEST_NULL || c.buf != bufs[k] || c.bytes != bytes || c.tag != tag ||
          (kFreshSends && send)) {
        if (c.req != MPI_REQUEST_NULL) STF_MPI(MPI_Request_free(&c.req));
        c = BasicChannel::Cached();
        if (send)
          STF_CHECK(send_init_bytes(bufs[k], bytes, peers.ranks[k], tag, comm_.comm, &c.req, &c.type));
        else
          STF_CHECK(recv_init_bytes(const_cast<void *>(bufs[k]), bytes, peers.ranks[k], tag, comm_.comm, &c.req,
                                    &c.type));
        c.buf = bufs[k];
        c.bytes = bytes;
        c.tag = tag;
      }
      active->push_back(c.req);
    }
    if (!active->empty()) STF_MPI(MPI_Startall(static_cast<int>(active->size()), active->data()));
    return STF_SUCCESS;
  }

  // A longer message than posted for is MPI's truncation error (where MPI
  // reports it: not Open MPI 4.1's MPI_Testall); a shorter one (a peer's
  // unit is smaller) would leave stale bytes in the buffer. So each
  // received size is compared with the posted one, a difference kept for
  // wait_recv to report. The statuses are in the order of the receives,
  // which is the cache's.
  static int check_sizes(BasicChannel &s) {
    for (std::size_t k = 0; k < s.recv_statuses.size(); k++) {
      const std::size_t want = s.recvs[k].bytes;
      long long got = 0;
      STF_CHECK(received_bytes(s.recv_statuses[k], s.recvs[k].type.type(), &got));
      if (static_cast<std::size_t>(got) != want)
        s.mismatch.note(s.recv_statuses[k].MPI_SOURCE, false, want, static_cast<std::size_t>(got));
    }
    s.recv_statuses.clear();
    return STF_SUCCESS;
  }

  // Persistent requests a failed operation started would fail the next
  // MPI_Startall, so they are freed and made again at their next use
  // (active[k] is cache[k]'s request, or MPI_REQUEST_NULL where a failed
  // wait freed it). A receive not yet matched is cancelled first (a matched
  // one completes: its message is on its way); a send still going is
  // finished by MPI in the background.
  static void settle(std::vector<MPI_Request> *active, std::vector<BasicChannel::Cached> *cache, bool recv) {
    for (std::size_t k = 0; k < active->size() && k < cache->size(); k++) {
      MPI_Request q = (*active)[k];
      BasicChannel::Cached &c = (*cache)[k];
      int done = 0;
      if (q != MPI_REQUEST_NULL && recv && MPI_Test(&q, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done) {
        MPI_Cancel(&q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
      }
      if (q != MPI_REQUEST_NULL && c.req == q) MPI_Request_free(&c.req);
      c = BasicChannel::Cached();
    }
    active->clear();
  }

  const Comm &comm_;
  const Plan &plan_;
};

}  // namespace

int make_basic_transport(const TransportContext &ctx, std::unique_ptr<Transport> *out) {
  *out = std::make_unique<BasicTransport>(ctx);
  return STF_SUCCESS;
}

}  // namespace stf
