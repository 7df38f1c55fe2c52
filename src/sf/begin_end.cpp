// Public operation calls (begin, end, test and the blocking forms): argument
// checks and set-up, then the ops layer or the node-aware strategy.
#include <climits>

#include "core/clock.h"
#include "core/error.h"
#include "ops/operation.h"
#include "sf/sf.h"

namespace stf {
namespace {

int check_memtype(int m, OpKind kind) {
  if (m != -1 && m != STF_MEMTYPE_HOST && m != STF_MEMTYPE_DEVICE)
    return set_error(STF_ERR_ARG, "%s_begin_mem: memory type %d is neither STF_MEMTYPE_HOST nor STF_MEMTYPE_DEVICE",
                     op_kind_name(kind), m);
  return STF_SUCCESS;
}

// A bcast or reduce run by the SF's strategy: a request slot of the SF for
// its identity, the strategy's own operation for the data.
int begin_strategy_op(stf_sf sf, const OpArgs &a, const Resolved &res, stf_request *req) {
  stf_request r = nullptr;
  STF_CHECK(acquire_request(sf->engine, sf->engine, a.kind, res.unit->extent, &r));
  // The request goes back whatever failed, a throw included.
  const int rc = contained([&] { return sf->strategy->begin(a, res, &r->strategy_op); });
  if (rc) {
    r->strategy_op = nullptr;
    release_request(r);
    return rc;
  }
  *req = handle_of(r);
  return STF_SUCCESS;
}

// A prepared bcast or reduce of the SF's strategy: the slot keeps the
// arguments, from which each start begins the strategy's operation anew.
int prepare_strategy_op(stf_sf sf, const OpArgs &a, const Resolved &res, stf_request *req) {
  STF_CHECK(check_data(*sf, a));
  stf_request r = nullptr;
  STF_CHECK(acquire_request(sf->engine, sf->engine, a.kind, res.unit->extent, &r));
  hold_arguments(r, a, res);
  r->prepared = true;
  *req = handle_of(r);
  return STF_SUCCESS;
}

int start_strategy_op(stf_sf sf, stf_request r) {
  const OpArgs a{r->kind, r->type, r->op, r->src, r->dst, nullptr, r->given_src_mem, r->given_dst_mem};
  const int rc = contained([&] { return sf->strategy->begin(a, Resolved{r->unit, r->kernels}, &r->strategy_op); });
  if (rc) {
    r->strategy_op = nullptr;
    return rc;
  }
  r->started = true;
  return STF_SUCCESS;
}

// The local checks of a begin's arguments, before anything is set up or posted.
int check_arguments(const OpArgs &a, stf_request *req) {
  if (!req) return set_error(STF_ERR_NULL, "%s: request pointer is NULL", begin_call_name(a).c_str());
  STF_CHECK(check_memtype(a.src_mem, a.kind));
  return check_memtype(a.dst_mem, a.kind);
}

// resolve_unit, remembered on the SF for a named type and a predefined op.
// Inside a call only (OneCaller): the SF's cache is not shared between threads.
int resolve_remembered(stf_sf sf, const OpArgs &a, Resolved *res) {
  stf_sf_s::LastResolved &last = sf->last_resolved[static_cast<int>(a.kind)];
  if (last.type == a.type && last.op == a.op && a.type != MPI_DATATYPE_NULL) {
    *res = last.res;
    return STF_SUCCESS;
  }
  STF_CHECK(resolve_unit(a, res));
  if (res->unit->named && op_id(a.op) >= 0) last = {a.type, a.op, *res};
  return STF_SUCCESS;
}

// -stf_debug: one allreduce agrees on every rank's checks, on the unit's
// size, which every rank must share (one-sided transports would otherwise
// write past the receiver's buffer), and on the op (the collective
// transport would wait in another collective; basic would combine with
// another op). The lowest rank with the largest code is named. Ops are
// compared by their predefined identity; user-defined ops (handles that mean
// nothing on another rank) only as such.
int agree_on_begin(MPI_Comm comm, int rc, const Resolved &res, const OpArgs &a) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const long long bytes = rc ? LLONG_MIN : static_cast<long long>(res.unit->packed_bytes);
  const long long which = rc ? LLONG_MIN : op_id(a.op);
  long long v[5] = {rc ? (static_cast<long long>(rc) << 32) | (size - 1 - rank) : 0, bytes,
                    rc ? LLONG_MIN : -bytes, which, rc ? LLONG_MIN : -which};
  STF_MPI(MPI_Allreduce(MPI_IN_PLACE, v, 5, MPI_LONG_LONG, MPI_MAX, comm));
  if (rc) return rc;
  const auto call = [&a] { return begin_call_name(a); };  // on failure only: it allocates
  if (v[0])
    return set_error(static_cast<int>(v[0] >> 32), "%s: rank %d failed (its message says why)", call().c_str(),
                     size - 1 - static_cast<int>(v[0] & 0xffffffff));
  if (v[1] != -v[2])
    return set_error(STF_ERR_ARG, "%s: the ranks' units differ in size (%lld to %lld bytes)", call().c_str(), -v[2],
                     v[1]);
  if (v[3] != -v[4])
    return set_error(STF_ERR_OP, "%s: the ranks pass different ops (this rank: %s); every rank must pass the same",
                     call().c_str(), op_name(a.op));
  return STF_SUCCESS;
}

// A begin, end or test holds its SF while it starts or ends operations: a
// second thread calling into the same SF meanwhile (the header forbids it)
// gets STF_ERR_STATE on that call instead of mixing its operations with the
// first's. A begin takes it after its set-up, which may call into the same
// SF itself (a gather's first begin makes the multi-SF with a fetch-and-op).
// One atomic exchange and one store per call.
class OneCaller {
 public:
  explicit OneCaller(stf_sf sf) : sf_(sf), held_(!sf->in_call.exchange(true, std::memory_order_acquire)) {}
  ~OneCaller() {
    if (held_) sf_->in_call.store(false, std::memory_order_release);
  }
  bool refused() const { return !held_; }

