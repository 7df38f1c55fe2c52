// The default transport: one message per peer and direction. Receives are
// persistent requests, created on first use and restarted afterwards (one
// is rebuilt only when its buffer, size or tag changes; a truncated one
// reports its error on its own communicator, mpi_requests.h). Sends are
// MPI_Isend: Open MPI 4.1 (ob1) sends a small MPI_Isend inline, a restarted
// persistent send through its general path, about 0.1 us more per message
// (bench/README, sf_pingpong); and SimGrid's SMPI loses the message of a
// restarted persistent send.
#include <string>
#include <vector>

#include "core/error.h"
#include "transport/large_count.h"
#include "transport/mpi_requests.h"
#include "transport/registry.h"
#include "transport/size_mismatch.h"

namespace stf {
namespace {

// Per channel: a persistent receive per peer, and the requests started.
struct BasicChannel : ChannelState {
  struct Cached {
    MPI_Request req = MPI_REQUEST_NULL;
    const void *buf = nullptr;
    std::size_t bytes = 0;
    int tag = -1;
    ByteCount type;  // a message above INT_MAX bytes without MPI-4 large-count calls
  };
  std::vector<Cached> recvs;  // one per peer of the receiving side
  std::vector<MPI_Request> active_sends, active_recvs;
  std::vector<MPI_Status> recv_statuses;
  SizeMismatch mismatch;  // a received message of another size than posted for
  bool test_failed = false;  // a test of the receives failed: so does the end
  bool recvs_started = false;  // active_recvs are started (MPI_Startall)
  ~BasicChannel() override {
    for (Cached &c : recvs)
      if (c.req != MPI_REQUEST_NULL) MPI_Request_free(&c.req);
  }
};

class BasicTransport : public TransportDefaults {
 public:
  explicit BasicTransport(const TransportContext &ctx) : comm_(ctx.comm), plan_(ctx.plan) {}
  const char *name() const override { return "basic"; }
  std::string describe() const override { return "basic (point-to-point, one message per peer)"; }

