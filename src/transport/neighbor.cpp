// The neighbor transport: each direction of an operation is one MPI-3
// neighbourhood collective (MPI_Ineighbor_alltoallw) on a distributed-graph
// communicator whose neighbours are the plan's peers, so the MPI library sees
// the whole exchange at once instead of one message per peer.
//
// Choices, and why:
// - alltoallw with MPI_BOTTOM and absolute addresses (MPI_Get_address): a
//   peer's buffer may be user memory (contiguous messages go straight
//   from/to the user's arrays) or a slice of a pack buffer, so the pointers
//   of one call need not lie in one allocation; alltoallv would need them
//   relative to one base, with int displacements.
// - Each peer's message is its bytes and a size word, one struct type per
//   peer (neighbor_types.h): a collective has no per-message status, and
//   without the word a receiver whose unit is larger than its sender's got
//   the shorter message with STF_SUCCESS.
// - Both graph communicators (root->leaf, leaf->root: sources and
//   destinations swapped, unweighted, no reordering) are built when the
//   transport is created, inside set-up: creating one is a blocking
//   collective, and doing it in a begin could deadlock a legal program (rank
//   A blocked in creation inside its second begin while rank B waits in the
//   first operation's end for data A sends from its end). SFs of one
//   communicator with the same peers share them (graph_comms.h), so their
//   operations must be begun in the same order on every rank.
// - Collectives must start in the same order on every rank of their
//   communicator. Begins are (by the API's contract), but fetch-and-op's
//   return leg is posted from end, in any order, so the registry gives this
//   transport's row no legs_from_end: those go through basic (fallback.cpp),
//   which stf_view reports.
// - The persistent neighbourhood collective (MPI 4 MPI_Neighbor_alltoallw_init,
//   Open MPI's MPIX_Neighbor_alltoallw_init) is detected at configure time but
//   not used: persistent collectives are matched by the order of their
//   initialisation, and a cached request would be re-initialised when this
//   rank's buffers or request slot change, which other ranks cannot know.
#include <algorithm>
#include <iterator>
#include <mutex>

#include "core/error.h"
#include "transport/graph_comms.h"
#include "transport/neighbor_types.h"
#include "transport/registry.h"
#include "transport/size_mismatch.h"

namespace stf {
namespace {

// One channel's collective. The arrays must stay untouched until it completes.
struct NeighborChannel : ChannelState {
  std::vector<void *> recv_ptrs;  // from post_recv, used by post_send
  bool recv_posted = false;
  NeighborTypes sends, recvs;  // with the size words (recvs': kUnset until a message fills them)
  Direction dir = Direction::root_to_leaf;
  std::size_t unit_bytes = 0;
  bool check_words = false;  // set at the start, cleared when the words are compared
  SizeMismatch mismatch;     // a received word that differs, for wait_recv to report
  MPI_Request req = MPI_REQUEST_NULL;
  int failed = MPI_SUCCESS;  // the error a test saw, which the end reports again
};

// MPICH 4.0.2 delivers nothing through MPI_Ineighbor_alltoallw on a
// distributed graph where a rank only sends to or only receives from a
// neighbour. There both graph communicators list every peer of the rank as
// source and destination (the union, sorted); a neighbour that is no peer
// in a direction gets zero bytes.
#if defined(MPICH_VERSION)
constexpr bool symmetric_graphs = true;
#else
constexpr bool symmetric_graphs = false;
#endif

// Open MPI 4.1 raises an error of a neighbourhood collective's request (a
// truncation, where the ranks' units differ) on MPI_COMM_WORLD's handler
// instead of the graph communicator's (which returns errors): by default
// the job would abort. While one of its requests is waited for or tested,
// MPI_COMM_WORLD returns errors; its own handler is restored after.
// MPI_Request_get_status, which raises nothing, does not report the error.
// Threads that wait at once share one swap (the first saves the handler,
// the last restores it), so that none restores another's.
class WorldReturnsErrors {
 public:
#if defined(OMPI_MAJOR_VERSION)
  WorldReturnsErrors() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (users_++ == 0 && MPI_Comm_get_errhandler(MPI_COMM_WORLD, &saved_) == MPI_SUCCESS)
      MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  }
  ~WorldReturnsErrors() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (--users_ > 0 || saved_ == MPI_ERRHANDLER_NULL) return;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, saved_);
    MPI_Errhandler_free(&saved_);
  }
  WorldReturnsErrors(const WorldReturnsErrors &) = delete;
  WorldReturnsErrors &operator=(const WorldReturnsErrors &) = delete;

 private:
  static inline std::mutex mutex_;
  static inline int users_ = 0;
  static inline MPI_Errhandler saved_ = MPI_ERRHANDLER_NULL;
