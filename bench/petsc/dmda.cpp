// Structured-grid ghost update: a 2D periodic grid, star stencil, width 1,
// one value per point, global-to-local through a PETSc DMDA and through
// starforest stf_grids on the same process grid: one with the default
// options, one on putsignal.
#include <starforest.h>
#include <stf_apps.h>

#include <cstdio>
#include <cstdint>
#include <string>

#include "check.h"
#include "compare.h"

namespace {

double value(int64_t i, int64_t j, int64_t n) { return (double)(((i % n + n) % n) + n * ((j % n + n) % n)); }

// Checks a ghosted box (start gx, gy; size gnx x gny) against the global
// values, skipping the corners, which a star stencil does not fill.
long count_wrong(const double *local, int64_t gx, int64_t gy, int64_t gnx, int64_t gny, int64_t ox, int64_t oy,
                 int64_t onx, int64_t ony, int64_t n) {
  long bad = 0;
  for (int64_t j = gy; j < gy + gny; ++j)
    for (int64_t i = gx; i < gx + gnx; ++i) {
      bool out_x = i < ox || i >= ox + onx, out_y = j < oy || j >= oy + ony;
      if (out_x && out_y) continue;
      bad += local[(j - gy) * gnx + (i - gx)] != value(i, j, n);
    }
  return bad;
}

}  // namespace

