#include "ops/exchange.h"

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "ops/hooks.h"
#include "ops/memory.h"
#include "ops/space.h"

namespace stf {

namespace {
// v as n copies of x, inline: std::vector::assign is a call of its own on
// every operation's path, several times per operation.
template <class T>
void fill(std::vector<T> *v, std::size_t n, T x) {
  v->resize(n);
  for (T &e : *v) e = x;
}

bool lands_in_place(const Unit &u, const std::vector<IndexList> &lists, const char *direct, int k, bool allowed) {
  return allowed && direct_ok(u, lists[k]) && (!direct || direct[k]);
}

// r->recv_direct[k]: whether message k lands in user memory. Returns whether all n do.
// Inlined, as the two below: calls on every operation's path cost more than
// their small bodies.
__attribute__((always_inline)) inline bool mark_in_place(stf_request r, const std::vector<IndexList> &lists,
                                                         const char *direct, int n, bool allowed) {
  r->recv_direct.resize(n);
  bool all = true;
  for (int k = 0; k < n; k++) {
    const bool in_place = lands_in_place(*r->unit, lists, direct, k, allowed);
    r->recv_direct[k] = in_place;
    all &= in_place;
  }
  return all;
}

// r->recv_ptrs: user memory where recv_direct says so, else the message's
// slice of base. Returns whether any message lands in user memory.
__attribute__((always_inline)) inline bool point_receives(stf_request r, const Messages &m,
                                                          const std::vector<IndexList> &lists, void *user,
                                                          char *base) {
  const Unit &u = *r->unit;
  r->recv_ptrs.resize(m.count());
  bool any = false;
  for (int k = 0; k < m.count(); k++) {
    const bool in_place = r->recv_direct[k];
    r->recv_ptrs[k] = in_place ? at(user, lists[k].start, u.extent) : at(base, m.offset[k], u.packed_bytes);
    any |= in_place;
  }
  return any;
}
}  // namespace

bool aim_receives(stf_request r, const Messages &m, const std::vector<IndexList> &lists, const char *direct,
                  bool in_place_allowed, void *user, char *base) {
  mark_in_place(r, lists, direct, m.count(), in_place_allowed);
  return point_receives(r, m, lists, user, base);
}

namespace {

template <class M>
int post_sends(stf_request r, const Flow &f) {
  STF_CHECK(M::check_for_mpi(r, f.from, r->send_ptrs.data()));
  return r->leg_transport->post_send(*r->leg_channel, f.dir, Leg::forward, r->unit->packed_bytes, r->send_ptrs.data());
}

// Receives into user memory overwrite, so they need REPLACE; the receiving
// space may forbid them (device data on the staged path or in model C).
// Messages in memory the transport lends are where it says at end, but for
// those it takes into the user memory offered here (recv_ptrs[k] kept).
__attribute__((always_inline)) inline int aim_one_way_receives(stf_request r, const Flow &f) {
  const Space &to = space_of(r->dst_mem);
  const bool allowed = r->op == MPI_REPLACE && to.user_memory_may_receive(r);
  if (r->lent) {
    const Unit &u = *r->unit;
    fill<void *>(&r->recv_ptrs, f.to.count(), nullptr);
    fill<char>(&r->recv_direct, f.to.count(), 0);
    for (int k = 0; k < f.to.count(); k++)
      if (lands_in_place(u, f.to_lists, f.to_direct, k, allowed && to.offers_user_memory())) {
        r->recv_direct[k] = 1;
        r->recv_ptrs[k] = at(r->dst, f.to_lists[k].start, u.extent);
      }
    r->recv_in_user_device = false;
    return STF_SUCCESS;
  }
  char *base = nullptr;  // no receive buffer where every message lands in user memory
  if (!mark_in_place(r, f.to_lists, f.to_direct, f.to.count(), allowed)) STF_CHECK(to.recv_buffer(r, f, &base));
  const bool in_place = point_receives(r, f.to, f.to_lists, r->dst, base);
  r->recv_in_user_device = in_place && r->dst_mem == STF_MEMTYPE_DEVICE;
  return STF_SUCCESS;
}

template <class M>
int post_receives(stf_request r, const Flow &f) {
  STF_CHECK(M::check_for_mpi(r, f.to, r->recv_ptrs.data()));
  return r->leg_transport->post_recv(*r->leg_channel, f.dir, Leg::forward, r->unit->packed_bytes,
                                     r->recv_ptrs.data());
}

// The self part: nothing when it would copy every unit onto itself (REPLACE,
// the same array on both sides, root i is leaf i), else the scatter kernel
// (a memcpy where both sides are contiguous) or its device form.
template <class M>
int self_part(stf_request r, const Flow &f) {
  if (f.self_from.n == 0 || (r->op == MPI_REPLACE && r->src == r->dst && r->mover->plan->self_in_place))
    return STF_SUCCESS;
  r->owner->stats.scatter_calls++;
  return M::self_part(r, f);
}

// The transport applies the op to user memory itself. The self part goes
// first: remote writes into dst may start once begin_whole runs.
int begin_whole(stf_request r, const Flow &f) {
  Transport &t = *r->mover->transport;
  if (!t.whole_does_self()) STF_CHECK(self_part<HostHooks>(r, f));
  STF_CHECK(post_deferred_sends(*r->mover->deferred, nullptr));  // model C sends of earlier begins go first
  STF_CHECK(t.begin_whole(f.channel, f.dir, WholeOp{*r->unit, r->op, r->src, r->dst}));
  f.channel.whole = true;
  count_messages(r, f.from, f.to);
  return STF_SUCCESS;
}

// Lent: user memory offered for each contiguous message (the transport only
// reads it), nullptr where the message must be packed.
void offer_sends(stf_request r, const Flow &f, std::vector<void *> *offers) {
  const Unit &u = *r->unit;
  const bool offer = space_of(r->src_mem).offers_user_memory();
  fill<void *>(offers, f.from.count(), nullptr);
  for (int k = 0; offer && k < f.from.count(); k++)
    if (direct_ok(u, f.from_lists[k])) (*offers)[k] = const_cast<char *>(at(r->src, f.from_lists[k].start, u.extent));
}

// Lent: where the transport has each message packed (r->lent_ptrs, offered
// on entry), also the pointers the sends are posted from.
__attribute__((always_inline)) inline int lend_sends(stf_request r, const Flow &f) {
  STF_CHECK(r->leg_transport->lend_send(*r->leg_channel, f.dir, Leg::forward, r->unit->packed_bytes,
                                        r->lent_ptrs.data()));
  r->send_ptrs.resize(r->lent_ptrs.size());
  for (std::size_t k = 0; k < r->lent_ptrs.size(); k++) r->send_ptrs[k] = r->lent_ptrs[k];
  return STF_SUCCESS;
}

// Lent: a message lands in user memory only where the transport kept the
// offered pointer.
void keep_in_place(stf_request r, const Flow &f) {
  for (int k = 0; k < f.to.count(); k++)
    if (r->recv_direct[k] && r->recv_ptrs[k] != at(r->dst, f.to_lists[k].start, r->unit->extent))
      r->recv_direct[k] = 0;
}

// A later start of a prepared operation on host memory (keep_aims): the
// first start's receive targets and send pointers stand, the packed
// messages are packed again.
__attribute__((always_inline)) inline int post_aimed(stf_request r, const Flow &f) {
  bool enqueued = false;
  if (r->repack) STF_CHECK(host_space.prepare_send(r, f, &enqueued));
  STF_CHECK(post_deferred_sends(*r->mover->deferred, nullptr));  // sends leave in begin order
  STF_CHECK(post_sends<HostHooks>(r, f));
  count_messages(r, f.from, f.to);
  return self_part<HostHooks>(r, f);
}
__attribute__((always_inline)) inline int begin_aimed(stf_request r, const Flow &f) {
  STF_CHECK(post_receives<HostHooks>(r, f));
  return post_aimed(r, f);
}
// The transport's express path (Transport::express_begin): every message
// packed where it lends, none sent from or received into user memory.
int begin_express(stf_request r, const Flow &f) {
  const Unit &u = *r->unit;
  for (int k = 0; k < f.from.count(); k++) {
    r->kernels->pack(u, f.from_lists[k], r->src, r->lent_ptrs[k]);
    count_pack(r, f.from_lists[k]);
  }
  r->express = true;
  STF_CHECK(r->leg_transport->express_send(*r->leg_channel));
  count_messages(r, f.from, f.to);
  return self_part<HostHooks>(r, f);
}
int end_express(stf_request r, const Flow &f, std::uint64_t missed_at) {
  const Unit &u = *r->unit;
  count_wait_until(r, missed_at);
  for (int k = 0; k < f.to.count(); k++) {
    r->kernels->unpack(u, f.to_lists[k], r->recv_ptrs[k], r->dst, r->op);
    count_unpack(r, f.to_lists[k]);
  }
  STF_CHECK(r->leg_transport->express_end(*r->leg_channel));
  r->owner->stats.express_operations++;
  return STF_SUCCESS;
}

// Where the transport lends its memory, its answers change every start:
// the first start's offers to it stand instead. The express path first,
// where the transport takes it (no model C sends of earlier begins wait).
int begin_aimed_lent(stf_request r, const Flow &f) {
  bool express = false;
  if (r->mover->deferred->empty())
    STF_CHECK(r->leg_transport->express_begin(*r->leg_channel, f.dir, r->unit->packed_bytes, r->recv_ptrs.data(),
                                              r->lent_ptrs.data(), &express));
  if (express) return begin_express(r, f);
  std::copy(r->offered_recv.begin(), r->offered_recv.end(), r->recv_ptrs.begin());
  std::copy(r->offered_direct.begin(), r->offered_direct.end(), r->recv_direct.begin());
  STF_CHECK(post_receives<HostHooks>(r, f));
  std::copy(r->offered_send.begin(), r->offered_send.end(), r->lent_ptrs.begin());
  STF_CHECK(lend_sends(r, f));
  return post_aimed(r, f);
}

// keep_aims' copies, sized before anything is posted: memory running
// short once messages have left would strand the peers' operations.
__attribute__((noinline)) void reserve_offers(stf_request r, const Flow &f) {
  r->offered_recv.reserve(r->recv_ptrs.size());
  r->offered_direct.reserve(r->recv_direct.size());
  r->offered_send.reserve(static_cast<std::size_t>(f.from.count()));
}

// r's aims stand for its next start (begin_aimed*). Lent: the receive
// pointers are still the offers (the transport answers in its wait_recv).
// Out of line: on the begin's path, but once per prepared operation.
__attribute__((noinline)) void keep_aims(stf_request r, const Flow &f) {
  if (r->lent) {
    r->offered_recv = r->recv_ptrs;
    r->offered_direct = r->recv_direct;
    offer_sends(r, f, &r->offered_send);
  }
  r->repack = r->lent;  // lent memory is never the user's
  for (int k = 0; k < f.from.count(); k++) r->repack |= !direct_ok(*r->unit, f.from_lists[k]);
  r->aimed = true;
}

template <class M>
int one_way_begin(stf_request r, Direction d) {
  Flow f = flow(r, d);
  Transport &t = *r->mover->transport;
  if (M::whole_allowed && t.takes_whole(d, *r->unit, r->op)) return begin_whole(r, f);
  if (M::whole_allowed && r->aimed) return r->lent ? begin_aimed_lent(r, f) : begin_aimed(r, f);
  STF_CHECK(M::before_pack(r));
  Transport &mt = t.mover(f.channel, Leg::forward, &r->leg_channel);
  r->leg_transport = &mt;
  r->lent = mt.lends(d, Leg::forward);
  STF_CHECK(aim_one_way_receives(r, f));
  if (M::whole_allowed && r->prepared && r->lent) reserve_offers(r, f);
  // Messages may arrive while we pack, except into user device memory that
  // the stream may still be reading: the model's wait comes first there.
  const bool receive_early = !r->recv_in_user_device;
  if (receive_early) STF_CHECK(post_receives<M>(r, f));
  if (r->lent) {
    offer_sends(r, f, &r->lent_ptrs);
    STF_CHECK(lend_sends(r, f));
  }
  bool enqueued = false;
  STF_CHECK(space_of(r->src_mem).prepare_send(r, f, &enqueued));
  STF_CHECK(M::before_mpi(r, f, enqueued));
  if (!receive_early) STF_CHECK(post_receives<M>(r, f));
  const bool deferred = M::defers_sends(r);
  if (deferred) {
    STF_CHECK(M::prepare_deferred_sends(r, f));
  } else {
    STF_CHECK(post_deferred_sends(*r->mover->deferred, nullptr));  // sends leave in begin order
    STF_CHECK(post_sends<M>(r, f));
  }
  count_messages(r, f.from, f.to);
  STF_CHECK(self_part<M>(r, f));
  if (deferred) defer_sends(r, d);
  if (M::whole_allowed && r->prepared) keep_aims(r, f);  // host memory
  return STF_SUCCESS;
}

template <class M>
int one_way_end(stf_request r, Direction d) {
  Flow f = flow(r, d);
  Transport &t = *r->mover->transport;
  if (f.channel.whole) {
    f.channel.whole = false;
    const int rc = t.end_whole(f.channel, d);
    count_wait(r);
    return rc;
  }
  Transport &mt = *r->leg_transport;
  Channel &c = *r->leg_channel;
  if (r->express) {
    r->express = false;
    bool taken = false;
    std::uint64_t missed_at = 0;
    STF_CHECK(mt.express_wait(c, &taken, &missed_at));
    if (taken) return end_express(r, f, missed_at);
    // Made ordinary (Transport::express_wait): begin_aimed_lent's aims.
    std::copy(r->offered_recv.begin(), r->offered_recv.end(), r->recv_ptrs.begin());
    std::copy(r->offered_direct.begin(), r->offered_direct.end(), r->recv_direct.begin());
  }
  STF_CHECK(post_deferred_sends(*r->mover->deferred, r));
  if (r->deferred_error) return deferred_failure(r);
  STF_CHECK(mt.wait_recv(c));  // lending transports fill r->recv_ptrs
  if (r->lent) keep_in_place(r, f);
  count_wait(r);
  STF_CHECK(space_of(r->dst_mem).unpack(r, f));
  STF_CHECK(M::after_unpack(r, f));
  if (r->lent) STF_CHECK(mt.release_recv(c));  // after the unpack has read the lent memory
  return mt.wait_send(c);
}

// The exchange built for one memory's hooks.
template <class M>
class MemoryOf final : public Memory {
 public:
  int one_way_begin(stf_request r, Direction d) const override { return stf::one_way_begin<M>(r, d); }
  int one_way_end(stf_request r, Direction d) const override { return stf::one_way_end<M>(r, d); }
  int fetch_begin(stf_request r) const override {
    STF_CHECK(M::fetch_in(r));
    return fetch_begin_on_host(r);
  }
  int fetch_end(stf_request r) const override {
    STF_CHECK(fetch_end_on_host(r));
    return M::fetch_out(r);
  }
  int post_deferred_sends(stf_request r) const override {
    STF_CHECK(M::before_deferred_post(r));
    return post_sends<M>(r, flow(r, r->deferred_dir));
  }
};

const MemoryOf<HostHooks> host;
const MemoryOf<DeviceHooks> device;

}  // namespace

const Memory &host_memory = host;
const Memory &device_memory = device;

int one_way_test(stf_request r, Direction d, bool *done) {
  Flow f = flow(r, d);
  Transport &t = *r->mover->transport;
  if (f.channel.whole) return t.test_recv(f.channel, done);
  STF_CHECK(post_deferred_sends(*r->mover->deferred, r));
  if (r->deferred_error) return deferred_failure(r);
  Transport &mt = *r->leg_transport;  // as one_way_end: where begin posted
  STF_CHECK(mt.test_recv(*r->leg_channel, done));
  return *done ? mt.test_send(*r->leg_channel, done) : STF_SUCCESS;
}

}  // namespace stf
