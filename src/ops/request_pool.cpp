// Request slots: a pool per SF, reused so that buffers and persistent
// requests survive between operations.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <mutex>
#include <new>

#include "core/clock.h"
#include "core/error.h"
#include "ops/request.h"

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

void free_requests(Engine &e) {
  for (stf_request r : e.pool) delete r;
  e.pool.clear();
  e.idle.clear();
  std::fill(std::begin(e.kept), std::end(e.kept), nullptr);
  std::fill(std::begin(e.seen), std::end(e.seen), 0);
  e.seen_next = 0;
}

void count_wait(stf_request r) {
  const int k = timing_index(r->kind);
  if (k >= 0 && r->owner->call_start) r->owner->timing[k].wait += ticks() - r->owner->call_start;
}

void count_wait_until(stf_request r, std::uint64_t missed_at) {
  const int k = timing_index(r->kind);
  const unsigned long long from = r->owner->call_start;
  if (k >= 0 && from && missed_at > from) r->owner->timing[k].wait += missed_at - from;
}

std::uintptr_t generation_high_bits = 0;

int acquire_request(Engine &owner, Engine &mover, OpKind kind, std::size_t unit_bytes, stf_request *out) {
  stf_request pick = nullptr;
  if (!mover.idle.empty()) {
    // The last released slot, or one of the few before it last used with
    // the same unit size (its cached MPI requests fit). A bounded look, so
    // that a begin costs the same with any number of operations in flight.
    std::size_t at = mover.idle.size() - 1;
    for (std::size_t k = 0; k < 4 && k < mover.idle.size(); k++)
      if (mover.idle[mover.idle.size() - 1 - k]->last_bytes == unit_bytes) {
        at = mover.idle.size() - 1 - k;
        break;
      }
    pick = mover.idle[at];
    mover.idle.erase(mover.idle.begin() + static_cast<std::ptrdiff_t>(at));
  } else {
    mover.pool.reserve(mover.pool.size() + 1);
    mover.idle.reserve(mover.pool.size() + 1);  // release never allocates
    pick = new (std::nothrow) stf_request_s;
    if (!pick) return set_error(STF_ERR_MEMORY, "cannot allocate a request");
    static std::once_flag decided;  // whether handles may use the top byte (request.h)
    std::call_once(decided, [pick] {
      const std::uintptr_t top = kGenerationHighShift ? ~std::uintptr_t(0) << kGenerationHighShift : 0;
      generation_high_bits = reinterpret_cast<std::uintptr_t>(pick) & top ? 0 : top;
    });
    if (const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(pick); at & generation_bits()) {
      delete pick;
      return set_error(STF_ERR_INTERNAL, "a request slot at address %#jx: its handle cannot carry a generation",
                       static_cast<std::uintmax_t>(at));
    }
    mover.pool.push_back(pick);
  }
  pick->busy = true;
  pick->generation++;
  pick->owner = &owner;
  pick->mover = &mover;
  pick->kind = kind;
  pick->last_bytes = unit_bytes;
  pick->deferred_error = STF_SUCCESS;  // its last operation's, reported by that one's end
  owner.pending++;
  *out = pick;
  return STF_SUCCESS;
}

void abandon_request(stf_request r, bool in_end) {
  r->aimed = r->express = false;  // aimed again at the next start
  forget_deferred_sends(r);  // model C sends that will never be posted now
  Transport *t = r->mover->transport;
  for (Channel *c : {&r->to_leaf, &r->to_root}) {
    if (t) t->abandon(*c, in_end);
    c->whole = false;
  }
}

namespace {

// Removes kept slot r from its engine's kept slots.
void forget_kept(stf_request r) {
  stf_request *kept = r->mover->kept;
  const int n = Engine::kKept;
  const int at = static_cast<int>(std::find(kept, kept + n, r) - kept);
  std::copy(kept + at + 1, kept + n, kept + at);
  kept[n - 1] = nullptr;
  r->kept = false;
}

}  // namespace

void release_request(stf_request r) {
  const bool counted = !r->kept || r->started;  // a kept slot between operations is no request
  if (r->kept) forget_kept(r);
  r->busy = false;
  r->prepared = r->started = r->aimed = r->express = false;
  if (counted) r->owner->pending--;
  r->mover->idle.push_back(r);
}

bool keep_slot(Engine &e, stf_request r) {
  stf_request *kept = e.kept;
  int last = Engine::kKept - 1;
  while (last >= 0 && kept[last] && kept[last]->started) last--;
  if (last < 0) return false;
  if (kept[last]) release_request(kept[last]);  // the least recently begun that is not in flight
  std::copy_backward(kept, kept + Engine::kKept - 1, kept + Engine::kKept);
  kept[0] = r;
  r->kept = r->prepared = true;
  return true;
}

void touch_kept(Engine &e, int at) {
  stf_request r = e.kept[at];
  std::copy_backward(e.kept, e.kept + at, e.kept + at + 1);
  e.kept[0] = r;
}

namespace {

// The slot of a user's handle; NULL unless the handle is that of an active
// request of owner (a stale copy carries an older generation).
__attribute__((always_inline)) inline stf_request slot_of(Engine &owner, stf_request handle) {
  const auto bits = reinterpret_cast<std::uintptr_t>(handle);
  const stf_request slot = slot_of_handle(handle);
  if (!slot->busy || slot->owner != &owner || generation_tag(slot->generation) != (bits & generation_bits()))
    return nullptr;
  return slot;
}

// NULL when *req is an active request of owner (its slot in *out); else
// why not, as the tail of a message that begins with the call's name, and
// the error code in *code. Inlined, as slot_of: on every end's path.
__attribute__((always_inline)) inline const char *lookup(Engine &owner, stf_request *req, stf_request *out,
                                                        int *code) {
  *code = STF_ERR_REQUEST;
  if (!req) {
    *code = STF_ERR_NULL;
    return ": request pointer is NULL";
  }
  if (!*req) return " without a matching begin (request is NULL)";
  *out = slot_of(owner, *req);
  if (!*out) return ": the request does not belong to this SF or has already ended";
  if ((*out)->prepared && !(*out)->started)
    return ": the prepared request has no operation in flight (stf_start starts one)";
  return nullptr;
}

}  // namespace

int take_any_request(Engine &owner, stf_request *req, const char *what, stf_request *out) {
  int code = STF_SUCCESS;
  if (const char *why = lookup(owner, req, out, &code)) return set_error(code, "%s%s", what, why);
  return STF_SUCCESS;
}

int take_resting(Engine &owner, stf_request *req, const char *what, stf_request *out) {
  int code = STF_SUCCESS;
  *out = nullptr;
  const char *why = lookup(owner, req, out, &code);
  if (*out && (*out)->prepared && !(*out)->kept) {
    if (!(*out)->started) return STF_SUCCESS;
    return set_error(STF_ERR_REQUEST, "%s: the prepared request is in flight; end it first", what);
  }
  if (!why) why = ": the request was not made by stf_bcast_init or stf_reduce_init";
  return set_error(code, "%s%s", what, why);
}

int take_request(Engine &owner, stf_request *req, OpKind kind, stf_request *out) {
  stf_request r = nullptr;
  int code = STF_SUCCESS;
  if (const char *why = lookup(owner, req, &r, &code))
    return set_error(code, "%s_end%s", op_kind_name(kind), why);
  if (r->kind != kind)
    return set_error(STF_ERR_REQUEST, "%s_end called on a request begun by %s_begin", op_kind_name(kind),
                     op_kind_name(r->kind));
  *out = r;
  return STF_SUCCESS;
}

}  // namespace stf
