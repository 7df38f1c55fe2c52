#include "ring_case.h"

#include <vector>

namespace stft {

stf_sf ring_sf(Checker &ck, stf_int n, const char *options) {
  int me = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  std::vector<stf_node> remote(n);
  for (stf_int i = 0; i < n; i++) remote[i] = {(me + 1) % nranks, i};
  stf_sf sf = nullptr;
  if (!ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "stf_create")) return nullptr;
  if (options) ck.code(stf_set_sf_options(sf, options), STF_SUCCESS, options);
  ck.code(stf_set_graph(sf, n, n, nullptr, STF_COPY_VALUES, remote.data(), STF_COPY_VALUES), STF_SUCCESS,
          "stf_set_graph");
  return sf;
}

void check_ring_works(Checker &ck, stf_sf sf, stf_int n) {
  int me = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  const int next = (me + 1) % nranks;
  std::vector<int> roots(n), leaves(n, -1);
  for (stf_int i = 0; i < n; i++) roots[i] = 1000 * me + i;
  ck.code(stf_bcast(sf, MPI_INT, roots.data(), leaves.data(), MPI_REPLACE), STF_SUCCESS, "bcast afterwards");
  int wrong = 0;
  for (stf_int i = 0; i < n; i++) wrong += leaves[i] != 1000 * next + i;
  ck.check(wrong == 0, "bcast afterwards: %d wrong leaves", wrong);
  ck.code(stf_reduce(sf, MPI_INT, leaves.data(), roots.data(), MPI_SUM), STF_SUCCESS, "reduce afterwards");
  wrong = 0;
  for (stf_int i = 0; i < n; i++) wrong += roots[i] != 2 * (1000 * me + i);
  ck.check(wrong == 0, "reduce afterwards: %d wrong roots", wrong);
}

}  // namespace stft
