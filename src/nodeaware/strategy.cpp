// The node-aware strategies (steps.h) behind an SF's bcast and reduce: each
// step is an SF of its own (same communicator, its own tags), run with the
// user's unit, op and memory; the values between steps wait in buffers where
// the data lives (device memory for device data), so the device kernels do
// the packing and a reduce's combining on the way.
//
// A bcast: L and S begin; S ends, G runs; R runs; L ends. A reduce: L and
// R's first leaves (REPLACE into the receive buffer) begin; R's other leaves
// combine with the op; G; L ends before S combines into the roots, so that
// with MPI_REPLACE two steps never write one root at once. begin takes the
// steps up to the first wait; end (or stf_test, without waiting) the rest.
// A step SF's operations must begin in the same order on every rank, but
// users may end operations in any order: so an operation takes its later
// steps only after every operation begun before it has finished (ending one
// finishes the older ones first).
#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdlib>
#include <sstream>
#include <string>

#include "core/clock.h"
#include "core/error.h"
#include "device/device.h"
#include "nodeaware/chain.h"
#include "nodeaware/strategy.h"
#include "ops/operation.h"
#include "sf/methods.h"

namespace stf {

using namespace nodeaware;

namespace {

// What each operation does, in order: begin or end a step. begin runs the
// actions up to the first end.
struct Action {
  bool begin;
  Step step;
};
const std::vector<Action> bcast_3 = {{true, L},  {true, S},   {false, S},  {true, G},   {false, G},
                                     {true, R1}, {true, R2}, {false, R1}, {false, R2}, {false, L}};
const std::vector<Action> bcast_2 = {{true, L},  {true, G},   {false, G},  {true, R1},
                                     {true, R2}, {false, R1}, {false, R2}, {false, L}};
const std::vector<Action> reduce_3 = {{true, L},  {true, R1}, {false, R1}, {true, R2}, {false, R2},
                                      {true, G},  {false, G}, {false, L},  {true, S},  {false, S}};
const std::vector<Action> reduce_2 = {{true, L},  {true, R1}, {false, R1}, {true, R2},
                                      {false, R2}, {false, L}, {true, G},  {false, G}};

}  // namespace

struct StrategyOp {
  bool busy = false;
  Chain *chain = nullptr;
  const std::vector<Action> *actions = nullptr;
  std::size_t next = 0;  // the next action
  OpArgs args{OpKind::bcast, MPI_DATATYPE_NULL, MPI_REPLACE, nullptr, nullptr, nullptr};
  stf_memtype src_mem = STF_MEMTYPE_HOST, dst_mem = STF_MEMTYPE_HOST;
  // G reads or writes the user's roots (leaves) in place of the send
  // (receive) buffer, and S (R1) is skipped: Chain::send_alias, recv_alias.
  bool send_alias = false, recv_alias = false;
  stf_request req[kSteps] = {};
  Resolved resolved;  // the user's unit and op
  const Kernels *replace_kernels = nullptr;  // the unit's MPI_REPLACE, found when a step needs it
  int error = STF_SUCCESS;  // the first failed step's, for the end
  std::string message;
  // The send and receive buffers, in the memory of the data the operation reads.
  struct Buffer {
    void *ptr = nullptr;
    std::size_t bytes = 0;
    stf_memtype mem = STF_MEMTYPE_HOST;
    void release() {
      if (!ptr) return;
      if (mem == STF_MEMTYPE_DEVICE) stf_device_free(ptr);
      else std::free(ptr);
      ptr = nullptr;
      bytes = 0;
    }
    int reserve(std::size_t want, stf_memtype m) {
      if (ptr && bytes >= want && mem == m) return STF_SUCCESS;
      release();
      if (want == 0) return STF_SUCCESS;
      mem = m;
      if (m == STF_MEMTYPE_DEVICE) return stf_device_malloc(want, &ptr);
      ptr = std::malloc(want);
      if (!ptr) return set_error(STF_ERR_MEMORY, "node-aware step buffer of %zu bytes", want);
      bytes = want;
      return STF_SUCCESS;
    }
    ~Buffer() { release(); }
  } send, recv;
};

namespace {

class NodeAware : public Strategy {
 public:
  NodeAware(stf_sf sf, NodeAwareKind kind)
      : sf_(sf),
        kind_(kind),
        split_bytes_(sf->opts.number(split_bytes_option)),
        node_transport_(sf->opts.text(node_transport_option)),
        net_transport_(sf->opts.text(net_transport_option)),
        chunk_units_(kind == NodeAwareKind::split ? static_cast<stf_int>(std::min<long>(INT_MAX, capped_units(split_bytes_)))
                                                  : 0) {}