#else
  WorldReturnsErrors() {}  // nothing to swap; user-provided, so a guard is not an unused variable
#endif
};

class NeighborTransport : public TransportDefaults {
 public:
  explicit NeighborTransport(const TransportContext &ctx) : comm_(ctx.comm.comm), plan_(ctx.plan) {}
  ~NeighborTransport() override {
    for (MPI_Comm *c : {&to_leaf_, &to_root_})
      if (*c != MPI_COMM_NULL) release_graph_comm(comm_, *c);
  }
  // The neighbours of the symmetric graphs, before the collectives (prepare_agreed).
  void prepare() {
    if (symmetric_graphs)
      std::set_union(plan_.leaf.ranks.begin(), plan_.leaf.ranks.end(), plan_.root.ranks.begin(),
                     plan_.root.ranks.end(), std::back_inserter(neighbours_));
  }
  // Collective: both graph communicators (messages to leaves come from root
  // ranks, and the other way round).
  int init() {
    if (symmetric_graphs) {
      STF_CHECK(acquire_graph_comm(comm_, neighbours_, neighbours_, &to_leaf_));
      return acquire_graph_comm(comm_, neighbours_, neighbours_, &to_root_);
    }
    STF_CHECK(acquire_graph_comm(comm_, plan_.leaf.ranks, plan_.root.ranks, &to_leaf_));
    return acquire_graph_comm(comm_, plan_.root.ranks, plan_.leaf.ranks, &to_root_);
  }

  const char *name() const override { return "neighbor"; }
  std::string describe() const override {
    return std::string("neighbor (nonblocking neighbourhood collective MPI_Ineighbor_alltoallw on distributed-graph "
                       "communicators; persistent form ") +
           persistent_note() + "; fetch-and-op return: basic fallback)";
  }

  int post_recv(Channel &c, Direction d, Leg, std::size_t, void *const *recv) override {
    NeighborChannel &s = c.get<NeighborChannel>();
    s.recv_ptrs.assign(recv, recv + receivers(plan_, d).count());
    s.recv_posted = true;
    return STF_SUCCESS;
  }

  // Receives were recorded by post_recv; the collective starts here.
  int post_send(Channel &c, Direction d, Leg, std::size_t unit_bytes, const void *const *send) override {
    NeighborChannel &s = c.get<NeighborChannel>();
    if (!s.recv_posted || s.req != MPI_REQUEST_NULL)
      return set_error(STF_ERR_INTERNAL, "neighbor transport: post_send without post_recv, or channel busy");
    const std::vector<int> *order = symmetric_graphs ? &neighbours_ : nullptr;
    const int key = static_cast<int>(d);
    STF_CHECK(s.sends.describe(senders(plan_, d), order, unit_bytes, key, send, true));
    STF_CHECK(s.recvs.describe(receivers(plan_, d), order, unit_bytes, key, s.recv_ptrs.data(), false));
    s.sends.set_words(NeighborTypes::word_for(unit_bytes));
    s.recvs.set_words(NeighborTypes::kUnset);
    s.dir = d;
    s.unit_bytes = unit_bytes;
    s.recv_posted = false;
    s.failed = MPI_SUCCESS;
    s.mismatch.clear();
    STF_MPI(MPI_Ineighbor_alltoallw(MPI_BOTTOM, s.sends.counts(), s.sends.displs(), s.sends.types(), MPI_BOTTOM,
                                    s.recvs.counts(), s.recvs.displs(), s.recvs.types(),
                                    d == Direction::root_to_leaf ? to_leaf_ : to_root_, &s.req));
    s.check_words = true;
    return STF_SUCCESS;
  }

