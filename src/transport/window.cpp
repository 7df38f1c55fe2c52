// The window transport: MPI-3 one-sided communication straight into the
// user's destination array. bcast with MPI_REPLACE is one MPI_Put per peer,
// everything else one MPI_Accumulate per peer (the op is applied by MPI at
// the target, element-wise atomic, so several origins may hit one root);
// indexed datatypes built once describe the origin's and the target's units,
// so nothing is packed or unpacked.
//
// Choices, and why:
// - One dynamic window per SF (MPI_Win_create_dynamic at set-up), user
//   arrays attached to it (MPI_Win_attach, local) and cached by (base,
//   bytes) in a small LRU, detached on destroy/reset. MPI_Win_create per
//   buffer is collective, and whether a buffer is new is a rank-local fact
//   (each rank has its own pointers), so every cache miss would need an
//   allreduce to agree; attaching needs no agreement.
// - Each operation, every target sends its array's address to its origins
//   (one MPI_Aint per peer, MPI_Get_address): dynamic windows address
//   targets absolutely. The target's unit lists are exchanged once at set-up.
// - A single call may not name a target location twice, so a peer whose
//   target list repeats a unit (reduce onto one root from several leaves of
//   one rank) gets one accumulate per "layer" of repeats.
// - Synchronisation (-stf_window_sync):
//   fence: MPI_Win_fence in begin (then the puts) and in end. Fences are
//     collective over the SF's communicator and match by call order, so every
//     rank must call the SF's operations, begins and ends alike, in the same
//     order.
//   pscw: post/start, puts, complete/wait, all in begin: begin returns with
//     the data in place; end has nothing left to do.
//   lock: MPI_Win_lock_all for the window's life; begin waits for its
//     targets' addresses (they have entered the same begin, so the array is
//     theirs to give), puts, MPI_Win_flush_all, and tells each target with
//     a zero-byte message; end waits for those and calls MPI_Win_sync.
//   With pscw and lock a begin waits until the ranks it writes to have
//   reached the same begin, and with fence until every rank has: no rank
//   may then be waiting, inside an end, for data this rank sends from a
//   later end (the fetch-and-op return leg).
// - Explicit fallbacks to the internal basic transport, named by describe():
//   fetch-and-op (MPI_Get_accumulate would apply contributions in arrival
//   order, not the documented (leaf rank, leaf slot) order), reduce with
//   MPI_REPLACE when some root has several leaves (the winner would change
//   from run to run), units that are
//   not dense arrays of one builtin type, user-defined ops and
//   MPI_MINLOC/MAXLOC (MPI_Accumulate takes predefined ops on the unit's
//   element type), the logical ops (see accumulate_op), and device data
//   (the ops layer's device path).
#include <algorithm>
#include <climits>
#include <cstdint>
#include <unordered_map>

#include "core/error.h"
#include "graph/sf.h"
#include "kernels/ops.h"
#include "plan/plan.h"
#include "transport/transport.h"

