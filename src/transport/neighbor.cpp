// The neighbor transport: each direction of an operation is one MPI-3
// neighbourhood collective (MPI_Ineighbor_alltoallw) on a distributed-graph
// communicator whose neighbours are the plan's peers, so the MPI library sees
// the whole exchange at once instead of one message per peer.
//
// Choices, and why:
// - alltoallw with MPI_BOTTOM and absolute addresses (MPI_Get_address), one
//   MPI_BYTE count per peer: a peer's buffer may be user memory (contiguous
//   messages go straight from/to the user's arrays) or a slice of a pack
//   buffer, so the pointers of one call need not lie in one allocation;
//   alltoallv would need them relative to one base, with int displacements.
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
#include "transport/large_count.h"
#include "transport/registry.h"

namespace stf {
namespace {

// One channel's collective. The arrays must stay untouched until it completes.
struct NeighborChannel : ChannelState {
  std::vector<void *> recv_ptrs;  // from post_recv, used by post_send
  bool recv_posted = false;
  std::vector<int> scounts, rcounts;
  std::vector<MPI_Aint> sdispls, rdispls;
  std::vector<MPI_Datatype> stypes, rtypes;
  std::vector<ByteCount> sowned, rowned;  // derived types of messages above INT_MAX bytes
  MPI_Request req = MPI_REQUEST_NULL;
  int failed = MPI_SUCCESS;  // the error a test saw, which the end reports again
};

// Per neighbour of the graph communicator, in its order (order; NULL: the
// peers' own): the count and datatype of its bytes (large_count.h: one
// derived type above INT_MAX bytes, on every MPI: alltoallw takes a type per
// peer) and the absolute address of its buffer; zero bytes for a neighbour
// that is no peer in this direction. Both lists are sorted by rank.
int describe_peers(const Messages &peers, const std::vector<int> *order, std::size_t unit_bytes,
                   const void *const *bufs, std::vector<int> *counts, std::vector<MPI_Aint> *displs,
                   std::vector<MPI_Datatype> *types, std::vector<ByteCount> *owned) {
  const int n = order ? static_cast<int>(order->size()) : peers.count();
  counts->assign(n, 0);
  displs->assign(n, 0);
  types->assign(n, MPI_BYTE);
  owned->resize(n);
  // Never a NULL array, also where this rank has no peer in a direction:
  // MPICH 4.0.2 reads them anyway (a segmentation fault on NULL).
  counts->reserve(1);
  displs->reserve(1);
  types->reserve(1);
  for (int k = 0, j = 0; k < n && j < peers.count(); k++) {
    if (order && (*order)[k] != peers.ranks[j]) continue;
    STF_CHECK((*owned)[k].set(static_cast<std::size_t>(peers.size(j)) * unit_bytes));
    (*counts)[k] = (*owned)[k].count();
    (*types)[k] = (*owned)[k].type();
    STF_MPI(MPI_Get_address(bufs[j], &(*displs)[k]));
    j++;
  }
  return STF_SUCCESS;
}

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
    STF_CHECK(describe_peers(senders(plan_, d), order, unit_bytes, send, &s.scounts, &s.sdispls, &s.stypes, &s.sowned));
    STF_CHECK(describe_peers(receivers(plan_, d), order, unit_bytes, s.recv_ptrs.data(), &s.rcounts, &s.rdispls, &s.rtypes,
                                   &s.rowned));
    s.recv_posted = false;
    s.failed = MPI_SUCCESS;
    STF_MPI(MPI_Ineighbor_alltoallw(MPI_BOTTOM, s.scounts.data(), s.sdispls.data(), s.stypes.data(), MPI_BOTTOM,
                                    s.rcounts.data(), s.rdispls.data(), s.rtypes.data(),
                                    d == Direction::root_to_leaf ? to_leaf_ : to_root_, &s.req));
    return STF_SUCCESS;
  }

  // The collective completes both sides; whichever wait comes first waits for it.
  int wait_recv(Channel &c) override { return wait_collective(c); }
  int wait_send(Channel &c) override { return wait_collective(c); }
  int test_recv(Channel &c, bool *done) override { return test_collective(c, done); }
  int test_send(Channel &c, bool *done) override { return test_collective(c, done); }

 private:
  static int wait_collective(Channel &c) {
    NeighborChannel &s = c.get<NeighborChannel>();
    int rc = MPI_SUCCESS;
    if (s.req != MPI_REQUEST_NULL) {
      WorldReturnsErrors during_wait;
      rc = MPI_Wait(&s.req, MPI_STATUS_IGNORE);
    }
    if (s.failed != MPI_SUCCESS) rc = s.failed;  // a test saw it fail (and MPI freed the request)
    s.failed = MPI_SUCCESS;
    return rc == MPI_SUCCESS ? STF_SUCCESS : mpi_error(rc, "MPI_Ineighbor_alltoallw's completion");
  }
  // Not done while the collective has not started (receives posted, sends not yet).
  static int test_collective(Channel &c, bool *done) {
    NeighborChannel &s = c.get<NeighborChannel>();
    int flag = !s.recv_posted;
    if (s.req != MPI_REQUEST_NULL) {
      WorldReturnsErrors during_test;
      s.failed = MPI_Test(&s.req, &flag, MPI_STATUS_IGNORE);
      if (s.failed != MPI_SUCCESS) return mpi_error(s.failed, "MPI_Ineighbor_alltoallw's completion");
    }
    *done = flag != 0;
    return STF_SUCCESS;
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
