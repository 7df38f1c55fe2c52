// Vector scatter against a serial oracle: random owned sizes and random
// needed indices (repeats included); forward INSERT and ADD, reverse ADD,
// with double and a 2-double unit; errors for bad modes and indices.
#include <string>
#include <vector>

#include "check.h"
#include "scatter_case.h"
#include "stf_apps.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::uint64_t seed = stft::parse_seed(argc, argv, 7);
  stft::Checker ck("test_vecscatter", seed);
  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_DOUBLE, &pair);
  MPI_Type_commit(&pair);

  for (int trial = 0; trial < 20; trial++) {
    ck.context("trial " + std::to_string(trial));
    const stft::ScatterCase sc(seed, trial, me, size, 12, 20);
    const std::vector<stf_int> &owned = sc.owned, &first = sc.first;
    const std::vector<stf_gint> &need = sc.need;
    const stf_int bs = trial % 2 ? 2 : 1;
    MPI_Datatype unit = bs == 2 ? pair : MPI_DOUBLE;

    stf_vecscatter vs = nullptr;
    if (!ck.code(stf_vecscatter_create(MPI_COMM_WORLD, owned[me], static_cast<stf_int>(need.size()), need.data(), &vs),
                 STF_SUCCESS, "create"))
      continue;
    auto xval = [](stf_gint g, stf_int c) { return 10.0 * static_cast<double>(g) + c; };
    std::vector<double> x(owned[me] * bs + 1), ghost(need.size() * bs + 1, 0.5);
    for (stf_int i = 0; i < owned[me]; i++)
      for (stf_int c = 0; c < bs; c++) x[i * bs + c] = xval(first[me] + i, c);
    for (stf_insert_mode mode : {STF_INSERT_VALUES, STF_ADD_VALUES}) {
      stf_request req = nullptr;
      ck.code(stf_vecscatter_forward_begin(vs, unit, x.data(), ghost.data(), mode, &req), STF_SUCCESS, "forward");
      ck.code(stf_vecscatter_forward_end(vs, &req), STF_SUCCESS, "forward_end");
      for (std::size_t i = 0; i < need.size(); i++)
        for (stf_int c = 0; c < bs; c++) {
          double want = mode == STF_INSERT_VALUES ? xval(need[i], c) : 2 * xval(need[i], c);
          ck.check(ghost[i * bs + c] == want, "ghost %zu: expected %g got %g", i, want, ghost[i * bs + c]);
        }
    }
    // Reverse ADD: owned entry g gains 1 per request of g anywhere.
    const std::vector<stf_int> counts = sc.request_counts(MPI_COMM_WORLD);
    std::vector<double> ones(need.size() * bs + 1, 1.0), acc(owned[me] * bs + 1, 0.0);
    stf_request req = nullptr;
    ck.code(stf_vecscatter_reverse_begin(vs, unit, ones.data(), acc.data(), STF_ADD_VALUES, &req), STF_SUCCESS,
            "reverse");
    ck.code(stf_vecscatter_reverse_end(vs, &req), STF_SUCCESS, "reverse_end");
    for (stf_int i = 0; i < owned[me]; i++)
      for (stf_int c = 0; c < bs; c++)
        ck.check(acc[i * bs + c] == counts[first[me] + i], "owned %d: expected %d got %g", first[me] + i,
                 counts[first[me] + i], acc[i * bs + c]);
    ck.code(stf_vecscatter_reverse_begin(vs, unit, ones.data(), acc.data(), STF_INSERT_VALUES, &req), STF_ERR_ARG,
            "reverse INSERT refused");
    ck.code(stf_vecscatter_destroy(&vs), STF_SUCCESS, "destroy");
  }
  ck.context("errors");
  stf_vecscatter vs = nullptr;
  stf_gint bad = stf_gint(1) << 40;
  ck.code(stf_vecscatter_create(MPI_COMM_WORLD, 1, 1, &bad, &vs), STF_ERR_ARG, "index outside the vector");
  MPI_Type_free(&pair);
  int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