 private:
  stf_sf sf_;
  bool held_;
};

// The error of a call that OneCaller refused; what names the call.
int another_thread(const char *what) {
  return set_error(STF_ERR_STATE, "%s: another thread is in a call on this SF (one SF is for one thread at a time)",
                   what);
}

// owner is the SF the user called; the data moves over owner itself or, for
// gather and scatter, over its multi-SF. A failed begin leaves *req NULL.
// a.prepare: stf_bcast_init and stf_reduce_init, which post nothing.
int begin_untimed(stf_sf owner, const OpArgs &a, stf_request *req) {
  if (req) *req = nullptr;
  STF_CHECK(check_sf(owner));
  const bool multi = a.kind == OpKind::gather || a.kind == OpKind::scatter;
  stf_sf mover = owner;
  Resolved res;
  if (owner->opts.debug) {
    // -stf_debug: the collective set-up first, then every argument check,
    // agreed by all ranks before anything is posted.
    if (multi) STF_CHECK(stf_get_multi_sf(owner, &mover));
    STF_CHECK(ensure_setup(mover));
    int rc = check_arguments(a, req);
    if (!rc) rc = resolve_unit(a, &res);
    if (!rc) rc = check_data(*mover, a);
    STF_CHECK(agree_on_begin(owner->comm, rc, res, a));
  } else {
    STF_CHECK(check_arguments(a, req));
    if (multi) STF_CHECK(stf_get_multi_sf(owner, &mover));
    if (!mover->plan) STF_CHECK(ensure_setup(mover));  // checked owner: a set-up SF has its graph
  }
  const OneCaller caller(owner);
  if (caller.refused()) return another_thread(op_kind_name(a.kind));
  if (!owner->opts.debug) STF_CHECK(resolve_remembered(owner, a, &res));
  const bool by_strategy = owner->strategy && (a.kind == OpKind::bcast || a.kind == OpKind::reduce);
  if (!a.prepare && by_strategy) return begin_strategy_op(owner, a, res, req);
  if (!a.prepare) return begin_operation(owner->engine, mover->engine, a, res, req);
  STF_CHECK(by_strategy ? prepare_strategy_op(owner, a, res, req)
                        : prepare_operation(owner->engine, mover->engine, a, res, req));
  stf_request r = slot_of_handle(*req);
  r->type = a.type;
  r->given_src_mem = a.src_mem;
  r->given_dst_mem = a.dst_mem;
  return STF_SUCCESS;
}

// stf_bcast_init, stf_reduce_init: a's operation made, nothing posted (untimed).
int init(stf_sf sf, OpArgs a, stf_request *req) {
  a.prepare = true;
  return begin_untimed(sf, a, req);
}

// Every begin, end and test is timed into the SF's Engine::timing.
// *returned_at (if given): the clock when begin returned, which a blocking
// call's end takes as its start instead of reading the clock again.
int begin(stf_sf owner, const OpArgs &a, stf_request *req, unsigned long long *returned_at = nullptr) {
  const unsigned long long t0 = ticks();
  const int rc = begin_untimed(owner, a, req);
  const int k = timing_index(a.kind);
  const unsigned long long t1 = ticks();
  if (!rc && k >= 0) {
    owner->engine.stats.operations[k]++;
    owner->engine.timing[k].begin += t1 - t0;
  }
  if (returned_at) *returned_at = t1;
  return rc;
}

// Times an end or test call on owner of an operation of kind k.
struct EndTimer {
  Engine &e;
  int k;
  EndTimer(Engine &engine, int kind, unsigned long long start) : e(engine), k(kind) { e.call_start = start; }
  ~EndTimer() {
    if (k >= 0) e.timing[k].end += ticks() - e.call_start;
    e.call_start = 0;
  }
};

// Finish (wait) or test a strategy's operation in slot r; the slot goes back when done.
int advance_strategy_op(stf_sf owner, stf_request r, stf_request *req, bool wait, int *done) {
  bool finished = false;
  const int rc = owner->strategy->advance(r->strategy_op, wait, &finished);
  if (done) *done = finished;
  if (rc || finished) {  // a failed step leaves nothing to wait for in this slot
    r->strategy_op = nullptr;
    finish_request(r, req);
  }
  return rc;
}

// Waits for the operation in slot r (the slot of *req), inside a call that
// holds the SF (OneCaller) and times it.
int finish(stf_sf owner, stf_request r, stf_request *req) {
  if (r->strategy_op) return advance_strategy_op(owner, r, req, true, nullptr);
  return end_operation(r, req);
}

int end(stf_sf owner, stf_request *req, OpKind kind) {
  STF_CHECK(check_sf(owner));
  const OneCaller caller(owner);
  if (caller.refused()) return another_thread(op_kind_name(kind));
  EndTimer timer(owner->engine, timing_index(kind), ticks());
  stf_request r = nullptr;
  STF_CHECK(take_request(owner->engine, req, kind, &r));
  return finish(owner, r, req);
}

// A blocking call ends the slot its begin just took: the SF and the request
// need no second lookup, and the end starts at the clock begin last read.
int blocking(stf_sf sf, const OpArgs &a) {
  stf_request r = nullptr;
  unsigned long long begun = 0;
  STF_CHECK(begin(sf, a, &r, &begun));
  const OneCaller caller(sf);
  if (caller.refused()) return another_thread(op_kind_name(a.kind));
  EndTimer timer(sf->engine, timing_index(a.kind), begun);
  return finish(sf, slot_of_handle(r), &r);
}

// stf_start: the prepared operation in slot r posted, timed as a begin.
int start(stf_sf sf, stf_request r) {
  const unsigned long long t0 = ticks();
  const OneCaller caller(sf);
  if (caller.refused()) return another_thread("stf_start");
  const int rc = sf->strategy ? start_strategy_op(sf, r) : start_operation(r);  // no set-up while prepared
  const int k = timing_index(r->kind);
  if (!rc) {
    sf->engine.stats.operations[k]++;
    sf->engine.timing[k].begin += ticks() - t0;
  }
  return rc;
}

}  // namespace
}  // namespace stf

