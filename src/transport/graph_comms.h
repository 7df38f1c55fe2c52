// Distributed-graph communicators shared between SFs. The neighbor
// transport needs two per SF; SFs of one communicator whose peers are the
// same (a duplicate, a multi-SF, an SF rebuilt each time step) share them,
// so thousands of SFs do not use up the MPI library's communicator ids.
// Sharing is agreed by all ranks: a rank's own peers matching is not enough,
// every rank's must match the same communicator.
#pragma once

#include <vector>

#include "starforest.h"

namespace stf {

// Collective over comm: a communicator whose neighbours receive from
// sources and send to destinations (unweighted, not reordered, errors
// returned), shared with earlier callers that asked for the same on every
// rank. Give it back with release_graph_comm.
int acquire_graph_comm(MPI_Comm comm, const std::vector<int> &sources, const std::vector<int> &destinations,
                       MPI_Comm *out);
// The last user frees it.
void release_graph_comm(MPI_Comm comm, MPI_Comm graph);

}  // namespace stf
