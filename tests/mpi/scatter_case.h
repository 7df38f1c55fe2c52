// A random vector-scatter problem for the vecscatter tests (host and device
// data): contiguous ownership with random sizes, and on each rank random
// needed global indices (repeats included).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "starforest.h"

namespace stft {

struct ScatterCase {
  std::vector<stf_int> owned;  // entries owned per rank (the same on every rank)
  std::vector<stf_int> first;  // first global index per rank; first[size] = n
  std::vector<stf_gint> need;  // this rank's needed global indices
  stf_int n = 0;

  // Owned sizes in [0, max_owned], up to max_need needed indices; trial
  // picks the problem, which every rank derives alike from seed.
  ScatterCase(std::uint64_t seed, int trial, int me, int size, int max_owned, int max_need);
  // Oracle of a reverse ADD of ones: how often each global index is needed
  // over all ranks of comm. Collective.
  std::vector<stf_int> request_counts(MPI_Comm comm) const;
};

}  // namespace stft
