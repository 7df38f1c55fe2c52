// The window transport: MPI-3 one-sided communication of the packed messages
// the ops layer builds, the same messages basic sends. Each receive buffer
// (a slice of the ops layer's pack buffer, or user memory for a contiguous
// REPLACE receive) is attached to one dynamic window; its origin writes the
// message there with one MPI_Put of contiguous bytes; the ops layer unpacks
// as for basic. So packing, the op (REPLACE with several leaves per root,
// logical ops, user-defined ops), units and device data behave exactly as
// with basic (device buffers basic would hand to MPI are attached and put
// here: the MPI's one-sided component must accept device memory).
//
// Why not one-sided straight into the user's array with derived datatypes
// (the first design): Open MPI 4.1's osc/rdma over shared memory moves a
// non-contiguous target datatype one block at a time (one single-copy
// transfer per unit), which made a strided halo face hundreds of times
// slower than a message (docs/design/transports.md, "window").
//
// Choices, and why:
// - One dynamic window per SF (MPI_Win_create_dynamic at set-up); receive
//   buffers attached locally (MPI_Win_attach) and cached by (base, bytes),
//   adjacent per-peer slices merged into one attachment. MPI_Win_create per
//   buffer is collective, and whether a buffer is new is a rank-local fact.
// - At most max_regions (32) attachments per window: Open MPI 4.1 refuses
//   more than 64 and its peers then hang. A receive that finds them all in
//   use (more than about 30 operations in flight) is a point-to-point
//   message instead, tagged per direction; both ends post theirs in begin
//   order, as they do the address messages.
// - Each operation, every target sends each origin the address of that
//   origin's receive slice, or that it wants a message, and the slice's
//   size (two MPI_Aint per peer): the buffers a request slot uses, and the
//   slot itself, are chosen per rank. An origin whose message has another
//   size (the ranks' units differ) never writes past the slice: it moves
//   what fits, finishes the synchronisation as usual (so no rank hangs) and
//   its end fails with STF_ERR_ARG.
// - Messages of any size: puts and messages above INT_MAX bytes go through
//   large_count.h (puts of at most 1 GiB each; messages by MPI-4 _c calls
//   or one derived type).
// - Synchronisation (-stf_window_sync):
//   fence: puts in begin; one MPI_Win_fence in end (the receive's wait), so
//     every rank must call the SF's ends in the same order.
//   lock: MPI_Win_lock_all for the window's life; begin puts, flushes and
//     tells each target with a zero-byte message; end waits for those and
//     calls MPI_Win_sync.
//   pscw: post/start, puts, complete/wait, all in begin (epochs of
//     operations in flight together may not overlap): end has nothing left
//     to wait for. Refused between hosts with MPICH 4.0, which hangs there
//     (pscw_hangs_between_hosts).
//   In every mode a begin waits for its targets' addresses, i.e. until the
//   ranks it writes to have reached the same begin: no rank may then be
//   waiting, inside an end, for data this rank sends only from a later end.
// - Fetch-and-op's return leg is posted from end, in an order that may
//   differ between ranks, so the registry gives this transport no
//   legs_from_end: it goes through basic (fallback.cpp).
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/error.h"
#include "core/topology.h"
#include "transport/large_count.h"
#include "transport/mpi_requests.h"
#include "transport/registry.h"
#include "transport/size_mismatch.h"