  // Collective: the steps, for every unit; then the actions of the steps
  // some rank uses.
  int init() {
    int rc = STF_SUCCESS;
    try {
      chain_ = std::make_unique<Chain>();
    } catch (...) {
      rc = exception_error();
    }
    STF_CHECK(build_chain(sf_, kind_, node_transport_, net_transport_, chunk_units_, chain_.get(), rc));
    const bool two = kind_ == NodeAwareKind::two_step;
    return contained([&] {
      for (const Action &a : two ? bcast_2 : bcast_3)
        if (chain_->sf[a.step]) bcast_actions_.push_back(a);
      for (const Action &a : two ? reduce_2 : reduce_3)
        if (chain_->sf[a.step]) reduce_actions_.push_back(a);
      return STF_SUCCESS;
    });
  }

  int begin(const OpArgs &a, const Resolved &res, StrategyOp **out) override {
    Chain *chain = chain_.get();
    StrategyOp *op = free_op();
    if (!op) return set_error(STF_ERR_MEMORY, "cannot allocate a node-aware operation");
    op->chain = chain;
    op->args = a;
    op->resolved = res;
    op->replace_kernels = nullptr;
    op->next = 0;
    Device *dev = nullptr;  // as the ops layer asks (resolve_memory)
    STF_CHECK(operations_device(&dev));
    op->src_mem = memtype_given(*dev, a.src, a.src_mem);
    op->dst_mem = memtype_given(*dev, a.dst, a.dst_mem);
    op->actions = a.kind == OpKind::bcast ? &bcast_actions_ : &reduce_actions_;
    choose_aliases(op);
    // Reserve room for a whole unit past the last slot's start.
    const std::size_t extent = res.unit->extent;
    auto room = [&](stf_int n) { return n ? (static_cast<std::size_t>(n) + 1) * extent : 0; };
    STF_CHECK(op->send.reserve(room(chain->send_units), op->src_mem));
    STF_CHECK(op->recv.reserve(room(chain->recv_units), op->src_mem));
    inflight_.reserve(inflight_.size() + 1);  // nothing may fail once the steps run
    op->busy = true;
    op->error = STF_SUCCESS;
    bool done = false;
    run(op, false, true, &done);  // a failed step's error is the end's
    inflight_.push_back(op);
    *out = op;
    return STF_SUCCESS;
  }

  int advance(StrategyOp *op, bool wait, bool *done) override {
    *done = false;
    bool older_done = true;
    for (StrategyOp *older : inflight_) {  // in begin order
      if (older == op) break;
      bool d = false;
      run(older, wait, false, &d);
      older_done &= d;
    }
    if (older_done) run(op, wait, false, done);
    if (!*done) return STF_SUCCESS;
    op->busy = false;
    inflight_.erase(std::find(inflight_.begin(), inflight_.end(), op));
    if (op->error == STF_SUCCESS) return STF_SUCCESS;
    return set_error(op->error, "%s", op->message.c_str());
  }

  void add_stats(stf_stats *s) const override {
    for (stf_sf step : chain_->sf) {
      if (!step) continue;
      stf_stats t = stf_stats_init();
      if (stf_get_stats(step, &t)) continue;
      // The counters (pack_calls .. bytes_sent_off_node), and the waits,
      // which happen inside this SF's ends; not the steps' own calls.
      long long *to = &s->pack_calls;
      const long long *from = &t.pack_calls;
      const std::size_t n = (offsetof(stf_stats, operations) - offsetof(stf_stats, pack_calls)) / sizeof(long long);
      for (std::size_t i = 0; i < n; i++) to[i] += from[i];
      for (int k = 0; k < STF_OP_KINDS; k++) s->wait_seconds[k] += t.wait_seconds[k];
    }
  }
  void reset_stats() override {
    for (stf_sf step : chain_->sf)
      if (step) stf_reset_stats(step);
  }

  std::string describe() const override {
    std::ostringstream s;
    s << sf_->opts.type;
    if (kind_ == NodeAwareKind::split)
      s << " (at most " << chunk_units_ << " unit(s) per message between nodes: " << split_bytes_ << " bytes of 8-byte units)";
    s << ": bcast and reduce in steps, inside nodes over " << node_transport_ << ", between nodes over "
      << net_transport_ << "; fetch-and-op, gather and scatter over " << sf_->transport->describe();
    return s.str();
  }

