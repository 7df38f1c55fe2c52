#include "core/topology.h"

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "core/comm.h"
#include "core/error.h"

namespace stf {
namespace {

// The topologies made on one communicator, by K.
struct Topologies {
  std::map<int, std::unique_ptr<Topology>> by_k;
};

// Fills t from the node communicator (the ranks of my node). t's arrays
// have their sizes already: nothing is allocated between the collectives,
// so that no rank can leave the others in one.
int describe(MPI_Comm comm, MPI_Comm node_comm, Topology *t, std::vector<int> *all, std::vector<int> *node_of_leader,
             std::vector<int> *next) {
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
  STF_MPI(MPI_Allgather(mine, 2, MPI_INT, all->data(), 2, MPI_INT, comm));
  t->nnodes = 0;
  for (int r = 0; r < size; r++) {
    const int l = (*all)[2 * r];
    if ((*node_of_leader)[l] < 0) (*node_of_leader)[l] = t->nnodes++;
    t->node_of[r] = (*node_of_leader)[l];
    t->local_rank_of[r] = (*all)[2 * r + 1];
  }
  t->node = t->node_of[rank];
  t->node_offset.resize(t->nnodes + 1);  // capacity reserved: no allocation
  for (int r = 0; r < size; r++) t->node_offset[t->node_of[r] + 1]++;
  for (int n = 0; n < t->nnodes; n++) t->node_offset[n + 1] += t->node_offset[n];
  for (int n = 0; n < t->nnodes; n++) (*next)[n] = t->node_offset[n];
  for (int r = 0; r < size; r++) t->node_ranks[(*next)[t->node_of[r]]++] = r;
  STF_MPI(MPI_Comm_split(comm, t->local_rank, t->node, &t->lane_comm));
  MPI_Comm_set_errhandler(t->lane_comm, MPI_ERRORS_RETURN);
  return STF_SUCCESS;
}

// Whether the node communicator numbers each node's ranks in rank order
// (its key), as describe found them; `count` is scratch of one entry per
// rank. The same answer on every rank: `all` is allgathered.
bool ranks_in_order(int size, const std::vector<int> &all, std::vector<int> *count) {
  std::fill(count->begin(), count->end(), 0);
  for (int r = 0; r < size; r++)
    if (all[2 * r + 1] != (*count)[all[2 * r]]++) return false;
  return true;
}

// Collective. A rank that cannot allocate the topology (out of memory)
// still takes part in one allreduce before the others split the
// communicator, and every rank fails.
int make(MPI_Comm comm, int k, int earlier, std::unique_ptr<Topology> *out) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::unique_ptr<Topology> t;
  std::vector<int> all, node_of_leader, next;
  int rc = earlier;
  if (!rc) try {
      t = std::make_unique<Topology>();
      t->node_of.assign(size, 0);
      t->local_rank_of.assign(size, 0);
      t->node_ranks.assign(size, 0);
      t->node_offset.reserve(static_cast<std::size_t>(size) + 1);
      all.assign(2 * static_cast<std::size_t>(size), 0);
      node_of_leader.assign(size, -1);
      next.assign(size, 0);
    } catch (...) {
      rc = exception_error();
    }
  STF_CHECK(agree(comm, rc));
  t->ranks_per_node = k;
  if (k > 0) STF_MPI(MPI_Comm_split(comm, rank / k, rank, &t->node_comm));
  else STF_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &t->node_comm));
  MPI_Comm_set_errhandler(t->node_comm, MPI_ERRORS_RETURN);
  STF_CHECK(describe(comm, t->node_comm, t.get(), &all, &node_of_leader, &next));
  if (!ranks_in_order(size, all, &next)) {
    // SimGrid's SMPI orders MPI_Comm_split_type's ranks by their world rank,
    // not by the key; its MPI_Comm_split keeps the key.
    MPI_Comm ordered = MPI_COMM_NULL;
    STF_MPI(MPI_Comm_split(t->node_comm, 0, rank, &ordered));
    MPI_Comm_free(&t->node_comm);
    MPI_Comm_free(&t->lane_comm);
    t->node_comm = ordered;
    MPI_Comm_set_errhandler(t->node_comm, MPI_ERRORS_RETURN);
    std::fill(node_of_leader.begin(), node_of_leader.end(), -1);
    t->node_offset.clear();  // capacity kept: describe allocates nothing
    STF_CHECK(describe(comm, t->node_comm, t.get(), &all, &node_of_leader, &next));
  }
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
  // Every rank has made the same topologies on comm (each is made by all or
  // by none), so a rank that cannot even look its cache up (out of memory)
  // knows the others are making this one.
  Topologies *cache = nullptr;
  std::unique_ptr<Topology> *t = nullptr;
  int rc = STF_SUCCESS;
  try {
    rc = cached_on(comm, &cache);
    if (!rc) t = &cache->by_k[ranks_per_node];
  } catch (...) {
    rc = exception_error();
  }
  if (rc || !*t) {
    std::unique_ptr<Topology> made;
    STF_CHECK(make(comm, ranks_per_node, rc, &made));
    *t = std::move(made);
  }
  *out = t->get();
  return STF_SUCCESS;
}

}  // namespace stf
