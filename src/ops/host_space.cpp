// Host memory in an exchange: the serial host kernels, one call per message
// that is not sent from or received into user memory.
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

}  // namespace stf
