// The one place where a transport falls back to basic: a wrapper that hands
// each posted leg to the transport when it can move it (registry.h,
// Abilities) and to basic otherwise, and waits where it posted. Whole
// operations always go to the transport (it decides with takes_whole).
#include "core/error.h"
#include "transport/registry.h"

namespace stf {
namespace {

class WithFallback final : public Transport {
 public:
  WithFallback(Abilities can, std::unique_ptr<Transport> basic) : can_(can), basic_(std::move(basic)) {}
  void adopt(std::unique_ptr<Transport> primary) { primary_ = std::move(primary); }

  const char *name() const override { return primary_->name(); }
  std::string describe() const override { return primary_->describe(); }
  std::string describe_rank() const override { return primary_->describe_rank(); }

  int post_recv(Channel &c, Direction d, Leg leg, std::size_t ub, void *const *recv) override {
    State &s = c.get<State>();
    s.recv_basic = to_basic(leg);
    return s.recv_basic ? basic_->post_recv(s.basic, d, leg, ub, recv)
                        : primary_->post_recv(s.primary, d, leg, ub, recv);
  }
  int post_send(Channel &c, Direction d, Leg leg, std::size_t ub, const void *const *send) override {
    State &s = c.get<State>();
    s.send_basic = to_basic(leg);
    return s.send_basic ? basic_->post_send(s.basic, d, leg, ub, send)
                        : primary_->post_send(s.primary, d, leg, ub, send);
  }
  int wait_recv(Channel &c) override {
    State &s = c.get<State>();
    return s.recv_basic ? basic_->wait_recv(s.basic) : primary_->wait_recv(s.primary);
  }
  int wait_send(Channel &c) override {
    State &s = c.get<State>();
    return s.send_basic ? basic_->wait_send(s.basic) : primary_->wait_send(s.primary);
  }
  int test_recv(Channel &c, bool *done) override {
    State &s = c.get<State>();
    return s.recv_basic && !c.whole ? basic_->test_recv(s.basic, done) : primary_->test_recv(s.primary, done);
  }
  int test_send(Channel &c, bool *done) override {
    State &s = c.get<State>();
    return s.send_basic && !c.whole ? basic_->test_send(s.basic, done) : primary_->test_send(s.primary, done);
  }

  Transport &mover(Channel &c, Leg leg, Channel **own) override {
    State &s = c.get<State>();
    if (to_basic(leg)) return basic_->mover(s.basic, leg, own);
    return primary_->mover(s.primary, leg, own);
  }
  bool takes_whole(Direction d, const Unit &u, MPI_Op op) const override { return primary_->takes_whole(d, u, op); }
  bool whole_does_self() const override { return primary_->whole_does_self(); }
  int begin_whole(Channel &c, Direction d, const WholeOp &w) override {
    return primary_->begin_whole(c.get<State>().primary, d, w);
  }
  int end_whole(Channel &c, Direction d) override { return primary_->end_whole(c.get<State>().primary, d); }
  bool sends_may_be_deferred() const override { return primary_->sends_may_be_deferred(); }
  bool queues_on_stream() const override { return primary_->queues_on_stream(); }
  void abandon(Channel &c, bool in_end) override {
    if (!c.state) return;
    State &s = c.get<State>();
    primary_->abandon(s.primary, in_end);
    basic_->abandon(s.basic, in_end);
  }
  bool lends(Direction d, Leg leg) const override { return !to_basic(leg) && primary_->lends(d, leg); }
  int lend_send(Channel &c, Direction d, Leg leg, std::size_t ub, void **send) override {
    return primary_->lend_send(c.get<State>().primary, d, leg, ub, send);
  }
  int release_recv(Channel &c) override {
    State &s = c.get<State>();
    return s.recv_basic ? STF_SUCCESS : primary_->release_recv(s.primary);
  }

 private:
  // The transport's and basic's channels for one channel of the ops layer.
  struct State : ChannelState {
    Channel primary, basic;
    bool recv_basic = false, send_basic = false;  // where the current use was posted
  };

  bool to_basic(Leg leg) const {
    return !can_.messages || (leg == Leg::fetch_return && !can_.legs_from_end) ||
           (leg != Leg::forward && !can_.fetch);
  }

  std::unique_ptr<Transport> primary_;
  Abilities can_;
  std::unique_ptr<Transport> basic_;
};

}  // namespace

std::unique_ptr<Transport> make_fallback(Abilities can, std::unique_ptr<Transport> basic) {
  return std::make_unique<WithFallback>(can, std::move(basic));
}

void adopt_primary(Transport *fallback, std::unique_ptr<Transport> primary) {
  static_cast<WithFallback *>(fallback)->adopt(std::move(primary));
}

}  // namespace stf
