// The ops layer's entry points (operation.h): an operation begun on a set-up
// SF runs through the Memory of its data (memory.h), and ends by its request.
#include "ops/operation.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/error.h"
#include "ops/exchange.h"
#include "ops/memory.h"

namespace stf {
namespace {

int begin_kind(stf_request r) {
  switch (r->kind) {
    case OpKind::bcast:
    case OpKind::scatter: return r->memory->one_way_begin(r, Direction::root_to_leaf);
    case OpKind::reduce:
    case OpKind::gather: return r->memory->one_way_begin(r, Direction::leaf_to_root);
    case OpKind::fetch_and_op: return r->memory->fetch_begin(r);
    case OpKind::degree: return STF_SUCCESS;
  }
  return set_error(STF_ERR_INTERNAL, "unknown operation kind");
}

int end_kind(stf_request r) {
  switch (r->kind) {
    case OpKind::bcast:
    case OpKind::scatter: return r->memory->one_way_end(r, Direction::root_to_leaf);
    case OpKind::reduce:
    case OpKind::gather: return r->memory->one_way_end(r, Direction::leaf_to_root);
    case OpKind::fetch_and_op: return r->memory->fetch_end(r);
    case OpKind::degree: return STF_SUCCESS;
  }
  return set_error(STF_ERR_INTERNAL, "unknown operation kind");
}

int test_kind(stf_request r, bool *done) {
  switch (r->kind) {
    case OpKind::bcast:
    case OpKind::scatter: return one_way_test(r, Direction::root_to_leaf, done);
    case OpKind::reduce:
    case OpKind::gather: return one_way_test(r, Direction::leaf_to_root, done);
    case OpKind::fetch_and_op: return fetch_test(r, done);
    case OpKind::degree:  // its end hands out the degrees
      return set_error(STF_ERR_REQUEST, "stf_test: end a compute_degree request with stf_compute_degree_end");
  }
  return set_error(STF_ERR_INTERNAL, "unknown operation kind");
}

}  // namespace

// NULL data is an error only where this rank has roots (leaves) to touch.
int check_data(const Graph &g, const OpArgs &a) {
  const bool roots_written = a.kind == OpKind::reduce || a.kind == OpKind::gather || a.kind == OpKind::fetch_and_op;
  const void *rootdata = roots_written ? a.dst : a.src;
  const void *leafdata = roots_written ? a.src : a.dst;
  if (g.nroots > 0 && !rootdata)
    return set_error(STF_ERR_NULL, "%s: root data is NULL but this rank has %d roots", op_kind_name(a.kind),
                     g.nroots);
  if (g.nleaves > 0 && !leafdata)
    return set_error(STF_ERR_NULL, "%s: leaf data is NULL but this rank has %d leaves", op_kind_name(a.kind),
                     g.nleaves);
  if (a.kind == OpKind::fetch_and_op && g.nleaves > 0 && !a.update)
    return set_error(STF_ERR_NULL, "fetch_and_op: leafupdate is NULL but this rank has %d leaves", g.nleaves);
  return STF_SUCCESS;
}

std::string begin_call_name(const OpArgs &a) {
  return std::string(op_kind_name(a.kind)) + (a.prepare ? "_init" : "_begin");
}

int resolve_unit(const OpArgs &a, Resolved *out) {
  STF_CHECK(decode_unit(a.type, &out->unit));
  STF_CHECK(get_kernels(*out->unit, a.op, &out->kernels));
  // Only fetch-and-op copies old values back (REPLACE works for every unit).
  return a.kind == OpKind::fetch_and_op ? get_kernels(*out->unit, MPI_REPLACE, &out->copy) : STF_SUCCESS;
}

namespace {

// A begin on mover, whose deferred sends failed, fails too.
int check_unbroken(const Engine &mover, const OpArgs &a) {
  if (mover.broken.empty()) return STF_SUCCESS;
  return set_error(STF_ERR_STATE, "%s: %s; destroy the SF", begin_call_name(a).c_str(), mover.broken.c_str());
}

// A slot for a on mover, its arguments and memory resolved, nothing posted.
// Inlined, as post_operation: each is on every begin's path.
__attribute__((always_inline)) inline int take_slot(Engine &owner, Engine &mover, const OpArgs &a,
                                                    const Resolved &res, stf_request *out) {
  STF_CHECK(check_data(*mover.graph, a));
  STF_CHECK(check_unbroken(mover, a));
  stf_request r = nullptr;
  STF_CHECK(acquire_request(owner, mover, a.kind, res.unit->packed_bytes, &r));
  hold_arguments(r, a, res);
  const int rc = contained([&] { return resolve_memory(a, r); });
  if (rc) {
    release_request(r);
    return rc;
  }
  *out = r;
  return STF_SUCCESS;
}

// Post the operation in slot r; a failure leaves nothing posted.
__attribute__((always_inline)) inline int post_operation(stf_request r) {
  const int rc = contained([&] { return begin_kind(r); });
  if (rc) abandon_request(r, false);  // some messages may have been posted already
  return rc;
}

// Whether a may run in a kept slot: a bcast or reduce on the SF called, of
// a named unit (a handle that a free cannot make mean another unit), not
// prepared by the user, -stf_repeat_begins on. Its op must be predefined
// too: checked only when a slot is kept (worth_keeping), so every kept
// slot's op is.
bool repeatable(const Engine &owner, const Engine &mover, const OpArgs &a, const Resolved &res) {
  return &owner == &mover && (a.kind == OpKind::bcast || a.kind == OpKind::reduce) && !a.prepare &&
         res.unit->named && mover.opts->repeat_begins;
}

// A kept slot holds its buffers between operations, where a pooled one
// would serve the next begin of any arguments: only operations whose
// messages to and from this rank hold at most kKeptBytes keep one, which is
// where a begin's own cost shows at all.
constexpr long long kKeptBytes = 1 << 20;
bool worth_keeping(const Engine &e, stf_request r) {
  const long long units = e.sent[0].units + e.sent[1].units;  // sent one way, received the other
  return r->memory == &host_memory && op_id(r->op) >= 0 &&
         units * static_cast<long long>(r->unit->packed_bytes) <= kKeptBytes;
}

// The index in e.kept of the slot kept for a's arguments, -1 if none.
// The same arrays pass the same data checks and aim the same messages.
int kept_for(const Engine &e, const OpArgs &a, const Resolved &res) {
  for (int k = 0; k < Engine::kKept && e.kept[k]; k++) {
    const stf_request r = e.kept[k];
    if (r->kind == a.kind && r->src == a.src && r->dst == a.dst && r->unit == res.unit && r->op == a.op &&
        r->given_src_mem == a.src_mem && r->given_dst_mem == a.dst_mem)
      return k;
  }
  return -1;
}

// Whether a's arguments are among the last kKept that found no kept slot
// on e; if not, they are recorded there. Equal arguments give equal
// summaries; unequal ones that happen to share a summary cost a kept slot,
// nothing more (kept_for compares the arguments themselves).
bool seen_before(Engine &e, const OpArgs &a, const Resolved &res) {
  std::uint64_t op = 0;
  std::memcpy(&op, &a.op, std::min(sizeof op, sizeof a.op));  // a pointer or an int, by MPI
  const auto word = [](const void *p) { return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p)); };
  const std::uint64_t key = (word(a.src) * 0x9e3779b97f4a7c15ULL) ^ (word(a.dst) * 0xc2b2ae3d27d4eb4fULL) ^
                            (word(res.unit) * 0x165667b19e3779f9ULL) ^ (op * 0x27d4eb2f165667c5ULL) ^
                            (static_cast<std::uint64_t>(a.kind) << 32) ^
                            (static_cast<std::uint64_t>(a.src_mem + 1) << 40) ^
                            (static_cast<std::uint64_t>(a.dst_mem + 1) << 48);
  if (std::find(std::begin(e.seen), std::end(e.seen), key) != std::end(e.seen)) return true;
  e.seen[e.seen_next] = key;
  e.seen_next = (e.seen_next + 1) % Engine::kKept;
  return false;
}