  int post_recv(Channel &c, Direction d, Leg leg, std::size_t unit_bytes, void *const *recv) override {
    STF_CHECK(refuse_if_broken());  // a begin's first call (post_send may serve an end)
    BasicChannel &s = c.get<BasicChannel>();
    s.mismatch.clear();
    forget_statuses(&s.recv_statuses);  // an operation abandoned midway leaves some
    s.test_failed = false;
    return start_recvs(receivers(plan_, d), &s, message_tag(comm_, d, leg), unit_bytes, recv);
  }
  int post_send(Channel &c, Direction d, Leg leg, std::size_t unit_bytes, const void *const *send) override {
    BasicChannel &s = c.get<BasicChannel>();
    const Messages &peers = senders(plan_, d);
    const int tag = message_tag(comm_, d, leg);
    s.active_sends.clear();
    const std::size_t n = static_cast<std::size_t>(peers.count());
    if (s.active_sends.capacity() < n) s.active_sends.reserve(n);  // no allocation after a message has left
    for (int k = 0; k < peers.count(); k++) {
      s.active_sends.push_back(MPI_REQUEST_NULL);
      STF_CHECK(isend_bytes(send[k], static_cast<std::size_t>(peers.size(k)) * unit_bytes, peers.ranks[k], tag,
                            comm_.comm, &s.active_sends.back()));
    }
    return STF_SUCCESS;
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
  // A begin that failed after a message of it left, or after a peer's
  // message came (its receive completed, so the retry's would take the
  // peer's next one), cannot be begun again; nor can the SF of an end that
  // failed before a peer's message came (a wait may return with receives
  // pending: MPI_ERR_PENDING), whose receive is cancelled and the message
  // left for the next operation's. The peers' operations no longer pair
  // with this rank's, and new operations are refused.
  void abandon(Channel &c, bool in_end) override {
    if (!c.state) return;
    BasicChannel &s = c.get<BasicChannel>();
    const Settled settled = settle_recvs(&s);
    bool moved = settled.came;
    for (MPI_Request &q : s.active_sends)  // MPI finishes a send still going in the background
      if (q != MPI_REQUEST_NULL) {
        MPI_Request_free(&q);
        moved = true;
      }
    s.active_sends.clear();
    if (!broken_.empty()) return;
    if (!in_end && moved)
      broken_ = "a begin of this SF failed after a message of it had left or come; its peers' operations no longer "
                "pair with this rank's";
    if (in_end && settled.cancelled)
      broken_ = "an end of this SF failed before a peer's message came; its peers' operations no longer pair with "
                "this rank's";
  }

 private:
  // Starts a receive per peer, remaking a persistent request only where
  // its buffer, size or tag changed. Inlined: most of a small receive's cost.
  __attribute__((always_inline)) int start_recvs(const Messages &peers, BasicChannel *s, int tag,
                                                 std::size_t unit_bytes, void *const *bufs) {
    s->recvs.resize(peers.count());
    s->active_recvs.clear();
    s->recvs_started = false;
    for (int k = 0; k < peers.count(); k++) {
      std::size_t bytes = static_cast<std::size_t>(peers.size(k)) * unit_bytes;
      BasicChannel::Cached &c = s->recvs[k];
      if (c.req == MPI_REQUEST_NULL || c.buf != bufs[k] || c.bytes != bytes || c.tag != tag) {
        if (c.req != MPI_REQUEST_NULL) STF_MPI(MPI_Request_free(&c.req));
        c = BasicChannel::Cached();
        STF_CHECK(recv_init_bytes(bufs[k], bytes, peers.ranks[k], tag, comm_.comm, &c.req, &c.type));
        c.buf = bufs[k];
        c.bytes = bytes;
        c.tag = tag;
      }
      s->active_recvs.push_back(c.req);
    }
    s->recvs_started = true;  // also where MPI_Startall fails partway: abandon cancels what it started
    if (!s->active_recvs.empty())
      STF_MPI(MPI_Startall(static_cast<int>(s->active_recvs.size()), s->active_recvs.data()));
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
    forget_statuses(&s.recv_statuses);
    return STF_SUCCESS;
  }

  // Persistent receives a failed operation started would fail the next
  // MPI_Startall, so they are freed and made again at their next use
  // (active_recvs[k] is recvs[k]'s request, or MPI_REQUEST_NULL where a
  // failed wait freed it). One not yet matched is cancelled first (a
  // matched one completes: its message is on its way).
  // Returns whether a started one had taken its message, and whether one
  // was cancelled before its message came.
  struct Settled {
    bool came = false, cancelled = false;
  };
  static Settled settle_recvs(BasicChannel *s) {
    Settled out;
    for (std::size_t k = 0; k < s->active_recvs.size() && k < s->recvs.size(); k++) {
      MPI_Request q = s->active_recvs[k];
      BasicChannel::Cached &c = s->recvs[k];
      int done = 0, cancelled = 0;
      MPI_Status status;
      if (q != MPI_REQUEST_NULL && s->recvs_started) {
        if (MPI_Test(&q, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
          done = 1;  // a message that failed to arrive whole (truncated) came all the same
        } else if (!done) {
          MPI_Cancel(&q);
          MPI_Wait(&q, &status);
          MPI_Test_cancelled(&status, &cancelled);
        }
        out.came |= !cancelled;
        out.cancelled |= cancelled != 0;
      }
      if (q != MPI_REQUEST_NULL && c.req == q) MPI_Request_free(&c.req);
      c = BasicChannel::Cached();
    }
    s->active_recvs.clear();
    s->recvs_started = false;
    return out;
  }
  int refuse_if_broken() const {
    if (broken_.empty()) return STF_SUCCESS;
    return set_error(STF_ERR_STATE, "basic transport: %s: destroy the SF", broken_.c_str());
  }

  const Comm &comm_;
  const Plan &plan_;
  std::string broken_;  // why new operations are refused, if they are
};

}  // namespace

int make_basic_transport(const TransportContext &ctx, std::unique_ptr<Transport> *out) {
  *out = std::make_unique<BasicTransport>(ctx);
  return STF_SUCCESS;
}

}  // namespace stf
