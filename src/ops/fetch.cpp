// Fetch-and-op (exchange.h): contributions leaf -> root in begin, applied at
// the root in (leaf rank, leaf slot) order in end, old values back, on host
// memory (device data comes on host copies: hooks.h, fetch_in).
#include "core/error.h"
#include "ops/exchange.h"
#include "ops/space.h"

namespace stf {
namespace {

// The root side of one fetch-and-op: wait for the contributions, apply them
// in (leaf rank, leaf slot) order keeping each old value, send the old
// values back.
int serve_root(stf_request r) {
  const Plan &p = *r->mover->plan;
  Transport &t = *r->mover->transport;
  const Unit &u = *r->unit;
  const std::size_t pb = u.packed_bytes;
  STF_CHECK(t.wait_recv(r->to_root));

  auto apply_self = [&] {
    grow(&r->selfbuf, static_cast<std::size_t>(p.self_leaf.n) * pb);
    r->kernels->pack(u, p.self_leaf, r->src, r->selfbuf.data());
    count_pack(r, p.self_leaf);
    r->kernels->fetch_and_op(u, p.self_root, r->dst, r->selfbuf.data(), r->op);
    count_unpack(r, p.self_root);
    r->copy->unpack(u, p.self_leaf, r->selfbuf.data(), r->update, MPI_REPLACE);
    count_unpack(r, p.self_leaf);
  };
  for (int k = 0; k <= p.root.count(); k++) {
    if (k == p.self_position && p.self_leaf.n > 0) apply_self();
    if (k < p.root.count()) {
      r->kernels->fetch_and_op(u, p.root_lists[k], r->dst, at(r->rootbuf.data(), p.root.offset[k], pb), r->op);
      count_unpack(r, p.root_lists[k]);
    }
  }

  r->send_ptrs.resize(p.root.count());
  for (int k = 0; k < p.root.count(); k++) r->send_ptrs[k] = at(r->rootbuf.data(), p.root.offset[k], pb);
  STF_CHECK(t.post_send(r->to_leaf, Direction::root_to_leaf, Leg::fetch_return, pb, r->send_ptrs.data()));
  count_messages(r, p.root, p.leaf);
  r->root_served = true;
  return STF_SUCCESS;
}

// Serve the root side of every fetch-and-op in flight on the SF, oldest
// begin first. Another rank may be waiting in the end of any of them for
// old values from this rank, whatever order this rank ends them in; serving
// them all here (no later than their own ends would) is what lets ends come
// in any order. Oldest first: a rank that has not begun a younger one can
// only be waiting for older ones. It also sends the old values in begin
// order on every rank, so one tag matches them all (MPI keeps the order of
// messages between two ranks). Without wait (stf_test), it stops before the
// first one whose contributions have not all arrived.
int serve_pending_roots(Engine &e, bool wait) {
  for (;;) {
    stf_request oldest = nullptr;
    for (stf_request q : e.pool)
      if (q->busy && q->kind == OpKind::fetch_and_op && q->mover == &e && !q->root_served &&
          (!oldest || q->fetch_seq < oldest->fetch_seq))
        oldest = q;
    if (!oldest) return STF_SUCCESS;
    bool arrived = true;
    if (!wait) STF_CHECK(e.transport->test_recv(oldest->to_root, &arrived));
    if (!arrived) return STF_SUCCESS;
    STF_CHECK(serve_root(oldest));
  }
}

}  // namespace

int fetch_begin_on_host(stf_request r) {
  const Plan &p = *r->mover->plan;
  Transport &t = *r->mover->transport;
  const std::size_t pb = r->unit->packed_bytes;
  r->fetch_seq = r->mover->fetch_sequence++;
  r->root_served = false;
  r->lent = false;  // its buffers are combined in place and sent back: never a transport's

  grow(&r->rootbuf, p.root.idx.size() * pb);
  aim_receives(r, p.root, p.root_lists, nullptr, false, r->dst, r->rootbuf.data());
  STF_CHECK(t.post_recv(r->to_root, Direction::leaf_to_root, Leg::fetch_contribution, pb, r->recv_ptrs.data()));

  // Old values come back into leafupdate directly where its slots are contiguous.
  grow(&r->returnbuf, p.leaf.idx.size() * pb);
  aim_receives(r, p.leaf, p.leaf_lists, nullptr, true, r->update, r->returnbuf.data());
  STF_CHECK(t.post_recv(r->to_leaf, Direction::root_to_leaf, Leg::fetch_return, pb, r->recv_ptrs.data()));

  const Flow up = flow(r, Direction::leaf_to_root);
  bool enqueued = false;
  STF_CHECK(host_space.prepare_send(r, up, &enqueued));
  count_messages(r, p.leaf, p.root);
  STF_CHECK(post_deferred_sends(*r->mover->deferred, nullptr));  // the leaf -> root tag is shared with reduce
  return t.post_send(r->to_root, Direction::leaf_to_root, Leg::fetch_contribution, pb, r->send_ptrs.data());
}


int fetch_test(stf_request r, bool *done) {
  Transport &t = *r->mover->transport;
  STF_CHECK(serve_pending_roots(*r->mover, false));
  *done = r->root_served;
  if (*done) STF_CHECK(t.test_recv(r->to_leaf, done));
  if (*done) STF_CHECK(t.test_send(r->to_leaf, done));
  if (*done) STF_CHECK(t.test_send(r->to_root, done));
  return STF_SUCCESS;
}

int fetch_end_on_host(stf_request r) {
  const Plan &p = *r->mover->plan;
  Transport &t = *r->mover->transport;
  const Unit &u = *r->unit;
  const std::size_t pb = u.packed_bytes;
  STF_CHECK(serve_pending_roots(*r->mover, true));
  STF_CHECK(t.wait_recv(r->to_leaf));
  for (int k = 0; k < p.leaf.count(); k++)
    if (!r->recv_direct[k]) {
      r->copy->unpack(u, p.leaf_lists[k], at(r->returnbuf.data(), p.leaf.offset[k], pb), r->update, MPI_REPLACE);
      count_unpack(r, p.leaf_lists[k]);
    }
  STF_CHECK(t.wait_send(r->to_leaf));
  return t.wait_send(r->to_root);
}


}  // namespace stf