  // The collective completes both sides; whichever wait comes first waits
  // for it. A received word that differs fails the receiving side's end.
  int wait_recv(Channel &c) override {
    STF_CHECK(wait_collective(c));
    return c.get<NeighborChannel>().mismatch.report("neighbor");
  }
  int wait_send(Channel &c) override { return wait_collective(c); }
  int test_recv(Channel &c, bool *done) override { return test_collective(c, done); }
  int test_send(Channel &c, bool *done) override { return test_collective(c, done); }

 private:
  int wait_collective(Channel &c) const {
    NeighborChannel &s = c.get<NeighborChannel>();
    int rc = MPI_SUCCESS;
    if (s.req != MPI_REQUEST_NULL) {
      WorldReturnsErrors during_wait;
      rc = MPI_Wait(&s.req, MPI_STATUS_IGNORE);
    }
    if (s.failed != MPI_SUCCESS) rc = s.failed;  // a test saw it fail (and MPI freed the request)
    s.failed = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) {
      s.check_words = false;
      return mpi_error(rc, "MPI_Ineighbor_alltoallw's completion");
    }
    compare_words(s);
    return STF_SUCCESS;
  }
  // Not done while the collective has not started (receives posted, sends not yet).
  int test_collective(Channel &c, bool *done) const {
    NeighborChannel &s = c.get<NeighborChannel>();
    int flag = !s.recv_posted;
    if (s.req != MPI_REQUEST_NULL) {
      WorldReturnsErrors during_test;
      s.failed = MPI_Test(&s.req, &flag, MPI_STATUS_IGNORE);
      if (s.failed != MPI_SUCCESS) {
        s.check_words = false;
        return mpi_error(s.failed, "MPI_Ineighbor_alltoallw's completion");
      }
      if (flag) compare_words(s);
    }
    *done = flag != 0;
    return STF_SUCCESS;
  }
  // Once the collective is complete: each peer's word must be the one this
  // rank's unit gives (neighbor_types.h); kUnset means a shorter message.
  void compare_words(NeighborChannel &s) const {
    if (!s.check_words) return;
    s.check_words = false;
    const Messages &from = receivers(plan_, s.dir);
    const std::uint64_t want = NeighborTypes::word_for(s.unit_bytes);
    for (int k = 0; k < s.recvs.neighbours(); k++) {
      const int j = s.recvs.peer_of(k);
      if (j >= 0 && s.recvs.word(k) != want)
        s.mismatch.note(from.ranks[j], false, static_cast<std::size_t>(from.size(j)) * s.unit_bytes);
    }
  }

  static const char *persistent_note() {
#if defined(STF_HAVE_MPI_NEIGHBOR_INIT)
    return "MPI_Neighbor_alltoallw_init available, not used (matched by initialisation order)";
#elif defined(STF_HAVE_MPIX_NEIGHBOR_INIT)
    return "MPIX_Neighbor_alltoallw_init available, not used (matched by initialisation order)";
#else
    return "not available";
#endif
  }

  MPI_Comm comm_;
  const Plan &plan_;
  MPI_Comm to_leaf_ = MPI_COMM_NULL, to_root_ = MPI_COMM_NULL;
  std::vector<int> neighbours_;  // symmetric_graphs: every peer, both ways
};

}  // namespace

int make_neighbor_transport(const TransportContext &ctx, std::unique_ptr<Transport> *out) {
  std::unique_ptr<NeighborTransport> t;
  STF_CHECK(prepare_agreed(ctx, [&] {
    t = std::make_unique<NeighborTransport>(ctx);
    t->prepare();
  }));
  STF_CHECK(t->init());
  *out = std::move(t);
  return STF_SUCCESS;
}

}  // namespace stf