namespace stf {
namespace {

// Tags of this transport on the SF's communicator (apart from transport.h's).
constexpr int tag_address[2] = {4, 5};  // per direction
constexpr int tag_done[2] = {6, 7};
constexpr int tag_lists = 8;            // set-up exchange
constexpr std::size_t max_regions = 4;  // attached arrays kept per SF

int dir_index(Direction d) { return d == Direction::root_to_leaf ? 0 : 1; }

MPI_Datatype element_type(int base) {
  switch (base) {
#define STF_CASE_(name, ctype, handle, kind) \
  case kBase_##name: return handle;
    STF_BASE_TYPES(STF_CASE_)
#undef STF_CASE_
  }
  return MPI_DATATYPE_NULL;
}

// Predefined ops MPI_Accumulate takes on a unit's element type. Not the
// logical ones: Open MPI 4.1's osc/rdma applies MPI_LAND/LOR/LXOR bitwise
// (MPI_LOR of 0 and 2 gives 2), so they fall back to basic.
bool accumulate_op(MPI_Op op) {
  for (MPI_Op o : {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_BAND, MPI_BOR, MPI_BXOR})
    if (op == o) return true;
  return false;
}

// The units of one call: positions in the origin's array and in the target's.
struct Layer {
  std::vector<int> origin, target;
};
// A peer this rank writes to in one direction.
struct Edge {
  int rank = 0;
  std::vector<Layer> layers;  // more than one only where the target list repeats a unit
};
// Datatypes of every edge and layer for one element type and unit length.
struct TypeSet {
  MPI_Datatype element = MPI_DATATYPE_NULL;
  int count = 0;
  std::vector<MPI_Datatype> origin, target;  // flattened over edges, then layers
};

// Per direction: whom I write to, who writes to me, how far into my array.
struct Side {
  std::vector<Edge> edges;
  std::vector<int> origins;  // ranks that write into my array
  std::size_t units_in = 0;  // my destination units others touch: max index + 1
  std::vector<TypeSet> types;
  MPI_Group origin_group = MPI_GROUP_NULL, target_group = MPI_GROUP_NULL;
};

// Split (origin, target) pairs into layers that never repeat a target unit.
std::vector<Layer> layers_of(const stf_int *origin, const stf_int *target, stf_int n) {
  std::vector<Layer> layers;
  std::unordered_map<stf_int, int> seen;
  for (stf_int i = 0; i < n; i++) {
    int l = seen[target[i]]++;
    if (l == static_cast<int>(layers.size())) layers.emplace_back();
    layers[l].origin.push_back(origin[i]);
    layers[l].target.push_back(target[i]);
  }
  return layers;
}

struct WindowChannel : ChannelExtra {
  MPI_Aint my_address = 0;
  std::vector<MPI_Aint> addresses;  // of my targets, this operation
  std::vector<MPI_Request> recvs, sends, done;
  int region = -1;  // attached array in use
};

WindowChannel &state(Channel &c) {
  if (!c.extra) c.extra = std::make_unique<WindowChannel>();
  return static_cast<WindowChannel &>(*c.extra);
}

int wait_all(std::vector<MPI_Request> *reqs) {
  if (!reqs->empty()) STF_MPI(MPI_Waitall(static_cast<int>(reqs->size()), reqs->data(), MPI_STATUSES_IGNORE));
  reqs->clear();
  return STF_SUCCESS;
}

class WindowTransport : public Transport {
 public:
  WindowTransport(stf_sf sf, const Plan &plan)
      : comm_(sf->comm), plan_(plan), sync_(sf->opts.window_sync), basic_(make_basic_transport(sf->comm, plan)) {}

  ~WindowTransport() override {
    for (Side &s : sides_) {
      for (TypeSet &t : s.types)
        for (auto *list : {&t.origin, &t.target})
          for (MPI_Datatype &dt : *list) MPI_Type_free(&dt);
      for (MPI_Group *g : {&s.origin_group, &s.target_group})
        if (*g != MPI_GROUP_NULL) MPI_Group_free(g);
    }
    if (win_ == MPI_WIN_NULL) return;
    for (Region &r : regions_)
      if (r.base) MPI_Win_detach(win_, r.base);
    if (sync_ == WindowSync::lock) MPI_Win_unlock_all(win_);
    MPI_Win_free(&win_);
  }