using stf::OpArgs;
using stf::OpKind;

extern "C" int stf_bcast_begin(stf_sf sf, MPI_Datatype unit, const void *rootdata, void *leafdata, MPI_Op op,
                               stf_request *req) try {
  return stf::begin(sf, OpArgs{OpKind::bcast, unit, op, rootdata, leafdata, nullptr}, req);
} STF_API_CATCH
extern "C" int stf_bcast_end(stf_sf sf, stf_request *req) try {
  return stf::end(sf, req, OpKind::bcast);
} STF_API_CATCH
extern "C" int stf_bcast(stf_sf sf, MPI_Datatype unit, const void *rootdata, void *leafdata, MPI_Op op) try {
  return stf::blocking(sf, OpArgs{OpKind::bcast, unit, op, rootdata, leafdata, nullptr});
} STF_API_CATCH

extern "C" int stf_bcast_begin_mem(stf_sf sf, MPI_Datatype unit, stf_memtype rootmtype, const void *rootdata,
                                   stf_memtype leafmtype, void *leafdata, MPI_Op op, stf_request *req) try {
  return stf::begin(sf, OpArgs{OpKind::bcast, unit, op, rootdata, leafdata, nullptr, rootmtype, leafmtype}, req);
} STF_API_CATCH

extern "C" int stf_reduce_begin(stf_sf sf, MPI_Datatype unit, const void *leafdata, void *rootdata, MPI_Op op,
                                stf_request *req) try {
  return stf::begin(sf, OpArgs{OpKind::reduce, unit, op, leafdata, rootdata, nullptr}, req);
} STF_API_CATCH
extern "C" int stf_reduce_begin_mem(stf_sf sf, MPI_Datatype unit, stf_memtype leafmtype, const void *leafdata,
                                    stf_memtype rootmtype, void *rootdata, MPI_Op op, stf_request *req) try {
  return stf::begin(sf, OpArgs{OpKind::reduce, unit, op, leafdata, rootdata, nullptr, leafmtype, rootmtype}, req);
} STF_API_CATCH
extern "C" int stf_reduce_end(stf_sf sf, stf_request *req) try {
  return stf::end(sf, req, OpKind::reduce);
} STF_API_CATCH
extern "C" int stf_reduce(stf_sf sf, MPI_Datatype unit, const void *leafdata, void *rootdata, MPI_Op op) try {
  return stf::blocking(sf, OpArgs{OpKind::reduce, unit, op, leafdata, rootdata, nullptr});
} STF_API_CATCH