  std::string describe_rank() const override {
    std::ostringstream s;
    s << "  node-aware steps (bcast direction; a reduce runs them backwards): send buffer " << chain_->send_units
      << " unit(s), receive buffer " << chain_->recv_units << " unit(s)\n";
    for (int k = 0; k < kSteps; k++) {
      const stf_sf step = chain_->sf[k];
      if (!step) continue;
      const Messages &out = step->plan->root, &in = step->plan->leaf;
      s << "    " << step_names[k] << ": sends " << out.count() << " message(s) of " << out.offset.back()
        << " unit(s) in all, receives " << in.count() << " of " << in.offset.back() << ", " << step->plan->self_leaf.n
        << " unit(s) to itself"
        << (chain_->self_only[k] ? " (no messages on any rank: over basic, host data copied here)" : "") << "\n";
    }
    if (chain_->send_alias >= 0)
      s << "    G uses the roots from " << chain_->send_alias << " in place of the send buffer, S skipped (a "
        << "bcast; a reduce with MPI_REPLACE)\n";
    if (chain_->recv_alias >= 0)
      s << "    G uses the leaves from " << chain_->recv_alias << " in place of the receive buffer, R skipped "
        << "(a reduce; a bcast with MPI_REPLACE)\n";
    return s.str();
  }

 private:
  static int replace_kernels(StrategyOp *op, const Kernels **out) {
    if (!op->replace_kernels) STF_CHECK(get_kernels(*op->resolved.unit, MPI_REPLACE, &op->replace_kernels));
    *out = op->replace_kernels;
    return STF_SUCCESS;
  }

  // Whether op's G uses the user's arrays in place of the buffers (a NULL
  // array is left to the skipped step's error). Only with MPI_REPLACE where
  // the skipped step would combine with the op: R1 in a bcast, S in a
  // reduce (G's op stays MPI_REPLACE, the same on every rank, as collective
  // transports need). A reduce's G may then receive into the roots in place,
  // so only where L writes none of them. The leaves not where they overlap
  // the roots in one array: G would send from what it receives into.
  void choose_aliases(StrategyOp *op) const {
    const Chain &c = *chain_;
    const bool bcast = op->args.kind == OpKind::bcast, replace = op->args.op == MPI_REPLACE;
    const void *roots = bcast ? op->args.src : op->args.dst, *leaves = bcast ? op->args.dst : op->args.src;
    op->send_alias = roots && c.send_alias >= 0 && (bcast || (replace && !c.local_writes_roots));
    op->recv_alias = leaves && c.recv_alias >= 0 && (!bcast || replace);
    const bool two = kind_ == NodeAwareKind::two_step;  // its G takes the user's roots anyway
    if (op->recv_alias && roots == leaves &&
        ((two && c.cross_touches_roots) || (op->send_alias && c.send_alias < c.recv_alias + c.recv_units &&
                                             c.recv_alias < c.send_alias + c.send_units)))
      op->recv_alias = false;
  }

  StrategyOp *free_op() {
    for (auto &op : ops_)
      if (!op->busy) return op.get();
    ops_.push_back(std::make_unique<StrategyOp>());
    return ops_.back().get();
  }

  static void *unit_at(void *array, stf_int unit, const StrategyOp *op) {
    return static_cast<char *>(array) + static_cast<std::size_t>(unit) * op->resolved.unit->extent;
  }