void compare_dmda(const CompareOptions &o, bench::JsonLog &log) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const PetscInt n = o.n2d;

  DM da;
  CHECK_PETSC(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_PERIODIC, DM_BOUNDARY_PERIODIC, DMDA_STENCIL_STAR, n, n,
                           PETSC_DECIDE, PETSC_DECIDE, 1, 1, nullptr, nullptr, &da));
  CHECK_PETSC(DMSetUp(da));
  PetscInt px, py;
  CHECK_PETSC(DMDAGetInfo(da, nullptr, nullptr, nullptr, nullptr, &px, &py, nullptr, nullptr, nullptr, nullptr,
                          nullptr, nullptr, nullptr));
  Vec pg, pl;
  CHECK_PETSC(DMCreateGlobalVector(da, &pg));
  CHECK_PETSC(DMCreateLocalVector(da, &pl));
  PetscInt xs, ys, xm, ym, gxs, gys, gxm, gym;
  CHECK_PETSC(DMDAGetCorners(da, &xs, &ys, nullptr, &xm, &ym, nullptr));
  CHECK_PETSC(DMDAGetGhostCorners(da, &gxs, &gys, nullptr, &gxm, &gym, nullptr));

  // The same process grid for starforest.
  stf_grid_desc desc{};
  desc.dim = 2;
  desc.n[0] = desc.n[1] = n;
  desc.n[2] = 1;
  desc.procs[0] = (int)px;
  desc.procs[1] = (int)py;
  desc.procs[2] = 1;
  desc.periodic[0] = desc.periodic[1] = 1;
  desc.stencil = STF_STENCIL_STAR;
  desc.width = 1;
  desc.dof = 1;
  // The grid with the default options (basic, or what $STF_OPTIONS says),
  // and one on putsignal: a node's ranks put into each other's heap.
  stf_grid grids[2];
  const char *types[2];
  for (int g = 0; g < 2; ++g) {
    desc.options = g ? "-stf_type putsignal" : nullptr;
    if (stf_grid_create(MPI_COMM_WORLD, &desc, &grids[g]) != STF_SUCCESS) {
      std::fprintf(stderr, "petsc_compare dmda: stf_grid_create: %s\n", stf_last_error_message());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    stf_sf sf;
    MPI_Datatype unit;
    if (stf_grid_get_sf(grids[g], &sf, &unit) != STF_SUCCESS || stf_get_type(sf, &types[g]) != STF_SUCCESS)
      MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int64_t os[3], on[3], gs[3], gn[3];
  if (stf_grid_get_boxes(grids[0], os, on, gs, gn) != STF_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 1);
  int same = os[0] == xs && os[1] == ys && on[0] == xm && on[1] == ym, all_same = 0;
  MPI_Allreduce(&same, &all_same, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);

  // Same global values in both; check both local vectors.
  PetscScalar *a;
  CHECK_PETSC(VecGetArray(pg, &a));
  for (PetscInt j = 0; j < ym; ++j)
    for (PetscInt i = 0; i < xm; ++i) a[j * xm + i] = value(xs + i, ys + j, n);
  CHECK_PETSC(VecRestoreArray(pg, &a));
  const std::vector<double> unset(gn[0] * gn[1], -1.0);
  std::vector<double> sg(on[0] * on[1]), sl[2] = {unset, unset};  // a local vector per grid
  for (int64_t j = 0; j < on[1]; ++j)
    for (int64_t i = 0; i < on[0]; ++i) sg[j * on[0] + i] = value(os[0] + i, os[1] + j, n);

  auto petsc_g2l = [&] {
    CHECK_PETSC(DMGlobalToLocalBegin(da, pg, INSERT_VALUES, pl));
    CHECK_PETSC(DMGlobalToLocalEnd(da, pg, INSERT_VALUES, pl));
  };
  auto stf_g2l = [&](int g) {  // grid g's global-to-local into its own local vector
    return [&, g] {
      if (stf_grid_global_to_local(grids[g], sg.data(), sl[g].data()) != STF_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 1);
    };
  };
  petsc_g2l();
  long totals[3], sum[3];
  for (int g = 0; g < 2; ++g) {
    stf_g2l(g)();
    totals[1 + g] = count_wrong(sl[g].data(), gs[0], gs[1], gn[0], gn[1], os[0], os[1], on[0], on[1], n);
  }
  const PetscScalar *la;
  CHECK_PETSC(VecGetArrayRead(pl, &la));
  totals[0] = count_wrong(la, gxs, gys, gxm, gym, xs, ys, xm, ym, n);
  CHECK_PETSC(VecRestoreArrayRead(pl, &la));
  MPI_Allreduce(totals, sum, 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (sum[0] || sum[1] || sum[2]) {
    if (rank == 0)
      std::fprintf(stderr, "petsc_compare dmda: wrong ghost values: petsc %ld, starforest %s %ld, %s %ld\n", sum[0],
                   types[0], sum[1], types[1], sum[2]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  std::vector<bench::Stats> st =
      bench::time_rotating(MPI_COMM_WORLD, o.rounds, o.iters, {petsc_g2l, stf_g2l(0), stf_g2l(1)});
  const char *impl[3] = {"petsc", "starforest", "starforest"};
  const char *transport[3] = {"petscsf-basic", types[0], types[1]};
  for (int k = 0; k < 3; ++k) {
    bench::Record r;
    r.timing("petsc_dmda", impl[k], n, size, st[k])
        .str("memory", "host")
        .str("stencil", "star")
        .integer("width", 1)
        .integer("dim", 2)
        .str("transport", transport[k])
        .integer("same_partition", all_same)
        .num("ratio_to_petsc", st[k].us / st[0].us);
    log.add(r);
  }
  if (rank == 0) {
    std::printf("\n# dmda: %dx%d periodic, star stencil width 1, %d ranks (%dx%d), owned boxes %s; "
                "global-to-local (us per call, slowest rank), median of %d rounds of %d\n",
                (int)n, (int)n, size, (int)px, (int)py, all_same ? "identical" : "DIFFER", o.rounds, o.iters);
    std::printf("%8s %24s %24s %24s %9s %9s\n", "n", "petsc", (std::string("starforest ") + types[0]).c_str(),
                (std::string("starforest ") + types[1]).c_str(), "stf/petsc", "put/petsc");
    std::printf("%8d %24s %24s %24s %9.2f %9.2f\n", (int)n, bench::range_text(st[0]).c_str(),
                bench::range_text(st[1]).c_str(), bench::range_text(st[2]).c_str(), st[1].us / st[0].us,
                st[2].us / st[0].us);
  }
  for (stf_grid &g : grids) stf_grid_destroy(&g);
  CHECK_PETSC(VecDestroy(&pg));
  CHECK_PETSC(VecDestroy(&pl));
  CHECK_PETSC(DMDestroy(&da));
}
