// bcast, reduce and fetch-and-op on host data (device data: device_exchange.cpp):
// pack what the plan says, let the transport move it, unpack; the self part
// is a local scatter done while messages fly.
#include "core/error.h"
#include "ops/exchange.h"
#include "ops/exchange_parts.h"

namespace stf {

const char *op_kind_name(OpKind k) {
  switch (k) {
    case OpKind::bcast: return "bcast";
    case OpKind::reduce: return "reduce";
    case OpKind::fetch_and_op: return "fetch_and_op";
    case OpKind::degree: return "compute_degree";
    case OpKind::gather: return "gather";
    case OpKind::scatter: return "scatter";
  }
  return "?";
}

void free_requests(stf_sf sf) {
  for (stf_request r : sf->pool) delete r;
  sf->pool.clear();
}

int acquire_request(stf_sf owner, stf_sf sf, OpKind kind, std::size_t unit_bytes, stf_request *out) {
  stf_request pick = nullptr;
  // Prefer a slot last used with the same unit size: its cached requests fit.
  for (stf_request r : sf->pool)
    if (!r->busy && (!pick || (r->last_bytes == unit_bytes && pick->last_bytes != unit_bytes))) pick = r;
  if (!pick) {
    pick = new (std::nothrow) stf_request_s;
    if (!pick) return set_error(STF_ERR_MEMORY, "cannot allocate a request");
    sf->pool.push_back(pick);
  }
  pick->busy = true;
  pick->owner = owner;
  pick->sf = sf;
  pick->kind = kind;
  pick->last_bytes = unit_bytes;
  owner->pending++;
  *out = pick;
  return STF_SUCCESS;
}

void release_request(stf_request r) {
  r->busy = false;
  r->owner->pending--;
}

int take_request(stf_sf owner, stf_request *req, OpKind kind, stf_request *out) {
  STF_CHECK(check_sf(owner));
  if (!req) return set_error(STF_ERR_NULL, "request pointer is NULL");
  stf_request r = *req;
  if (!r) return set_error(STF_ERR_REQUEST, "%s_end without a matching begin (request is NULL)", op_kind_name(kind));
  if (!r->busy || r->owner != owner)
    return set_error(STF_ERR_REQUEST, "%s_end: the request does not belong to this SF or has already ended",
                     op_kind_name(kind));
  if (r->kind != kind)
    return set_error(STF_ERR_REQUEST, "%s_end called on a request begun by %s_begin", op_kind_name(kind),
                     op_kind_name(r->kind));
  *out = r;
  return STF_SUCCESS;
}

namespace {

// Point each receiving peer either at user memory (direct) or at its slice of buf.
// Direct receives overwrite, so they need a REPLACE unpack.
void prepare_recv(stf_request r, const Messages &m, const std::vector<IndexList> &lists, const char *direct_flags,
                  bool replace, void *user, std::vector<char> *buf) {
  const Unit &u = *r->unit;
  grow(buf, static_cast<std::size_t>(m.idx.size()) * u.packed_bytes);
  r->recv_ptrs.resize(m.count());
  r->recv_direct.assign(m.count(), 0);
  for (int k = 0; k < m.count(); k++) {
    bool direct = replace && direct_ok(u, lists[k]) && (!direct_flags || direct_flags[k]);
    r->recv_direct[k] = direct;
    r->recv_ptrs[k] = direct ? at(user, lists[k].start, u.extent) : at(buf->data(), m.offset[k], u.packed_bytes);
  }
}

}  // namespace

void prepare_send(stf_request r, const Messages &m, const std::vector<IndexList> &lists, const void *user,
                  std::vector<char> *buf) {
  const Unit &u = *r->unit;
  grow(buf, static_cast<std::size_t>(m.idx.size()) * u.packed_bytes);
  r->send_ptrs.resize(m.count());
  for (int k = 0; k < m.count(); k++) {
    if (direct_ok(u, lists[k])) {
      r->send_ptrs[k] = at(user, lists[k].start, u.extent);
    } else {
      char *slice = at(buf->data(), m.offset[k], u.packed_bytes);
      r->kernels->pack(u, lists[k], user, slice);
      count_pack(r, lists[k]);
      r->send_ptrs[k] = slice;
    }
  }
}

void unpack_received(stf_request r, const Messages &m, const std::vector<IndexList> &lists, std::vector<char> &buf,
                     void *user) {
  for (int k = 0; k < m.count(); k++)
    if (!r->recv_direct[k]) {
      r->kernels->unpack(*r->unit, lists[k], at(buf.data(), m.offset[k], r->unit->packed_bytes), user, r->op);
      count_unpack(r, lists[k]);
    }
}

namespace {

// The self part of a bcast or reduce: nothing when it would copy every unit
// onto itself (REPLACE, the same array on both sides, root i is leaf i),
// else the scatter kernel (a memcpy where both sides are contiguous).
void self_part(stf_request r, const IndexList &from, const IndexList &to) {
  if (from.n == 0 || (r->op == MPI_REPLACE && r->src == r->dst && r->sf->plan->self_in_place)) return;
  r->kernels->scatter(*r->unit, from, r->src, to, r->dst, r->op);
  r->owner->stats.scatter_calls++;
}

}  // namespace

int resolve_unit(MPI_Datatype type, MPI_Op op, const Unit **unit, const Kernels **kernels, const Kernels **copy) {
  STF_CHECK(decode_unit(type, unit));
  STF_CHECK(get_kernels(**unit, op, kernels));
  return get_kernels(**unit, MPI_REPLACE, copy);
}

int check_data(stf_sf sf, const void *rootdata, const void *leafdata, const char *what) {
  if (sf->nroots > 0 && !rootdata)
    return set_error(STF_ERR_NULL, "%s: root data is NULL but this rank has %d roots", what, sf->nroots);
  if (sf->nleaves > 0 && !leafdata)
    return set_error(STF_ERR_NULL, "%s: leaf data is NULL but this rank has %d leaves", what, sf->nleaves);
  return STF_SUCCESS;
}

Flow flow(stf_request r, Direction d) {
  const Plan &p = *r->sf->plan;
  if (d == Direction::root_to_leaf)
    return {p.root, p.leaf, p.root_lists, p.leaf_lists, p.self_root, p.self_leaf, nullptr,
            r->to_leaf, r->rootbuf, r->leafbuf, tag_root_to_leaf};
  return {p.leaf, p.root, p.leaf_lists, p.root_lists, p.self_leaf, p.self_root, p.root_recv_direct.data(),
          r->to_root, r->leafbuf, r->rootbuf, tag_leaf_to_root};
}

// src -> dst in direction d: receives posted first, then packs and sends,
// then the self part while messages fly.
int one_way_begin(stf_request r, Direction d) {
  if (r->src_mem == STF_MEMTYPE_DEVICE || r->dst_mem == STF_MEMTYPE_DEVICE) return device_begin(r, d);
  Flow f = flow(r, d);
  Transport &t = *r->sf->transport;
  if (t.takes_whole(d, *r->unit, r->op)) {
    // The transport applies the op to user memory itself. The self part goes
    // first: remote accumulates into dst may start once begin_whole runs.
    if (!t.whole_does_self()) self_part(r, f.self_from, f.self_to);
    STF_CHECK(post_deferred_sends(r->sf, nullptr));  // model C sends of earlier begins go first
    STF_CHECK(t.begin_whole(f.channel, d, WholeOp{*r->unit, r->op, r->src, r->dst}));
    count_messages(r, f.from, f.to);
    return STF_SUCCESS;
  }
  const std::size_t pb = r->unit->packed_bytes;
  prepare_recv(r, f.to, f.to_lists, f.to_direct, r->op == MPI_REPLACE, r->dst, &f.recv_buf);
  STF_CHECK(t.post_recv(f.channel, d, f.tag, pb, r->recv_ptrs.data()));
  prepare_send(r, f.from, f.from_lists, r->src, &f.send_buf);
  STF_CHECK(post_deferred_sends(r->sf, nullptr));  // sends leave in begin order
  STF_CHECK(t.post_send(f.channel, d, f.tag, pb, r->send_ptrs.data()));
  count_messages(r, f.from, f.to);
  self_part(r, f.self_from, f.self_to);
  return STF_SUCCESS;
}

int one_way_end(stf_request r, Direction d) {
  if (r->src_mem == STF_MEMTYPE_DEVICE || r->dst_mem == STF_MEMTYPE_DEVICE) return device_end(r, d);
  Flow f = flow(r, d);
  if (f.channel.whole) return r->sf->transport->end_whole(f.channel, d);
  STF_CHECK(r->sf->transport->wait_recv(f.channel));
  unpack_received(r, f.to, f.to_lists, f.recv_buf, r->dst);
  return r->sf->transport->wait_send(f.channel);
}

// Fetch-and-op: contributions travel leaf -> root in begin; in end the root
// applies them in (leaf rank, leaf slot) order, keeping each old value, and
// sends the old values back.
int fetch_begin(stf_request r) {
  if (r->src_mem == STF_MEMTYPE_DEVICE || r->dst_mem == STF_MEMTYPE_DEVICE || r->update_mem == STF_MEMTYPE_DEVICE)
    return device_fetch_begin(r);
  return fetch_begin_host(r);
}

int fetch_end(stf_request r) {
  if (r->src_mem == STF_MEMTYPE_DEVICE || r->dst_mem == STF_MEMTYPE_DEVICE || r->update_mem == STF_MEMTYPE_DEVICE)
    return device_fetch_end(r);
  return fetch_end_host(r);
}

int fetch_begin_host(stf_request r) {
  stf_sf sf = r->sf;
  const Plan &p = *sf->plan;
  Transport &t = *sf->transport;
  const std::size_t pb = r->unit->packed_bytes;
  r->fetch_seq = sf->fetch_sequence++;
  r->fetch_tag = tag_fetch_first + static_cast<int>(r->fetch_seq % tag_fetch_count);
  r->root_served = false;

  grow(&r->rootbuf, p.root.idx.size() * pb);
  r->recv_ptrs.resize(p.root.count());
  for (int k = 0; k < p.root.count(); k++) r->recv_ptrs[k] = at(r->rootbuf.data(), p.root.offset[k], pb);
  STF_CHECK(t.post_recv(r->to_root, Direction::leaf_to_root, tag_leaf_to_root, pb, r->recv_ptrs.data()));

  // Old values come back into leafupdate directly where its slots are contiguous.
  prepare_recv(r, p.leaf, p.leaf_lists, nullptr, true, r->update, &r->returnbuf);
  STF_CHECK(t.post_recv(r->to_leaf, Direction::root_to_leaf, r->fetch_tag, pb, r->recv_ptrs.data()));

  prepare_send(r, p.leaf, p.leaf_lists, r->src, &r->leafbuf);
  count_messages(r, p.leaf, p.root);
  STF_CHECK(post_deferred_sends(sf, nullptr));  // the leaf -> root tag is shared with reduce
  return t.post_send(r->to_root, Direction::leaf_to_root, tag_leaf_to_root, pb, r->send_ptrs.data());
}

namespace {

// The root side of one fetch-and-op: wait for the contributions, apply them
// in (leaf rank, leaf slot) order keeping each old value, send the old
// values back.
int serve_root(stf_request r) {
  stf_sf sf = r->sf;
  const Plan &p = *sf->plan;
  Transport &t = *sf->transport;
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
  STF_CHECK(t.post_send(r->to_leaf, Direction::root_to_leaf, r->fetch_tag, pb, r->send_ptrs.data()));
  count_messages(r, p.root, p.leaf);
  r->root_served = true;
  return STF_SUCCESS;
}

// Serve the root side of every fetch-and-op in flight on sf, oldest begin
// first. Another rank may be waiting in the end of any of them for old
// values from this rank, whatever order this rank ends them in; serving
// them all here (no later than their own ends would) is what lets ends come
// in any order. Oldest first: a rank that has not begun a younger one can
// only be waiting for older ones.
int serve_pending_roots(stf_sf sf) {
  for (;;) {
    stf_request oldest = nullptr;
    for (stf_request q : sf->pool)
      if (q->busy && q->kind == OpKind::fetch_and_op && q->sf == sf && !q->root_served &&
          (!oldest || q->fetch_seq < oldest->fetch_seq))
        oldest = q;
    if (!oldest) return STF_SUCCESS;
    STF_CHECK(serve_root(oldest));
  }
}

}  // namespace

int fetch_end_host(stf_request r) {
  const Plan &p = *r->sf->plan;
  Transport &t = *r->sf->transport;
  const Unit &u = *r->unit;
  const std::size_t pb = u.packed_bytes;
  STF_CHECK(serve_pending_roots(r->sf));
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