namespace stf {

const OptionSpec window_sync_option = {
    "stf_window_sync", "STF_WINDOW_SYNC", "fence|lock|pscw",
    "synchronisation of the window transport: MPI_Win_fence, passive-target lock_all + flush, or "
    "post-start-complete-wait (default fence)",
    "fence", nullptr};

namespace {

enum class WindowSync { fence, lock, pscw };

WindowSync sync_of(const Options &o) {
  const std::string v = o.text(window_sync_option);
  return v == "lock" ? WindowSync::lock : v == "pscw" ? WindowSync::pscw : WindowSync::fence;
}

const char *sync_name(WindowSync w) {
  return w == WindowSync::fence ? "fence" : w == WindowSync::lock ? "lock" : "pscw";
}

// This transport's tags in the SF's block (core/comm.h), per direction.
constexpr int tag_address[2] = {0, 1};
constexpr int tag_done[2] = {2, 3};
constexpr int tag_data[2] = {4, 5};
// Attachments per window, in use or idle. Open MPI 4.1's osc/rdma refuses
// more than its osc_rdma_max_attach (default 64) with MPI_ERR_RMA_ATTACH,
// and its peers, already in the operation, then wait forever; receives
// beyond this many buffers go as messages instead (the target says so in
// its address message, so both ends agree). An attachment MPI refuses all
// the same falls back too, but past its limit Open MPI was seen to hang
// the peers' puts even so: staying under the limit is what keeps it safe.
constexpr std::size_t max_regions = 32;

int dir_index(Direction d) { return d == Direction::root_to_leaf ? 0 : 1; }

// Debian's MPICH 4.0.2 over UCX's TCP transport (between hosts) hangs in
// PSCW epochs whose groups alternate between two pairs, as a bcast's and a
// reduce's do, in plain MPI too (docs/design/mpi-notes.md, "MPICH 4.0").
// Assumed of every MPICH 4.0.x; no later MPICH was tried.
bool pscw_hangs_between_hosts() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int length = 0;
  MPI_Get_library_version(version, &length);
  const char *v = std::strstr(version, "MPICH Version:");
  if (!v) return false;
  v += std::strlen("MPICH Version:");
  while (*v == ' ' || *v == '\t') v++;
  return std::strncmp(v, "4.0", 3) == 0 && (v[3] == '.' || v[3] == '\0' || v[3] == '\n' || v[3] == ' ');
}

// Per operation slot and direction. A target tells each origin, per
// message, {address of its slice, bytes + 1} (put it there) or
// {0, -(bytes + 1)} (no attachment could be had: send it as a message).
struct WindowChannel : ChannelState {
  std::vector<MPI_Aint> my_addresses;  // 2 per origin: of my receive slices
  std::vector<MPI_Aint> addresses;     // 2 per target: of my targets' slices for me
  std::vector<MPI_Request> address_sends, address_recvs, done_sends, done_recvs, data_sends, data_recvs;
  std::vector<int> regions;  // attachments in use until the receive ends
  SizeMismatch mismatch;     // origin side: a target whose slice differs in size from my message
};

// The size a target announced for its slice (its flag's sign says whether
// it is attached).
std::size_t announced_bytes(MPI_Aint flag) { return static_cast<std::size_t>((flag < 0 ? -flag : flag) - 1); }

std::size_t message_bytes(const Messages &m, int k, std::size_t unit_bytes) {
  return static_cast<std::size_t>(m.size(k)) * unit_bytes;
}

class WindowTransport : public TransportDefaults {
 public:
  explicit WindowTransport(const TransportContext &ctx)
      : comm_(ctx.comm), plan_(ctx.plan), sync_(sync_of(ctx.opts)) {}

  ~WindowTransport() override {
    for (MPI_Group *g : {&origin_group_[0], &origin_group_[1], &target_group_[0], &target_group_[1]})
      if (*g != MPI_GROUP_NULL) MPI_Group_free(g);
    if (win_ == MPI_WIN_NULL) return;
    for (Region &r : regions_)
      if (r.base) MPI_Win_detach(win_, r.base);
    if (sync_ == WindowSync::lock) MPI_Win_unlock_all(win_);
    MPI_Win_free(&win_);
  }

