#include "scatter_case.h"

#include "graphs.h"

namespace stft {

ScatterCase::ScatterCase(std::uint64_t seed, int trial, int me, int size, int max_owned, int max_need)
    : owned(size), first(size + 1, 0) {
  Rng shared(hash_key(seed, trial)), mine(hash_key(seed, trial, me + 1));
  for (int p = 0; p < size; p++) owned[p] = static_cast<stf_int>(shared.range(0, max_owned));
  for (int p = 0; p < size; p++) first[p + 1] = first[p] + owned[p];
  n = first[size];
  need.resize(n > 0 ? mine.range(0, max_need) : 0);
  for (stf_gint &g : need) g = static_cast<stf_gint>(mine.below(n));
}

std::vector<stf_int> ScatterCase::request_counts(MPI_Comm comm) const {
  int size;
  MPI_Comm_size(comm, &size);
  int nn = static_cast<int>(need.size());
  std::vector<int> nns(size), displs(size, 0);
  MPI_Allgather(&nn, 1, MPI_INT, nns.data(), 1, MPI_INT, comm);
  for (int p = 1; p < size; p++) displs[p] = displs[p - 1] + nns[p - 1];
  const int total = displs[size - 1] + nns[size - 1];
  std::vector<stf_gint> all_need(total + 1);
  std::vector<stf_int> counts(n, 0);
  MPI_Allgatherv(need.data(), nn, MPI_INT64_T, all_need.data(), nns.data(), displs.data(), MPI_INT64_T, comm);
  for (int k = 0; k < total; k++) counts[all_need[k]]++;
  return counts;
}

}  // namespace stft
