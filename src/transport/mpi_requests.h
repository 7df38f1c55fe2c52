// Waiting for and testing a list of MPI requests, which the transports keep
// per channel; completed lists are emptied, so a later wait returns at once.
#pragma once

#include <vector>

#include "core/error.h"

namespace stf {

// MPICH 4.0 raises an error of MPI_Waitall (a truncated message, say) on
// MPI_COMM_WORLD's handler, fatal by default, not on the requests'
// communicator, whose handler returns; MPI_Wait uses the request's. So on
// MPICH every request is waited for on its own, all of them, the first
// error kept (what MPI_Waitall would have done).
inline int wait_all(std::vector<MPI_Request> *reqs) {
#if defined(MPICH_VERSION)
  int first_error = MPI_SUCCESS;
  for (MPI_Request &r : *reqs) {
    const int rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS && first_error == MPI_SUCCESS) first_error = rc;
  }
  if (first_error != MPI_SUCCESS) return mpi_error(first_error, "MPI_Wait");
#else
  if (!reqs->empty()) STF_MPI(MPI_Waitall(static_cast<int>(reqs->size()), reqs->data(), MPI_STATUSES_IGNORE));
#endif
  reqs->clear();
  return STF_SUCCESS;
}

inline int test_all(std::vector<MPI_Request> *reqs, bool *done) {
  int flag = 1;
  if (!reqs->empty()) STF_MPI(MPI_Testall(static_cast<int>(reqs->size()), reqs->data(), &flag, MPI_STATUSES_IGNORE));
  if (flag) reqs->clear();
  *done = flag != 0;
  return STF_SUCCESS;
}

}  // namespace stf