extern "C" int stf_fetch_and_op_begin(stf_sf sf, MPI_Datatype unit, void *rootdata, const void *leafdata,
                                      void *leafupdate, MPI_Op op, stf_request *req) try {
  return stf::begin(sf, OpArgs{OpKind::fetch_and_op, unit, op, leafdata, rootdata, leafupdate}, req);
} STF_API_CATCH
extern "C" int stf_fetch_and_op_end(stf_sf sf, stf_request *req) try {
  return stf::end(sf, req, OpKind::fetch_and_op);
} STF_API_CATCH
extern "C" int stf_fetch_and_op(stf_sf sf, MPI_Datatype unit, void *rootdata, const void *leafdata,
                                void *leafupdate, MPI_Op op) try {
  return stf::blocking(sf, OpArgs{OpKind::fetch_and_op, unit, op, leafdata, rootdata, leafupdate});
} STF_API_CATCH

extern "C" int stf_gather_begin(stf_sf sf, MPI_Datatype unit, const void *leafdata, void *multirootdata,
                                stf_request *req) try {
  return stf::begin(sf, OpArgs{OpKind::gather, unit, MPI_REPLACE, leafdata, multirootdata, nullptr}, req);
} STF_API_CATCH
extern "C" int stf_gather_end(stf_sf sf, stf_request *req) try {
  return stf::end(sf, req, OpKind::gather);
} STF_API_CATCH
extern "C" int stf_gather(stf_sf sf, MPI_Datatype unit, const void *leafdata, void *multirootdata) try {
  return stf::blocking(sf, OpArgs{OpKind::gather, unit, MPI_REPLACE, leafdata, multirootdata, nullptr});
} STF_API_CATCH

