// Vector scatter against a serial oracle: random owned sizes and random
// needed indices (repeats included); forward INSERT and ADD, reverse ADD,
// reverse INSERT where no entry is needed twice (refused on every rank
// otherwise), with double and a 2-double unit; to-all and to-zero
// scatters; general scatters between two layouts (PETSc's
// VecScatterCreate(x, ix, y, iy)); errors for bad modes and indices.
#include <algorithm>
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
    // Reverse INSERT: owned entry g takes the value of the one ghost naming
    // it; refused everywhere where some entry is named twice.
    const bool named_twice = std::any_of(counts.begin(), counts.end(), [](stf_int c) { return c > 1; });
    std::vector<double> back(need.size() * bs + 1), owned_after(acc);
    for (std::size_t i = 0; i < need.size(); i++)
      for (stf_int c = 0; c < bs; c++) back[i * bs + c] = 1000 + xval(need[i], c);
    const int rc = stf_vecscatter_reverse_begin(vs, unit, back.data(), owned_after.data(), STF_INSERT_VALUES, &req);
    ck.code(rc, named_twice ? STF_ERR_ARG : STF_SUCCESS, named_twice ? "reverse INSERT refused" : "reverse INSERT");
    if (rc == STF_SUCCESS) {
      ck.code(stf_vecscatter_reverse_end(vs, &req), STF_SUCCESS, "reverse INSERT end");
      for (stf_int i = 0; i < owned[me]; i++)
        for (stf_int c = 0; c < bs; c++) {
          const double want = counts[first[me] + i] ? 1000 + xval(first[me] + i, c) : acc[i * bs + c];
          ck.check(owned_after[i * bs + c] == want, "reverse INSERT, owned %d: expected %g got %g", first[me] + i,
                   want, owned_after[i * bs + c]);
        }
    }
    ck.code(stf_vecscatter_destroy(&vs), STF_SUCCESS, "destroy");
  }

  // To all and to zero: the whole vector on every rank, or on rank 0; back
  // from rank 0 with reverse INSERT (each entry named once), and reverse
  // INSERT from a to-all scatter refused where several ranks hold it.
  for (const bool all : {true, false}) {
    ck.context(all ? "to all" : "to zero");
    const stf_int mine = 3 + (me * 5) % 4;
    stf_int first = 0, total = 0;
    MPI_Exscan(&mine, &first, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0) first = 0;
    MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    stf_vecscatter vs = nullptr;
    const int made = all ? stf_vecscatter_create_to_all(MPI_COMM_WORLD, mine, &vs)
                         : stf_vecscatter_create_to_zero(MPI_COMM_WORLD, mine, &vs);
    if (!ck.code(made, STF_SUCCESS, "create")) continue;
    const stf_int n = all || me == 0 ? total : 0;
    std::vector<double> x(mine), whole(n + 1, -1.0);
    for (stf_int i = 0; i < mine; i++) x[i] = 2.0 * (first + i) + 1;
    stf_request req = nullptr;
    ck.code(stf_vecscatter_forward_begin(vs, MPI_DOUBLE, x.data(), whole.data(), STF_INSERT_VALUES, &req),
            STF_SUCCESS, "forward");
    ck.code(stf_vecscatter_forward_end(vs, &req), STF_SUCCESS, "forward_end");
    for (stf_int g = 0; g < n; g++) ck.check(whole[g] == 2.0 * g + 1, "entry %d: got %g", g, whole[g]);
    ck.check(whole[n] == -1.0, "written past the %d entries", n);
    for (stf_int g = 0; g < n; g++) whole[g] = -3.0 * g;
    const int rc = stf_vecscatter_reverse_begin(vs, MPI_DOUBLE, whole.data(), x.data(), STF_INSERT_VALUES, &req);
    const bool ambiguous = all && size > 1;
    ck.code(rc, ambiguous ? STF_ERR_ARG : STF_SUCCESS, "reverse INSERT");
    if (rc == STF_SUCCESS) {
      ck.code(stf_vecscatter_reverse_end(vs, &req), STF_SUCCESS, "reverse INSERT end");
      for (stf_int i = 0; i < mine; i++) ck.check(x[i] == -3.0 * (first + i), "owned %d: got %g", first + i, x[i]);
    }
    ck.code(stf_vecscatter_destroy(&vs), STF_SUCCESS, "destroy");
  }
  // General: x and y of different layouts, pairs (ix -> iy) named on
  // random ranks, each entry of y named once at most; forward INSERT and
  // ADD, reverse ADD, against the list of pairs every rank can rebuild.
  for (int trial = 0; trial < 6; trial++) {
    ck.context("general, trial " + std::to_string(trial));
    auto layout = [&](int salt, std::vector<stf_int> &count, std::vector<stf_int> &start) {
      count.assign(size, 0);
      start.assign(size + 1, 0);
      for (int r = 0; r < size; r++) count[r] = (r * salt + trial) % 5 + (trial % 3 == 0 && r == 0 ? 0 : 1);
      for (int r = 0; r < size; r++) start[r + 1] = start[r] + count[r];
    };
    std::vector<stf_int> nx, fx, ny, fy;
    layout(3, nx, fx);
    layout(7, ny, fy);
    // The same pseudo-random pairs on every rank: y entry j is named with
    // probability about 2/3, by rank (j + trial) % size, reading x[src[j]].
    std::vector<stf_gint> src(fy[size], -1), ix, iy;
    std::uint64_t state = seed * 31 + trial;
    auto next = [&state](std::uint64_t m) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      return (state >> 33) % m;
    };
    for (stf_gint j = 0; j < fy[size]; j++)
      if (next(3) && fx[size] > 0) src[j] = static_cast<stf_gint>(next(fx[size]));
    for (stf_gint j = 0; j < fy[size]; j++)
      if (src[j] >= 0 && (j + trial) % size == me) ix.push_back(src[j]), iy.push_back(j);
    stf_vecscatter vs = nullptr;
    if (!ck.code(stf_vecscatter_create_general(MPI_COMM_WORLD, nx[me], ny[me], static_cast<stf_int>(ix.size()),
                                                ix.data(), iy.data(), &vs),
                 STF_SUCCESS, "create_general"))
      continue;
    std::vector<double> x(nx[me] + 1), y(ny[me] + 1, -1.0);
    for (stf_int i = 0; i < nx[me]; i++) x[i] = 1.0 + fx[me] + i;
    for (stf_insert_mode mode : {STF_INSERT_VALUES, STF_ADD_VALUES}) {
      stf_request req = nullptr;
      ck.code(stf_vecscatter_forward_begin(vs, MPI_DOUBLE, x.data(), y.data(), mode, &req), STF_SUCCESS, "forward");
      ck.code(stf_vecscatter_forward_end(vs, &req), STF_SUCCESS, "forward_end");
      for (stf_int i = 0; i < ny[me]; i++) {
        const stf_gint j = fy[me] + i;
        const double want = src[j] < 0 ? -1.0 : (mode == STF_INSERT_VALUES ? 1.0 : 2.0) * (1.0 + src[j]);
        ck.check(y[i] == want, "y %lld: expected %g got %g", static_cast<long long>(j), want, y[i]);
      }
    }
    // Reverse ADD of ones: x[g] gains the number of pairs reading it.
    std::vector<double> ones(ny[me] + 1, 1.0), acc(nx[me] + 1, 0.0);
    stf_request req = nullptr;
    ck.code(stf_vecscatter_reverse_begin(vs, MPI_DOUBLE, ones.data(), acc.data(), STF_ADD_VALUES, &req), STF_SUCCESS,
            "reverse");
    ck.code(stf_vecscatter_reverse_end(vs, &req), STF_SUCCESS, "reverse_end");
    for (stf_int i = 0; i < nx[me]; i++) {
      const double want = static_cast<double>(std::count(src.begin(), src.end(), fx[me] + i));
      ck.check(acc[i] == want, "x %d: expected %g got %g", fx[me] + i, want, acc[i]);
    }
    ck.code(stf_vecscatter_destroy(&vs), STF_SUCCESS, "destroy");
  }
  {
    // An entry of y named twice (by every rank) is refused on every rank;
    // an index of x outside it too.
    ck.context("general, errors");
    stf_vecscatter vs = nullptr;
    stf_gint zero = 0, far = stf_gint(1) << 40;
    const int twice = size > 1 ? STF_ERR_DUPLICATE : STF_SUCCESS;
    ck.code(stf_vecscatter_create_general(MPI_COMM_WORLD, 1, 1, 1, &zero, &zero, &vs), twice, "y entry named twice");
    stf_vecscatter_destroy(&vs);
    ck.code(stf_vecscatter_create_general(MPI_COMM_WORLD, 1, 1, me == 0 ? 1 : 0, &far, &zero, &vs), STF_ERR_ARG,
            "x index outside x");
    ck.code(stf_vecscatter_create_general(MPI_COMM_WORLD, 1, 1, me == 0 ? -1 : 0, &zero, &zero, &vs), STF_ERR_ARG,
            "negative count on one rank");
    ck.code(stf_vecscatter_create_general(MPI_COMM_WORLD, 1, 1, me == 0 ? 1 : 0, &zero, &far, &vs), STF_ERR_ARG,
            "y index outside y");
    ck.code(stf_vecscatter_create_general(MPI_COMM_WORLD, 1, 1, me == 0 ? 1 : 0, nullptr, &zero, &vs),
            STF_ERR_NULL, "ix NULL on one rank (every rank fails)");
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
