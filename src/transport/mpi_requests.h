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
// With `statuses`, each request's status is kept there (a received
// message's size), in the requests' order.
inline int wait_all(std::vector<MPI_Request> *reqs, std::vector<MPI_Status> *statuses = nullptr) {
  if (statuses) statuses->resize(reqs->size());
#if defined(MPICH_VERSION)
  int first_error = MPI_SUCCESS;
  for (std::size_t k = 0; k < reqs->size(); k++) {
    const int rc = MPI_Wait(&(*reqs)[k], statuses ? &(*statuses)[k] : MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS && first_error == MPI_SUCCESS) first_error = rc;
  }
  if (first_error != MPI_SUCCESS) return mpi_error(first_error, "MPI_Wait");
#else
  if (!reqs->empty())
    STF_MPI(MPI_Waitall(static_cast<int>(reqs->size()), reqs->data(),
                        statuses ? statuses->data() : MPI_STATUSES_IGNORE));
#endif
  reqs->clear();
  return STF_SUCCESS;
}

inline int test_all(std::vector<MPI_Request> *reqs, bool *done, std::vector<MPI_Status> *statuses = nullptr) {
  int flag = 1;
  if (statuses) statuses->resize(reqs->size());
  if (!reqs->empty())
    STF_MPI(MPI_Testall(static_cast<int>(reqs->size()), reqs->data(), &flag,
                        statuses ? statuses->data() : MPI_STATUSES_IGNORE));
  if (flag) reqs->clear();
  *done = flag != 0;
  return STF_SUCCESS;
}

}  // namespace stf
