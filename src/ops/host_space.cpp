// Host memory in an exchange: the serial host kernels, one call per message
// that is not sent from or received into user memory, and the self part.
#include "ops/hooks.h"
#include "ops/space.h"

namespace stf {
namespace {

class HostSpace final : public Space {
 public:
  int recv_buffer(stf_request r, const Flow &f, char **base) const override {
    grow(&f.recv_buf, f.to.idx.size() * r->unit->packed_bytes);
    *base = f.recv_buf.data();
    return STF_SUCCESS;
  }
  bool user_memory_may_receive(stf_request) const override { return true; }
  bool offers_user_memory() const override { return true; }

  int prepare_send(stf_request r, const Flow &f, bool *enqueued) const override {
    const Unit &u = *r->unit;
    *enqueued = false;
    if (r->lent) {
      for (int k = 0; k < f.from.count(); k++) {
        const IndexList &l = f.from_lists[k];
        if (direct_ok(u, l) && r->lent_ptrs[k] == at(r->src, l.start, u.extent)) continue;  // sent from there
        r->kernels->pack(u, l, r->src, r->lent_ptrs[k]);
        count_pack(r, l);
      }
      return STF_SUCCESS;
    }
    bool packs = false;  // the buffer only for messages that are not sent from user memory
    for (int k = 0; k < f.from.count() && !packs; k++) packs = !direct_ok(u, f.from_lists[k]);
    if (packs) grow(&f.send_buf, f.from.idx.size() * u.packed_bytes);
    r->send_ptrs.resize(f.from.count());
    for (int k = 0; k < f.from.count(); k++) {
      if (direct_ok(u, f.from_lists[k])) {
        r->send_ptrs[k] = at(r->src, f.from_lists[k].start, u.extent);
      } else {
        char *slice = at(f.send_buf.data(), f.from.offset[k], u.packed_bytes);
        r->kernels->pack(u, f.from_lists[k], r->src, slice);
        count_pack(r, f.from_lists[k]);
        r->send_ptrs[k] = slice;
      }
    }
    return STF_SUCCESS;
  }

  int unpack(stf_request r, const Flow &f) const override {
    for (int k = 0; k < f.to.count(); k++)
      if (!r->recv_direct[k]) {
        r->kernels->unpack(*r->unit, f.to_lists[k], r->recv_ptrs[k], r->dst, r->op);
        count_unpack(r, f.to_lists[k]);
      }
    return STF_SUCCESS;
  }
};

const HostSpace space;

}  // namespace

const Space &host_space = space;

// Run by run where the plan cut the self part so (plan.h), unless the
// arrays are one (a unit written early may be one read later, as the loop
// over the units has it). Where a destination repeats (a reduce onto roots
// that several leaves read), the units in no run go between the runs, so
// each destination combines its units in the self part's order; elsewhere
// they go in one call after the runs.
void host_self_part(stf_request r, const Flow &f) {
  const Plan &p = *r->mover->plan;
  const Unit &u = *r->unit;
  if (p.self_runs.empty() || r->src == r->dst) {
    r->kernels->scatter(u, f.self_from, r->src, f.self_to, r->dst, r->op);
    return;
  }
  const bool down = f.dir == Direction::root_to_leaf;
  const IndexList &from = down ? p.self_rest_root : p.self_rest_leaf, &to = down ? p.self_rest_leaf : p.self_rest_root;
  stf_int done = 0;
  const auto rest_until = [&](stf_int end) {  // the units in no run, up to the end-th
    if (end > done)
      r->kernels->scatter(u, IndexList::array(from.idx + done, end - done, from.has_duplicates), r->src,
                          IndexList::array(to.idx + done, end - done, to.has_duplicates), r->dst, r->op);
    done = end;
  };
  const bool in_order = f.self_to.has_duplicates;
  for (const SelfRun &run : p.self_runs) {
    if (in_order) rest_until(run.rest_before);
    r->kernels->scatter(u, IndexList::range(down ? run.root : run.leaf, run.n), r->src,
                        IndexList::range(down ? run.leaf : run.root, run.n), r->dst, r->op);
  }
  rest_until(from.n);
}

}  // namespace stf