  // Collective: create the window (none on one rank: no messages).
  int init() {
    if (comm_.size == 1) return STF_SUCCESS;
    if (sync_ == WindowSync::pscw && pscw_hangs_between_hosts()) {
      const Topology *hosts = nullptr;  // the shared-memory nodes, whatever -stf_ranks_per_node says
      STF_CHECK(topology_of(comm_.comm, 0, &hosts));
      if (hosts->nnodes > 1)
        return set_error(STF_ERR_UNSUPPORTED,
                         "window transport: -stf_window_sync pscw across hosts hangs with MPICH 4.0 (over TCP, in "
                         "plain MPI too): use -stf_window_sync fence or lock");
    }
    STF_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, comm_.comm, &win_));
    STF_MPI(MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN));
    if (sync_ == WindowSync::lock) STF_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_));
    if (sync_ == WindowSync::fence) STF_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE, win_));
    if (sync_ == WindowSync::pscw) {
      MPI_Group all;
      STF_MPI(MPI_Comm_group(comm_.comm, &all));
      for (Direction d : {Direction::root_to_leaf, Direction::leaf_to_root}) {
        const Messages &origins = receivers(plan_, d), &targets = senders(plan_, d);
        const int di = dir_index(d);
        MPI_Group_incl(all, origins.count(), origins.ranks.data(), &origin_group_[di]);
        MPI_Group_incl(all, targets.count(), targets.ranks.data(), &target_group_[di]);
      }
      MPI_Group_free(&all);
    }
    return STF_SUCCESS;
  }

  const char *name() const override { return "window"; }
  // Fence and PSCW epochs of operations in flight may not overlap, so every
  // send of an operation happens before the next operation starts.
  bool sends_may_be_deferred() const override { return sync_ == WindowSync::lock; }

  std::string describe() const override {
    return std::string("window (MPI-3 one-sided: one MPI_Put of the packed message per peer into receive buffers "
                       "attached to a dynamic window, sync ") +
           sync_name(sync_) + "; receives beyond " + std::to_string(max_regions) +
           " attached buffers: point-to-point; basic fallback: fetch-and-op return leg" +
           (sends_may_be_deferred() ? "" : "; device stream model C runs as B") + ")";
  }

  // Target role: expose the receive slices, tell each origin where its slice is.
  int post_recv(Channel &c, Direction d, Leg, std::size_t ub, void *const *recv) override {
    WindowChannel &st = c.get<WindowChannel>();
    const Messages &m = receivers(plan_, d);
    const int di = dir_index(d);
    st.my_addresses.assign(2 * m.count(), 0);
    STF_CHECK(attach_slices(m, ub, recv, &st.regions, &st.my_addresses));
    st.address_sends.clear();
    st.done_recvs.clear();
    st.data_recvs.clear();
    for (int k = 0; k < m.count(); k++) {
      const auto bytes = static_cast<MPI_Aint>(message_bytes(m, k, ub));
      if (st.my_addresses[2 * k + 1]) {
        st.my_addresses[2 * k + 1] = bytes + 1;
      } else {
        st.my_addresses[2 * k + 1] = -(bytes + 1);
        st.data_recvs.emplace_back();
        STF_CHECK(irecv_bytes(recv[k], message_bytes(m, k, ub), m.ranks[k], comm_.transport_tag(tag_data[di]),
                              comm_.comm, &st.data_recvs.back()));
      }
      st.address_sends.emplace_back();
      STF_MPI(MPI_Isend(&st.my_addresses[2 * k], 2, MPI_AINT, m.ranks[k], comm_.transport_tag(tag_address[di]),
                        comm_.comm, &st.address_sends.back()));
      if (sync_ == WindowSync::lock) {
        st.done_recvs.emplace_back();
        STF_MPI(MPI_Irecv(nullptr, 0, MPI_BYTE, m.ranks[k], comm_.transport_tag(tag_done[di]), comm_.comm,
                          &st.done_recvs.back()));
      }
    }
    if (sync_ == WindowSync::pscw && m.count() > 0) STF_MPI(MPI_Win_post(origin_group_[di], 0, win_));
    return STF_SUCCESS;
  }

  // Origin role: wait for the targets' addresses, put, synchronise.
  int post_send(Channel &c, Direction d, Leg, std::size_t ub, const void *const *send) override {
    WindowChannel &st = c.get<WindowChannel>();
    const Messages &m = senders(plan_, d);
    const int di = dir_index(d);
    st.addresses.resize(2 * m.count());
    st.address_recvs.clear();
    st.done_sends.clear();
    st.data_sends.clear();
    for (int k = 0; k < m.count(); k++) {
      st.address_recvs.emplace_back();
      STF_MPI(MPI_Irecv(&st.addresses[2 * k], 2, MPI_AINT, m.ranks[k], comm_.transport_tag(tag_address[di]), comm_.comm,
                        &st.address_recvs.back()));
    }
    if (sync_ == WindowSync::pscw && m.count() > 0) STF_MPI(MPI_Win_start(target_group_[di], 0, win_));
    STF_CHECK(wait_all(&st.address_recvs));
    st.mismatch.clear();
    for (int k = 0; k < m.count(); k++) {
      std::size_t bytes = message_bytes(m, k, ub);
      const std::size_t expected = announced_bytes(st.addresses[2 * k + 1]);
      if (bytes != expected) st.mismatch.note(m.ranks[k], true, expected, bytes);
      bytes = std::min(bytes, expected);
      if (st.addresses[2 * k + 1] < 0) {
        st.data_sends.emplace_back();
        STF_CHECK(isend_bytes(send[k], bytes, m.ranks[k], comm_.transport_tag(tag_data[di]), comm_.comm,
                              &st.data_sends.back()));
      } else if (bytes > 0) {
        STF_CHECK(put_bytes(send[k], bytes, m.ranks[k], st.addresses[2 * k], win_));
      }
    }
    switch (sync_) {
      case WindowSync::fence:
        return STF_SUCCESS;  // completed by the fence in end
      case WindowSync::pscw:
        if (m.count() > 0) STF_MPI(MPI_Win_complete(win_));
        if (receivers(plan_, d).count() > 0) STF_MPI(MPI_Win_wait(win_));  // the exposure epoch post_recv opened
        return STF_SUCCESS;
      case WindowSync::lock:
        if (m.count() > 0) STF_MPI(MPI_Win_flush_all(win_));
        for (int k = 0; k < m.count(); k++) {
          st.done_sends.emplace_back();
          STF_MPI(MPI_Isend(nullptr, 0, MPI_BYTE, m.ranks[k], comm_.transport_tag(tag_done[di]), comm_.comm,
                            &st.done_sends.back()));
        }
        return STF_SUCCESS;
    }
    return set_error(STF_ERR_INTERNAL, "window transport: unknown synchronisation");
  }

  int wait_recv(Channel &c) override {
    WindowChannel &st = c.get<WindowChannel>();
    if (sync_ == WindowSync::fence && win_ != MPI_WIN_NULL) STF_MPI(MPI_Win_fence(0, win_));
    if (sync_ == WindowSync::lock && !st.done_recvs.empty()) {
      STF_CHECK(wait_all(&st.done_recvs));
      STF_MPI(MPI_Win_sync(win_));  // make the origins' writes visible to my loads
    }
    STF_CHECK(wait_all(&st.data_recvs));
    for (int i : st.regions) regions_[i].users--;
    st.regions.clear();
    return STF_SUCCESS;
  }

  int wait_send(Channel &c) override {
    WindowChannel &st = c.get<WindowChannel>();
    STF_CHECK(wait_all(&st.address_sends));
    STF_CHECK(wait_all(&st.data_sends));
    STF_CHECK(wait_all(&st.done_sends));
    return st.mismatch.report("window");  // once the operation is complete
  }

  // fence: the data is known to be there only after the fence, a collective
  // over the window, so the wait does it; pscw: complete since begin.
  int test_recv(Channel &c, bool *done) override {
    WindowChannel &st = c.get<WindowChannel>();
    STF_CHECK(test_all(&st.data_recvs, done));
    if (*done && sync_ == WindowSync::lock) STF_CHECK(test_all(&st.done_recvs, done));
    return STF_SUCCESS;
  }
  int test_send(Channel &c, bool *done) override {
    WindowChannel &st = c.get<WindowChannel>();
    STF_CHECK(test_all(&st.address_sends, done));
    if (*done) STF_CHECK(test_all(&st.data_sends, done));
    return *done ? test_all(&st.done_sends, done) : STF_SUCCESS;  // a size mismatch: wait_send, from the end
  }

 private:
  struct Region {
    void *base = nullptr;
    std::size_t bytes = 0;
    int users = 0;
    std::uint64_t last = 0;
  };

  // Attach every receive slice, adjacent slices (of one pack buffer) as one,
  // and note each slice's address (out[2k], with out[2k+1] = 1) where its
  // attachment could be had; the others stay {0, 0}: messages (post_recv
  // then turns the flags into the slices' sizes).
  int attach_slices(const Messages &m, std::size_t ub, void *const *recv, std::vector<int> *in_use,
                    std::vector<MPI_Aint> *out) {
    spans_.clear();
    for (int k = 0; k < m.count(); k++) {
      const std::size_t bytes = message_bytes(m, k, ub);
      char *lo = static_cast<char *>(recv[k]);
      if (bytes > 0) spans_.push_back({{lo, lo + bytes}, k});
    }
    std::sort(spans_.begin(), spans_.end());
    for (std::size_t i = 0; i < spans_.size();) {
      std::size_t j = i + 1;
      char *hi = spans_[i].first.second;
      for (; j < spans_.size() && spans_[j].first.first <= hi; j++) hi = std::max(hi, spans_[j].first.second);
      int index = -1;
      attach(spans_[i].first.first, static_cast<std::size_t>(hi - spans_[i].first.first), &index);
      if (index >= 0) {
        in_use->push_back(index);
        for (std::size_t t = i; t < j; t++) {
          const int k = spans_[t].second;
          STF_MPI(MPI_Get_address(recv[k], &(*out)[2 * k]));
          (*out)[2 * k + 1] = 1;
        }
      }
      i = j;
    }
    return STF_SUCCESS;
  }

  // Attach [base, base + bytes) unless attached already; least recently used
  // idle attachments are detached beyond max_regions. *index = -1 where
  // max_regions are in use or MPI refuses the attachment (its limit may be
  // lower than ours): the caller then receives by message. Never fails, so
  // that a target always sends its origins their addresses. (A detach MPI
  // refuses leaves a slot empty: the memory stays attached, unused.)
  void attach(void *base, std::size_t bytes, int *index) {
    tick_++;
    for (std::size_t i = 0; i < regions_.size(); i++)
      if (regions_[i].base == base && regions_[i].bytes == bytes) {
        regions_[i].users++;
        regions_[i].last = tick_;
        *index = static_cast<int>(i);
        return;
      }
    // Idle attachments overlapping this one are stale (the buffer was freed
    // or regrown and the memory came back): MPI refuses overlapping ones.
    char *lo = static_cast<char *>(base), *hi = lo + bytes;
    for (Region &r : regions_) {
      char *rlo = static_cast<char *>(r.base), *rhi = rlo + r.bytes;
      if (r.base && r.users == 0 && rlo < hi && lo < rhi) {
        MPI_Win_detach(win_, r.base);
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
    *index = -1;
    if (slot >= 0) {
      if (regions_[slot].base) MPI_Win_detach(win_, regions_[slot].base);
    } else if (regions_.size() < max_regions) {
      slot = static_cast<int>(regions_.size());
      regions_.emplace_back();
    } else {
      return;  // every attachment in use
    }
    regions_[slot] = Region();
    if (MPI_Win_attach(win_, base, static_cast<MPI_Aint>(bytes)) != MPI_SUCCESS) return;
    regions_[slot] = Region{base, bytes, 1, tick_};
    *index = slot;
  }

  const Comm &comm_;
  const Plan &plan_;
  WindowSync sync_;
  MPI_Win win_ = MPI_WIN_NULL;
  MPI_Group origin_group_[2] = {MPI_GROUP_NULL, MPI_GROUP_NULL};  // pscw, per direction
  MPI_Group target_group_[2] = {MPI_GROUP_NULL, MPI_GROUP_NULL};
  std::vector<Region> regions_;
  std::vector<std::pair<std::pair<char *, char *>, int>> spans_;  // scratch of attach_slices: slice, peer
  std::uint64_t tick_ = 0;
};

}  // namespace

int make_window_transport(const TransportContext &ctx, std::unique_ptr<Transport> *out) {
  std::unique_ptr<WindowTransport> t;
  STF_CHECK(prepare_agreed(ctx, [&] { t = std::make_unique<WindowTransport>(ctx); }));
  STF_CHECK(t->init());
  *out = std::move(t);
  return STF_SUCCESS;
}

}  // namespace stf
