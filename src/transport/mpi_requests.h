// Waiting for and testing a list of MPI requests, which the transports keep
// per channel; completed lists are emptied, so a later wait returns at once.
#pragma once

#include <vector>

#include "core/error.h"

namespace stf {

inline int wait_all(std::vector<MPI_Request> *reqs) {
  if (!reqs->empty()) STF_MPI(MPI_Waitall(static_cast<int>(reqs->size()), reqs->data(), MPI_STATUSES_IGNORE));
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