// A begin that repeats kept slot r's arguments: r's operation starts again,
// as a prepared one would, under a new handle.
int restart_kept(const OpArgs &a, stf_request r, stf_request *req) {
  STF_CHECK(check_unbroken(*r->mover, a));
  r->owner->pending++;
  r->started = true;
  if (const int rc = post_operation(r)) {
    release_request(r);
    return rc;
  }
  r->owner->stats.repeated_begins++;
  *req = handle_of(r);
  return STF_SUCCESS;
}

}  // namespace

int begin_operation(Engine &owner, Engine &mover, const OpArgs &a, const Resolved &res, stf_request *req) {
  *req = nullptr;
  bool keep = repeatable(owner, mover, a, res);
  if (const int at = keep ? kept_for(mover, a, res) : -1; at >= 0) {
    stf_request r = mover.kept[at];
    keep = false;  // restarted here, or in flight (this begin runs in a slot of its own)
    if (!r->started && on_host(a)) {
      touch_kept(mover, at);
      return restart_kept(a, r, req);
    }
    if (!r->started) release_request(r);  // its data is no longer on the host
  }
  if (keep) keep = seen_before(mover, a, res);  // the second of recent begins alike keeps its slot
  stf_request r = nullptr;
  STF_CHECK(take_slot(owner, mover, a, res, &r));
  if (keep && worth_keeping(mover, r) && keep_slot(mover, r)) {
    r->given_src_mem = a.src_mem;
    r->given_dst_mem = a.dst_mem;
    r->started = true;
  }
  if (const int rc = post_operation(r)) {
    release_request(r);
    return rc;
  }
  *req = handle_of(r);
  return STF_SUCCESS;
}

int prepare_operation(Engine &owner, Engine &mover, const OpArgs &a, const Resolved &res, stf_request *req) {
  *req = nullptr;
  stf_request r = nullptr;
  STF_CHECK(take_slot(owner, mover, a, res, &r));
  r->prepared = true;
  *req = handle_of(r);
  return STF_SUCCESS;
}

int start_operation(stf_request r) {
  if (!r->mover->broken.empty())
    return set_error(STF_ERR_STATE, "stf_start: %s; destroy the SF", r->mover->broken.c_str());
  STF_CHECK(post_operation(r));
  r->started = true;
  return STF_SUCCESS;
}

int test_operation(stf_request r, stf_request *req, int *done) {
  *done = 0;
  bool ready = false;  // a failed test leaves the request in flight
  STF_CHECK(test_kind(r, &ready));
  if (!ready) return STF_SUCCESS;
  *done = 1;
  return end_operation(r, req);
}

int end_operation(stf_request r, stf_request *req) {
  const int rc = contained([&] { return end_kind(r); });
  if (rc) abandon_request(r, true);  // what is still posted must not reach the slot's next use
  finish_request(r, req);
  return rc;
}

}  // namespace stf
