// Ping-pong through a two-rank PetscSF and a starforest SF of the same graph:
// rank 0 owns n roots, rank 1 owns n contiguous leaves on them. A round trip
// is bcast then reduce (MPI_REPLACE, MPI_DOUBLE units); one-way latency =
// round trip / 2. MPI_Send/MPI_Recv of the same bytes is the baseline.
#include <starforest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "check.h"
#include "compare.h"

namespace {

struct Pair {
  PetscSF petsc = nullptr;
  stf_sf stf = nullptr;
};

Pair make_pair_sf(int rank, PetscInt n) {
  Pair p;
  PetscInt nroots = rank == 0 ? n : 0, nleaves = rank == 1 ? n : 0;
  std::vector<PetscSFNode> premote(nleaves);
  std::vector<stf_node> sremote(nleaves);
  for (PetscInt i = 0; i < nleaves; ++i) {
    premote[i].rank = 0;
    premote[i].index = i;
    sremote[i] = stf_node{0, (stf_int)i};
  }
  CHECK_PETSC(PetscSFCreate(PETSC_COMM_WORLD, &p.petsc));
  CHECK_PETSC(PetscSFSetGraph(p.petsc, nroots, nleaves, nullptr, PETSC_COPY_VALUES, premote.data(),
                              PETSC_COPY_VALUES));
  CHECK_PETSC(PetscSFSetUp(p.petsc));
  CHECK_STF(stf_create(MPI_COMM_WORLD, &p.stf));
  CHECK_STF(stf_set_graph(p.stf, (stf_int)nroots, (stf_int)nleaves, nullptr, STF_COPY_VALUES, sremote.data(),
                          STF_COPY_VALUES));
  CHECK_STF(stf_setup(p.stf));
  return p;
}

void petsc_roundtrip(PetscSF sf, double *root, double *leaf) {
  CHECK_PETSC(PetscSFBcastBegin(sf, MPI_DOUBLE, root, leaf, MPI_REPLACE));
  CHECK_PETSC(PetscSFBcastEnd(sf, MPI_DOUBLE, root, leaf, MPI_REPLACE));
  CHECK_PETSC(PetscSFReduceBegin(sf, MPI_DOUBLE, leaf, root, MPI_REPLACE));
  CHECK_PETSC(PetscSFReduceEnd(sf, MPI_DOUBLE, leaf, root, MPI_REPLACE));
}

void stf_roundtrip(stf_sf sf, double *root, double *leaf) {
  CHECK_STF(stf_bcast(sf, MPI_DOUBLE, root, leaf, MPI_REPLACE));
  CHECK_STF(stf_reduce(sf, MPI_DOUBLE, leaf, root, MPI_REPLACE));
}

void mpi_roundtrip(int rank, double *buf, int n) {
  if (rank == 0) {
    MPI_Send(buf, n, MPI_DOUBLE, 1, 5, MPI_COMM_WORLD);
    MPI_Recv(buf, n, MPI_DOUBLE, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(buf, n, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(buf, n, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD);
  }
}

// Both SFs must carry root values to the leaves and leaf values back.
void verify(int rank, const std::function<void(double *, double *)> &roundtrip, PetscInt n, const char *who) {
  std::vector<double> root(n), leaf(n, 0.0);
  for (PetscInt i = 0; i < n; ++i) root[i] = rank == 0 ? 3.0 * i + 1 : 0.0;
  roundtrip(root.data(), leaf.data());  // leaf = root, then root = leaf: unchanged on rank 0
  long bad = 0;
  for (PetscInt i = 0; i < n; ++i) bad += rank == 1 ? leaf[i] != 3.0 * i + 1 : root[i] != 3.0 * i + 1;
  if (bad) {
    std::fprintf(stderr, "petsc_compare pingpong: %s: rank %d: %ld wrong values at n=%ld\n", who, rank, bad,
                 (long)n);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

}  // namespace

void compare_pingpong(const CompareOptions &o, bench::JsonLog &log) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) std::printf("# pingpong: needs 2 ranks, skipped on %d\n", size);
    return;
  }
  if (rank == 0) {
    std::printf("\n# pingpong: 2 ranks, bcast+reduce (MPI_REPLACE, doubles); one-way latency (us), median of %d "
                "rounds [min..max]\n",
                o.rounds);
    std::printf("%10s %24s %24s %24s %9s %9s\n", "size(B)", "mpi", "petsc", "starforest", "stf/petsc",
                "stf/mpi");
  }
  for (long bytes = 8; bytes <= o.max_size; bytes *= 2) {
    PetscInt n = (PetscInt)(bytes / 8);
    Pair p = make_pair_sf(rank, n);
    std::vector<double> root(n, 1.0), leaf(n, 0.0);
    verify(rank, [&](double *r, double *l) { petsc_roundtrip(p.petsc, r, l); }, n, "petsc");
    verify(rank, [&](double *r, double *l) { stf_roundtrip(p.stf, r, l); }, n, "starforest");
    double *buf = rank == 0 ? root.data() : leaf.data();
    long iters = std::max(1L, std::lround((bytes > 8192 ? 1000 : 10000) * o.iters_scale / o.rounds));
    std::vector<bench::Stats> st = bench::time_rotating(
        MPI_COMM_WORLD, o.rounds, iters,
        {[&] { mpi_roundtrip(rank, buf, (int)n); }, [&] { petsc_roundtrip(p.petsc, root.data(), leaf.data()); },
         [&] { stf_roundtrip(p.stf, root.data(), leaf.data()); }});
    for (auto &s : st) s.us /= 2, s.min_us /= 2, s.max_us /= 2;  // one way
    const char *impl[3] = {"mpi", "petsc", "starforest"};
    for (int k = 0; k < 3; ++k) {
      bench::Record r;
      r.timing("petsc_pingpong", impl[k], bytes, 2, st[k])
          .str("memory", "host")
          .str("transport", k == 2 ? "basic" : k == 1 ? "petscsf-basic" : "none")
          .num("ratio_to_petsc", st[k].us / st[1].us);
      log.add(r);
    }
    if (rank == 0)
      std::printf("%10ld %24s %24s %24s %9.2f %9.2f\n", bytes, bench::range_text(st[0]).c_str(),
                  bench::range_text(st[1]).c_str(), bench::range_text(st[2]).c_str(), st[2].us / st[1].us,
                  st[2].us / st[0].us);
    CHECK_PETSC(PetscSFDestroy(&p.petsc));
    CHECK_STF(stf_destroy(&p.stf));
  }
}