  // The arrays a step reads and writes for op (steps.h: bcast direction).
  void arrays(const StrategyOp *op, Step k, const void **root, stf_memtype *rmem, void **leaf, stf_memtype *lmem,
              MPI_Op *how) const {
    const bool bcast = op->args.kind == OpKind::bcast;
    const bool two = kind_ == NodeAwareKind::two_step;
    // user roots and leaves: for a bcast src and dst, for a reduce dst and src
    void *uroot = bcast ? const_cast<void *>(op->args.src) : op->args.dst;
    void *uleaf = bcast ? op->args.dst : const_cast<void *>(op->args.src);
    const stf_memtype urm = bcast ? op->src_mem : op->dst_mem, ulm = bcast ? op->dst_mem : op->src_mem;
    const stf_memtype bm = op->src_mem;  // the buffers' memory
    const MPI_Op user = op->args.op;
    switch (k) {
      case L: *root = uroot, *rmem = urm, *leaf = uleaf, *lmem = ulm, *how = user; return;
      case S: *root = uroot, *rmem = urm, *leaf = op->send.ptr, *lmem = bm, *how = bcast ? MPI_REPLACE : user; return;
      case G: {
        // After a failed step the buffers: what G then moves is garbage.
        const bool ok = op->error == STF_SUCCESS;
        if (two) *root = uroot, *rmem = urm;
        else if (op->send_alias && ok) *root = unit_at(uroot, chain_->send_alias, op), *rmem = urm;
        else *root = op->send.ptr, *rmem = bm;
        if (op->recv_alias && ok) *leaf = unit_at(uleaf, chain_->recv_alias, op), *lmem = ulm;
        else *leaf = op->recv.ptr, *lmem = bm;
        *how = bcast || !two ? MPI_REPLACE : user;
        return;
      }
      case R1: *root = op->recv.ptr, *rmem = bm, *leaf = uleaf, *lmem = ulm, *how = bcast ? user : MPI_REPLACE; return;
      default: *root = op->recv.ptr, *rmem = bm, *leaf = uleaf, *lmem = ulm, *how = user; return;
    }
  }

  // Take op's actions from op->next on; stop at the first end when `first`
  // (begin), at an end not yet complete unless wait. A step that fails
  // (units of another size on one rank, say) does not stop the chain: its
  // error is kept for the operation's end, and every later step still
  // runs, as on the ranks where nothing failed, which would otherwise wait
  // for this rank's part for ever. A step whose begin failed has no end.
  void run(StrategyOp *op, bool wait, bool first, bool *done) {
    *done = false;
    const auto &acts = *op->actions;
    for (; op->next < acts.size(); op->next++) {
      const Action a = acts[op->next];
      stf_sf step = op->chain->sf[a.step];
      stf_request *req = &op->req[a.step];
      if (a.begin) {
        const bool aliased = (a.step == S && op->send_alias) || (a.step == R1 && op->recv_alias);
        if (!aliased && !(op->chain->self_only[a.step] && self_step(op, a.step)))
          keep(op, begin_step(op, a.step, req));
        continue;
      }
      // begin stops at the first end, also one with nothing to end (a step
      // copied here, or whose begin failed): every rank then begins the
      // later steps of its operations in the same order.
      if (first) return;
      if (!*req) continue;
      if (!wait) {
        int ready = 0;
        const int rc = test_step(step, req, &ready);
        if (rc == STF_SUCCESS && !ready) return;
        keep(op, rc);
        if (!*req) continue;  // completed (or failed in its end)
      }
      // Waited for, or its test failed (which leaves it in flight).
      keep(op, end_step(step, req));
    }
    *done = true;
  }

  // Begins step k of op. Once one of op's steps failed on this rank, what
  // a step would send is not the operation's data. It still runs (its
  // peers wait for it), with units of another size, so that every rank
  // that receives from it fails too (each transport checks a message's
  // size) instead of taking that data, and passes the failure on in turn:
  // 1-byte units on the step's own arrays (garbage already), or, where the
  // unit has 1 byte, 2-byte units on scratch memory (the arrays are too
  // small for them).
  int begin_step(StrategyOp *op, Step k, stf_request *req) const {
    *req = nullptr;  // a failed begin has no end
    const void *root;
    void *leaf;
    stf_memtype rm, lm;
    MPI_Op how;
    arrays(op, k, &root, &rm, &leaf, &lm, &how);
    MPI_Datatype t = op->args.type;
    stf_sf step = op->chain->sf[k];
    if (op->error != STF_SUCCESS) {
      t = MPI_BYTE;
      how = MPI_REPLACE;
      if (op->resolved.unit->packed_bytes == 1) {
        t = MPI_UINT16_T;
        const std::size_t slots = static_cast<std::size_t>(std::max(step->nroots, step->maxleaf + 1));
        std::vector<char> &scratch = op->chain->failed_data;
        try {
          if (scratch.size() < 4 * slots) scratch.resize(4 * slots);
        } catch (...) {
          return exception_error();
        }
        root = scratch.data();
        leaf = scratch.data() + 2 * slots;
        rm = lm = STF_MEMTYPE_HOST;
      }
    }
    const bool bcast = op->args.kind == OpKind::bcast;
    const OpArgs sa{op->args.kind, t, how, bcast ? root : leaf, bcast ? leaf : const_cast<void *>(root), nullptr,
                    bcast ? rm : lm, bcast ? lm : rm};
    Resolved res = op->resolved;
    if (t != op->args.type) STF_CHECK(resolve_unit(sa, &res));
    else if (how != op->args.op) STF_CHECK(replace_kernels(op, &res.kernels));  // steps take the op or REPLACE
    return contained([&] { return begin_operation(step->engine, step->engine, sa, res, req); });
  }