  // Collective: learn the target lists, create the window.
  int init() {
    STF_CHECK(build_side(Direction::root_to_leaf, plan_.root, plan_.leaf));
    STF_CHECK(build_side(Direction::leaf_to_root, plan_.leaf, plan_.root));
    // Some root anywhere with several leaves: which leaf wins a reduce
    // REPLACE would depend on arrival order, so that goes through basic,
    // whose order is the same on every run.
    std::size_t top = sides_[1].units_in;
    for (stf_int i : plan_.self_root_idx) top = std::max(top, static_cast<std::size_t>(i) + 1);
    std::vector<char> seen(top, 0);
    int shared = 0;
    for (const auto *list : {&plan_.root.idx, &plan_.self_root_idx})
      for (stf_int i : *list) shared |= seen[i]++ > 0;
    STF_MPI(MPI_Allreduce(&shared, &shared_roots_, 1, MPI_INT, MPI_MAX, comm_));
    int size = 1;
    STF_MPI(MPI_Comm_size(comm_, &size));
    if (size == 1) return STF_SUCCESS;  // all self part; Open MPI has no window on one rank
    STF_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, comm_, &win_));
    STF_MPI(MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN));
    if (sync_ == WindowSync::lock) STF_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_));
    if (sync_ == WindowSync::pscw) {
      MPI_Group all;
      STF_MPI(MPI_Comm_group(comm_, &all));
      for (Side &s : sides_) {
        std::vector<int> targets;
        for (const Edge &e : s.edges) targets.push_back(e.rank);
        MPI_Group_incl(all, static_cast<int>(s.origins.size()), s.origins.data(), &s.origin_group);
        MPI_Group_incl(all, static_cast<int>(targets.size()), targets.data(), &s.target_group);
      }
      MPI_Group_free(&all);
    }
    return STF_SUCCESS;
  }

  const char *name() const override { return "window"; }
  std::string describe() const override {
    return std::string("window (MPI-3 one-sided on a dynamic window over the user's arrays, sync ") +
           window_sync_name(sync_) +
           "; MPI_Put for bcast REPLACE, MPI_Accumulate otherwise, one call per peer with derived datatypes; "
           "basic fallback: fetch-and-op, reduce REPLACE onto roots with several leaves, units that are not "
           "dense arrays of one builtin type, user-defined ops, MINLOC/MAXLOC and the logical ops, device data)";
  }

  // The message path: basic.
  int post_recv(Channel &c, Direction d, int tag, std::size_t ub, void *const *recv) override {
    return basic_->post_recv(c, d, tag, ub, recv);
  }
  int post_send(Channel &c, Direction d, int tag, std::size_t ub, const void *const *send) override {
    return basic_->post_send(c, d, tag, ub, send);
  }
  int wait_recv(Channel &c) override { return basic_->wait_recv(c); }
  int wait_send(Channel &c) override { return basic_->wait_send(c); }

  bool takes_whole(Direction d, const Unit &u, MPI_Op op) const override {
    if (u.opaque() || u.packed_bytes != u.extent) return false;
    if (op == MPI_REPLACE) return d == Direction::root_to_leaf || !shared_roots_;
    return accumulate_op(op);
  }

  int begin_whole(Channel &c, Direction d, const WholeOp &w) override {
    Side &s = sides_[dir_index(d)];
    WindowChannel &st = state(c);
    const int di = dir_index(d);
    c.whole = true;
    st.region = -1;
    if (win_ == MPI_WIN_NULL) return STF_SUCCESS;
    const TypeSet *types = nullptr;
    STF_CHECK(type_set(s, w.unit, &types));
    // Target role: expose my array, tell my origins where it is.
    st.recvs.clear();
    st.sends.clear();
    st.done.clear();
    if (!s.origins.empty()) {
      STF_CHECK(attach(w.dst, s.units_in * w.unit.extent, &st.region));
      STF_MPI(MPI_Get_address(w.dst, &st.my_address));
      for (int o : s.origins) {
        st.sends.emplace_back();
        STF_MPI(MPI_Isend(&st.my_address, 1, MPI_AINT, o, tag_address[di], comm_, &st.sends.back()));
        if (sync_ == WindowSync::lock) {
          st.done.emplace_back();
          STF_MPI(MPI_Irecv(nullptr, 0, MPI_BYTE, o, tag_done[di], comm_, &st.done.back()));
        }
      }
    }
    st.addresses.resize(s.edges.size());
    for (std::size_t k = 0; k < s.edges.size(); k++) {
      st.recvs.emplace_back();
      STF_MPI(MPI_Irecv(&st.addresses[k], 1, MPI_AINT, s.edges[k].rank, tag_address[di], comm_, &st.recvs.back()));
    }
    switch (sync_) {
      case WindowSync::fence:
        STF_MPI(MPI_Win_fence(0, win_));
        STF_CHECK(wait_all(&st.recvs));
        return write_all(s, *types, d, w, st);  // completed by the fence in end
      case WindowSync::pscw:
        if (!s.origins.empty()) STF_MPI(MPI_Win_post(s.origin_group, 0, win_));
        if (!s.edges.empty()) STF_MPI(MPI_Win_start(s.target_group, 0, win_));
        STF_CHECK(wait_all(&st.recvs));
        STF_CHECK(write_all(s, *types, d, w, st));
        if (!s.edges.empty()) STF_MPI(MPI_Win_complete(win_));
        if (!s.origins.empty()) STF_MPI(MPI_Win_wait(win_));
        return STF_SUCCESS;
      case WindowSync::lock:
        STF_CHECK(wait_all(&st.recvs));
        STF_CHECK(write_all(s, *types, d, w, st));
        if (!s.edges.empty()) STF_MPI(MPI_Win_flush_all(win_));
        for (const Edge &e : s.edges) {
          st.sends.emplace_back();
          STF_MPI(MPI_Isend(nullptr, 0, MPI_BYTE, e.rank, tag_done[di], comm_, &st.sends.back()));
        }
        return STF_SUCCESS;
    }
    return set_error(STF_ERR_INTERNAL, "window transport: unknown synchronisation");
  }

  int end_whole(Channel &c, Direction) override {
    WindowChannel &st = state(c);
    c.whole = false;
    if (win_ == MPI_WIN_NULL) return STF_SUCCESS;
    if (sync_ == WindowSync::fence) STF_MPI(MPI_Win_fence(0, win_));
    if (sync_ == WindowSync::lock && !st.done.empty()) {
      STF_CHECK(wait_all(&st.done));
      STF_MPI(MPI_Win_sync(win_));  // make the origins' writes visible to my loads
    }
    STF_CHECK(wait_all(&st.sends));
    if (st.region >= 0) regions_[st.region].users--;
    st.region = -1;
    return STF_SUCCESS;
  }

 private:
  struct Region {
    void *base = nullptr;
    std::size_t bytes = 0;
    int users = 0;
    std::uint64_t last = 0;
  };

  // Origin lists are mine (`out`: my side of the messages I send); the
  // targets' lists for me arrive from them (they send theirs: `in`).
  int build_side(Direction d, const Messages &out, const Messages &in) {
    Side &s = sides_[dir_index(d)];
    std::vector<MPI_Request> reqs;
    std::vector<stf_int> theirs(out.idx.size());
    for (int k = 0; k < out.count(); k++) {
      reqs.emplace_back();
      STF_MPI(MPI_Irecv(theirs.data() + out.offset[k], out.size(k), MPI_INT, out.ranks[k], tag_lists + dir_index(d),
                        comm_, &reqs.back()));
    }
    for (int k = 0; k < in.count(); k++) {
      reqs.emplace_back();
      STF_MPI(MPI_Isend(in.idx.data() + in.offset[k], in.size(k), MPI_INT, in.ranks[k], tag_lists + dir_index(d),
                        comm_, &reqs.back()));
      s.origins.push_back(in.ranks[k]);
    }
    STF_CHECK(wait_all(&reqs));
    for (stf_int i : in.idx) s.units_in = std::max(s.units_in, static_cast<std::size_t>(i) + 1);
    for (int k = 0; k < out.count(); k++) {
      Edge e;
      e.rank = out.ranks[k];
      e.layers = layers_of(out.idx.data() + out.offset[k], theirs.data() + out.offset[k], out.size(k));
      s.edges.push_back(std::move(e));
    }
    return STF_SUCCESS;
  }

  // Indexed datatypes for every edge and layer, built on first use of an
  // (element type, unit length) pair and kept.
  int type_set(Side &s, const Unit &u, const TypeSet **out) {
    const MPI_Datatype element = element_type(u.base);
    for (const TypeSet &t : s.types)
      if (t.element == element && t.count == u.count) return *out = &t, STF_SUCCESS;
    TypeSet t;
    t.element = element;
    t.count = u.count;
    std::vector<int> displs;
    auto make = [&](const std::vector<int> &units, std::vector<MPI_Datatype> *list) {
      displs.resize(units.size());
      for (std::size_t i = 0; i < units.size(); i++) {
        if (static_cast<long long>(units[i]) * u.count > INT_MAX)
          return set_error(STF_ERR_UNSUPPORTED, "window transport: unit %d of %d elements is past INT_MAX elements",
                           units[i], u.count);
        displs[i] = units[i] * u.count;
      }
      MPI_Datatype dt;
      STF_MPI(MPI_Type_create_indexed_block(static_cast<int>(units.size()), u.count, displs.data(), element, &dt));
      STF_MPI(MPI_Type_commit(&dt));
      list->push_back(dt);
      return static_cast<int>(STF_SUCCESS);
    };
    int rc = STF_SUCCESS;
    for (const Edge &e : s.edges)
      for (const Layer &l : e.layers) {
        if (!rc) rc = make(l.origin, &t.origin);
        if (!rc) rc = make(l.target, &t.target);
      }
    if (rc) {
      for (auto *list : {&t.origin, &t.target})
        for (MPI_Datatype &dt : *list) MPI_Type_free(&dt);
      return rc;
    }
    s.types.push_back(std::move(t));
    *out = &s.types.back();
    return STF_SUCCESS;
  }

  int write_all(const Side &s, const TypeSet &t, Direction d, const WholeOp &w, const WindowChannel &st) {
    const bool put = w.op == MPI_REPLACE && d == Direction::root_to_leaf;  // leaf slots never repeat
    std::size_t n = 0;
    for (std::size_t k = 0; k < s.edges.size(); k++)
      for (std::size_t l = 0; l < s.edges[k].layers.size(); l++, n++) {
        const int rank = s.edges[k].rank;
        if (put)
          STF_MPI(MPI_Put(w.src, 1, t.origin[n], rank, st.addresses[k], 1, t.target[n], win_));
        else
          STF_MPI(MPI_Accumulate(w.src, 1, t.origin[n], rank, st.addresses[k], 1, t.target[n], w.op, win_));
      }
    return STF_SUCCESS;
  }

  // Attach [base, base + bytes) unless attached already; least recently used
  // idle arrays are detached beyond max_regions.
  int attach(void *base, std::size_t bytes, int *index) {
    tick_++;
    for (std::size_t i = 0; i < regions_.size(); i++)
      if (regions_[i].base == base && regions_[i].bytes == bytes) {
        regions_[i].users++;
        regions_[i].last = tick_;
        *index = static_cast<int>(i);
        return STF_SUCCESS;
      }
    // Idle arrays overlapping this one are stale (the user freed them and
    // the memory came back): MPI refuses overlapping attachments.
    char *lo = static_cast<char *>(base), *hi = lo + bytes;
    for (Region &r : regions_) {
      char *rlo = static_cast<char *>(r.base), *rhi = rlo + r.bytes;
      if (r.base && r.users == 0 && rlo < hi && lo < rhi) {
        STF_MPI(MPI_Win_detach(win_, r.base));
        r = Region();
      }
    }
    // Channels in flight hold region indices: slots are reused in place.
    int slot = -1;
    for (std::size_t i = 0; i < regions_.size() && slot < 0; i++)
      if (!regions_[i].base) slot = static_cast<int>(i);
    if (slot < 0 && regions_.size() >= max_regions)
      for (std::size_t i = 0; i < regions_.size(); i++)
        if (regions_[i].users == 0 && (slot < 0 || regions_[i].last < regions_[slot].last)) slot = static_cast<int>(i);
    if (slot >= 0) {
      if (regions_[slot].base) STF_MPI(MPI_Win_detach(win_, regions_[slot].base));
    } else {
      slot = static_cast<int>(regions_.size());
      regions_.emplace_back();
    }
    regions_[slot] = Region{nullptr, 0, 0, tick_};
    STF_MPI(MPI_Win_attach(win_, base, static_cast<MPI_Aint>(bytes)));
    regions_[slot] = Region{base, bytes, 1, tick_};
    *index = slot;
    return STF_SUCCESS;
  }

  MPI_Comm comm_;
  const Plan &plan_;
  WindowSync sync_;
  std::unique_ptr<Transport> basic_;
  MPI_Win win_ = MPI_WIN_NULL;
  Side sides_[2];  // root_to_leaf, leaf_to_root
  int shared_roots_ = 0;  // some root has several leaves (agreed at set-up)
  std::vector<Region> regions_;
  std::uint64_t tick_ = 0;
};

}  // namespace

int make_window_transport(stf_sf sf, const Plan &plan, std::unique_ptr<Transport> *out) {
  auto t = std::make_unique<WindowTransport>(sf, plan);
  STF_CHECK(t->init());
  *out = std::move(t);
  return STF_SUCCESS;
}

}  // namespace stf