extern "C" int stf_scatter_begin(stf_sf sf, MPI_Datatype unit, const void *multirootdata, void *leafdata,
                                 stf_request *req) try {
  return stf::begin(sf, OpArgs{OpKind::scatter, unit, MPI_REPLACE, multirootdata, leafdata, nullptr}, req);
} STF_API_CATCH
extern "C" int stf_test(stf_sf sf, stf_request *req, int *done) try {
  STF_CHECK(stf::check_sf(sf));
  const stf::OneCaller caller(sf);
  if (caller.refused()) return stf::another_thread("stf_test");
  if (!done) return stf::set_error(STF_ERR_NULL, "stf_test: done is NULL");
  *done = 0;
  stf_request r = nullptr;
  STF_CHECK(stf::take_any_request(sf->engine, req, "stf_test", &r));
  stf::EndTimer timer(sf->engine, stf::timing_index(r->kind), stf::ticks());
  if (r->strategy_op) return stf::advance_strategy_op(sf, r, req, false, done);
  return stf::test_operation(r, req, done);
} STF_API_CATCH

extern "C" int stf_scatter_end(stf_sf sf, stf_request *req) try {
  return stf::end(sf, req, OpKind::scatter);
} STF_API_CATCH
extern "C" int stf_scatter(stf_sf sf, MPI_Datatype unit, const void *multirootdata, void *leafdata) try {
  return stf::blocking(sf, OpArgs{OpKind::scatter, unit, MPI_REPLACE, multirootdata, leafdata, nullptr});
} STF_API_CATCH

extern "C" int stf_bcast_init(stf_sf sf, MPI_Datatype unit, const void *rootdata, void *leafdata, MPI_Op op,
                              stf_request *req) try {
  return stf::init(sf, OpArgs{OpKind::bcast, unit, op, rootdata, leafdata, nullptr}, req);
} STF_API_CATCH
extern "C" int stf_reduce_init(stf_sf sf, MPI_Datatype unit, const void *leafdata, void *rootdata, MPI_Op op,
                               stf_request *req) try {
  return stf::init(sf, OpArgs{OpKind::reduce, unit, op, leafdata, rootdata, nullptr}, req);
} STF_API_CATCH
extern "C" int stf_start(stf_sf sf, stf_request *req) try {
  stf_request r = nullptr;
  STF_CHECK(stf::check_sf(sf));
  STF_CHECK(stf::take_resting(sf->engine, req, "stf_start", &r));
  return stf::start(sf, r);
} STF_API_CATCH
extern "C" int stf_request_free(stf_sf sf, stf_request *req) try {
  stf_request r = nullptr;
  STF_CHECK(stf::check_sf(sf));
  STF_CHECK(stf::take_resting(sf->engine, req, "stf_request_free", &r));
  const stf::OneCaller caller(sf);
  if (caller.refused()) return stf::another_thread("stf_request_free");
  stf::release_request(r);
  *req = nullptr;
  return STF_SUCCESS;
} STF_API_CATCH