  // A step's end and test, through the ops layer as begin_step: the step
  // SFs are the strategy's own, set up, used by no other caller. The wait
  // is counted from the call's start, as the public calls count it.
  template <class Call>
  static int counted(stf_sf step, const Call &call) {
    step->engine.call_start = ticks();
    const int rc = contained(call);
    step->engine.call_start = 0;
    return rc;
  }
  static int end_step(stf_sf step, stf_request *req) {
    return counted(step, [&] { return end_operation(slot_of_handle(*req), req); });
  }
  static int test_step(stf_sf step, stf_request *req, int *done) {
    return counted(step, [&] { return test_operation(slot_of_handle(*req), req, done); });
  }

  // Step k of op where k carries no message: its self part, as the step
  // SF's operation would run it, on host data; nothing once a step failed
  // (no other rank reads it). Whether it ran (device data: the step SF's
  // operation runs instead).
  bool self_step(StrategyOp *op, Step k) const {
    if (op->error != STF_SUCCESS) return true;
    const void *root;
    void *leaf;
    stf_memtype rm, lm;
    MPI_Op how;
    arrays(op, k, &root, &rm, &leaf, &lm, &how);
    if (rm != STF_MEMTYPE_HOST || lm != STF_MEMTYPE_HOST) return false;
    stf_sf step = op->chain->sf[k];
    const Plan &p = *step->plan;
    const bool bcast = op->args.kind == OpKind::bcast;
    const void *src = bcast ? root : leaf;
    void *dst = bcast ? leaf : const_cast<void *>(root);
    if (p.self_leaf.n == 0 || (how == MPI_REPLACE && src == dst && p.self_in_place)) return true;
    if (!src || !dst) {  // as the step's begin would fail; the later steps pass it on
      keep(op, set_error(STF_ERR_NULL, "%s: data is NULL but this rank copies %d unit(s) in node-aware step %s",
                         op_kind_name(op->args.kind), static_cast<int>(p.self_leaf.n), step_names[k]));
      return true;
    }
    const Kernels *kernels = op->resolved.kernels;
    if (how != op->args.op) {
      const int rc = replace_kernels(op, &kernels);
      if (rc) {
        keep(op, rc);
        return true;
      }
    }
    const Unit &u = *op->resolved.unit;
    kernels->scatter(u, bcast ? p.self_root : p.self_leaf, src, bcast ? p.self_leaf : p.self_root, dst, how);
    step->engine.stats.scatter_calls++;
    return true;
  }

  // The first failure of op's steps, with its message (later steps may
  // overwrite the thread's last message).
  static void keep(StrategyOp *op, int rc) {
    if (rc == STF_SUCCESS || op->error != STF_SUCCESS) return;
    op->error = rc;
    op->message = stf_last_error_message();
  }

  stf_sf sf_;
  NodeAwareKind kind_;
  long split_bytes_;
  std::string node_transport_, net_transport_;
  stf_int chunk_units_;  // split: units per message between nodes (0: no cap)
  std::unique_ptr<Chain> chain_;
  std::vector<Action> bcast_actions_, reduce_actions_;  // those of the steps with an SF
  std::vector<std::unique_ptr<StrategyOp>> ops_;
  std::vector<StrategyOp *> inflight_;  // begun and not ended, in begin order
};

}  // namespace

int make_node_aware(stf_sf sf, NodeAwareKind kind, std::unique_ptr<Strategy> *out, int earlier) {
  std::unique_ptr<NodeAware> s;
  int rc = earlier;
  if (!rc) try {
      s = std::make_unique<NodeAware>(sf, kind);
    } catch (...) {
      rc = exception_error();
    }
  if (rc) return build_chain(sf, kind, "", "", 0, nullptr, rc);  // takes part, and every rank fails
  // Handed out even where it failed: a step's transport may be collective
  // to destroy, so the steps go when the SF's set-up is cleared on every
  // rank (install_plan).
  rc = s->init();
  *out = std::move(s);
  return rc;
}

}  // namespace stf
