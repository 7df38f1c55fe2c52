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
//   destinations swapped, weights = message sizes in units, no reordering)
//   are built when the transport is created, inside set-up: creating one is
//   a blocking collective, and doing it in a begin could deadlock a legal
//   program (rank A blocked in creation inside its second begin while rank B
//   waits in the first operation's end for data A sends from its end).
// - Collectives must start in the same order on every rank of their
//   communicator. Begins are (by the API's contract), but fetch-and-op's
//   return leg is posted from end, in any order, so those channels (tags >=
//   tag_fetch_first) go through an internal basic transport: an explicit
//   fallback that stf_view reports.
// - The persistent neighbourhood collective (MPI 4 MPI_Neighbor_alltoallw_init,
//   Open MPI's MPIX_Neighbor_alltoallw_init) is detected at configure time but
//   not used: persistent collectives are matched by the order of their
//   initialisation, and a cached request would be re-initialised when this
//   rank's buffers or request slot change, which other ranks cannot know.
#include <climits>

#include "core/error.h"
#include "graph/sf.h"
#include "plan/plan.h"
#include "transport/transport.h"

namespace stf {
namespace {

// One channel's collective. The arrays must stay untouched until it completes.
struct NeighborChannel : ChannelExtra {
  std::vector<void *> recv_ptrs;  // from post_recv, used by post_send
  bool recv_posted = false;
  std::vector<int> scounts, rcounts;
  std::vector<MPI_Aint> sdispls, rdispls;
  std::vector<MPI_Datatype> stypes, rtypes;
  MPI_Request req = MPI_REQUEST_NULL;
};

NeighborChannel &state(Channel &c) {
  if (!c.extra) c.extra = std::make_unique<NeighborChannel>();
  return static_cast<NeighborChannel &>(*c.extra);
}

// Per peer: byte count and absolute address of its buffer.
int describe_peers(const Messages &peers, std::size_t unit_bytes, const void *const *bufs, std::vector<int> *counts,
                   std::vector<MPI_Aint> *displs, std::vector<MPI_Datatype> *types) {
  const int n = peers.count();
  counts->resize(n);
  displs->resize(n);
  types->assign(n, MPI_BYTE);
  for (int k = 0; k < n; k++) {
    std::size_t bytes = static_cast<std::size_t>(peers.size(k)) * unit_bytes;
    if (bytes > INT_MAX)
      return set_error(STF_ERR_UNSUPPORTED, "message of %zu bytes to rank %d exceeds INT_MAX", bytes,
                       peers.ranks[k]);
    (*counts)[k] = static_cast<int>(bytes);
    STF_MPI(MPI_Get_address(bufs[k], &(*displs)[k]));
  }
  return STF_SUCCESS;
}

// A distributed-graph communicator receiving from `from` and sending to `to`.
int graph_comm(MPI_Comm comm, const Messages &from, const Messages &to, MPI_Comm *out) {
  std::vector<int> wfrom(from.count()), wto(to.count());
  for (int k = 0; k < from.count(); k++) wfrom[k] = from.size(k);
  for (int k = 0; k < to.count(); k++) wto[k] = to.size(k);
  STF_MPI(MPI_Dist_graph_create_adjacent(comm, from.count(), from.ranks.data(),
                                         wfrom.empty() ? MPI_WEIGHTS_EMPTY : wfrom.data(), to.count(),
                                         to.ranks.data(), wto.empty() ? MPI_WEIGHTS_EMPTY : wto.data(),
                                         MPI_INFO_NULL, 0, out));
  STF_MPI(MPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN));
  return STF_SUCCESS;
}

bool returned_from_end(int tag) { return tag >= tag_fetch_first; }

class NeighborTransport : public Transport {
 public:
  NeighborTransport(MPI_Comm comm, const Plan &plan) : plan_(plan), basic_(make_basic_transport(comm, plan)) {}
  ~NeighborTransport() override {
    for (MPI_Comm *c : {&to_leaf_, &to_root_})
      if (*c != MPI_COMM_NULL) MPI_Comm_free(c);
  }
  // Collective over comm: both graph communicators.
  int init(MPI_Comm comm) {
    STF_CHECK(graph_comm(comm, plan_.leaf, plan_.root, &to_leaf_));
    return graph_comm(comm, plan_.root, plan_.leaf, &to_root_);
  }

  const char *name() const override { return "neighbor"; }
  std::string describe() const override {
    return std::string("neighbor (nonblocking neighbourhood collective MPI_Ineighbor_alltoallw on distributed-graph "
                       "communicators; persistent form ") +
           persistent_note() + "; fetch-and-op return: basic fallback)";
  }

  int post_recv(Channel &c, Direction d, int tag, std::size_t unit_bytes, void *const *recv) override {
    if (returned_from_end(tag)) return basic_->post_recv(c, d, tag, unit_bytes, recv);
    NeighborChannel &s = state(c);
    const Messages &peers = d == Direction::root_to_leaf ? plan_.leaf : plan_.root;
    s.recv_ptrs.assign(recv, recv + peers.count());
    s.recv_posted = true;
    return STF_SUCCESS;
  }

  // Receives were recorded by post_recv; the collective starts here.
  int post_send(Channel &c, Direction d, int tag, std::size_t unit_bytes, const void *const *send) override {
    if (returned_from_end(tag)) return basic_->post_send(c, d, tag, unit_bytes, send);
    NeighborChannel &s = state(c);
    if (!s.recv_posted || s.req != MPI_REQUEST_NULL)
      return set_error(STF_ERR_INTERNAL, "neighbor transport: post_send without post_recv, or channel busy");
    const bool down = d == Direction::root_to_leaf;
    STF_CHECK(describe_peers(down ? plan_.root : plan_.leaf, unit_bytes, send, &s.scounts, &s.sdispls, &s.stypes));
    STF_CHECK(describe_peers(down ? plan_.leaf : plan_.root, unit_bytes, s.recv_ptrs.data(), &s.rcounts, &s.rdispls,
                             &s.rtypes));
    s.recv_posted = false;
    STF_MPI(MPI_Ineighbor_alltoallw(MPI_BOTTOM, s.scounts.data(), s.sdispls.data(), s.stypes.data(), MPI_BOTTOM,
                                    s.rcounts.data(), s.rdispls.data(), s.rtypes.data(), down ? to_leaf_ : to_root_,
                                    &s.req));
    return STF_SUCCESS;
  }

  // The collective completes both sides; whichever wait comes first waits for it.
  int wait_recv(Channel &c) override {
    STF_CHECK(wait_collective(c));
    return basic_->wait_recv(c);
  }
  int wait_send(Channel &c) override {
    STF_CHECK(wait_collective(c));
    return basic_->wait_send(c);
  }

 private:
  static int wait_collective(Channel &c) {
    if (c.extra) {
      NeighborChannel &s = state(c);
      if (s.req != MPI_REQUEST_NULL) STF_MPI(MPI_Wait(&s.req, MPI_STATUS_IGNORE));
    }
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

  const Plan &plan_;
  std::unique_ptr<Transport> basic_;  // fetch-and-op returns
  MPI_Comm to_leaf_ = MPI_COMM_NULL, to_root_ = MPI_COMM_NULL;
};

}  // namespace

int make_neighbor_transport(stf_sf sf, const Plan &plan, std::unique_ptr<Transport> *out) {
  auto t = std::make_unique<NeighborTransport>(sf->comm, plan);
  STF_CHECK(t->init(sf->comm));
  *out = std::move(t);
  return STF_SUCCESS;
}

}  // namespace stf
