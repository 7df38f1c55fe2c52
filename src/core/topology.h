// Node topology of a communicator: which ranks share a node (shared memory,
// MPI_COMM_TYPE_SHARED), or, with -stf_ranks_per_node K, emulated nodes of K
// consecutive ranks on one host (so node-aware code paths can be tested
// without a cluster). Nodes are numbered by their lowest rank, so node 0
// holds rank 0; a node may hold any number of ranks. Made once per (shared
// communicator, K) and cached on the communicator with its node and lane
// communicators; every SF on it uses the same object.
#pragma once

#include <vector>

#include "starforest.h"

namespace stf {

struct Topology {
  int ranks_per_node = 0;  // K of -stf_ranks_per_node; 0: the nodes MPI reports
  int nnodes = 1;
  int node = 0;                   // mine
  int local_rank = 0, local_size = 1;
  std::vector<int> node_of;       // per rank of the communicator
  std::vector<int> local_rank_of;  // per rank: its rank on its node
  std::vector<int> node_offset;    // node n holds ranks node_ranks[node_offset[n] .. node_offset[n+1])
  std::vector<int> node_ranks;     //   in rank order
  MPI_Comm node_comm = MPI_COMM_NULL;  // the ranks of my node, by local rank
  MPI_Comm lane_comm = MPI_COMM_NULL;  // one rank per node: those with my local rank, by node

  int node_size(int n) const { return node_offset[n + 1] - node_offset[n]; }
  bool same_node(int rank) const { return node_of[rank] == node; }
  Topology() = default;
  Topology(const Topology &) = delete;
  Topology &operator=(const Topology &) = delete;
  ~Topology();
};

// Collective over comm the first time for a given K (SF set-up): the
// topology with nodes of K consecutive ranks (K > 0) or the shared-memory
// nodes (K == 0), cached on comm for its life.
int topology_of(MPI_Comm comm, int ranks_per_node, const Topology **out);

}  // namespace stf
