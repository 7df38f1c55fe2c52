#include "core/topology.h"

#include <map>
#include <memory>

#include "core/comm.h"
#include "core/error.h"

namespace stf {
namespace {

// The topologies made on one communicator, by K.
struct Topologies {
  std::map<int, std::unique_ptr<Topology>> by_k;
};

// Fills t from the node communicator (the ranks of my node).
int describe(MPI_Comm comm, MPI_Comm node_comm, Topology *t) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(node_comm, &t->local_rank);
  MPI_Comm_size(node_comm, &t->local_size);
  // Every rank learns each rank's node leader (lowest rank on its node) and
  // local rank; leaders in rank order number the nodes.
  int leader = rank;
  STF_MPI(MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node_comm));
  int mine[2] = {leader, t->local_rank};
  std::vector<int> all(2 * static_cast<std::size_t>(size));
  STF_MPI(MPI_Allgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, comm));
  std::vector<int> node_of_leader(size, -1);
  t->nnodes = 0;
  t->node_of.assign(size, 0);
  t->local_rank_of.assign(size, 0);
  for (int r = 0; r < size; r++) {
    const int l = all[2 * r];
    if (node_of_leader[l] < 0) node_of_leader[l] = t->nnodes++;
    t->node_of[r] = node_of_leader[l];
    t->local_rank_of[r] = all[2 * r + 1];
  }
  t->node = t->node_of[rank];
  t->node_offset.assign(t->nnodes + 1, 0);
  for (int r = 0; r < size; r++) t->node_offset[t->node_of[r] + 1]++;
  for (int n = 0; n < t->nnodes; n++) t->node_offset[n + 1] += t->node_offset[n];
  t->node_ranks.assign(size, 0);
  std::vector<int> next(t->node_offset.begin(), t->node_offset.end() - 1);
  for (int r = 0; r < size; r++) t->node_ranks[next[t->node_of[r]]++] = r;
  STF_MPI(MPI_Comm_split(comm, t->local_rank, t->node, &t->lane_comm));
  MPI_Comm_set_errhandler(t->lane_comm, MPI_ERRORS_RETURN);
  return STF_SUCCESS;
}

int make(MPI_Comm comm, int k, std::unique_ptr<Topology> *out) {
  auto t = std::make_unique<Topology>();
  t->ranks_per_node = k;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (k > 0) STF_MPI(MPI_Comm_split(comm, rank / k, rank, &t->node_comm));
  else STF_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &t->node_comm));
  MPI_Comm_set_errhandler(t->node_comm, MPI_ERRORS_RETURN);
  STF_CHECK(describe(comm, t->node_comm, t.get()));
  *out = std::move(t);
  return STF_SUCCESS;
}

}  // namespace

Topology::~Topology() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (node_comm != MPI_COMM_NULL) MPI_Comm_free(&node_comm);
  if (lane_comm != MPI_COMM_NULL) MPI_Comm_free(&lane_comm);
}

int topology_of(MPI_Comm comm, int ranks_per_node, const Topology **out) {
  Topologies *cache = nullptr;
  STF_CHECK(cached_on(comm, &cache));
  std::unique_ptr<Topology> &t = cache->by_k[ranks_per_node];
  if (!t) STF_CHECK(make(comm, ranks_per_node, &t));
  *out = t.get();
  return STF_SUCCESS;
}

}  // namespace stf
