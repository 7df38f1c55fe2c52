/* A 26-neighbour halo on a periodic 3D grid (DMDA's global-to-local with a
 * box stencil): stf_grid splits a 24^3 grid over the ranks, the ghost
 * exchange runs split phase around the interior work, and the grid's SF
 * uses the neighbor transport (per-grid options).
 *
 * usage: mpiexec -n 4 grid_halo; exits 1 if a ghost value is wrong. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stf_apps.h>

#include "check.h"

enum { N = 24 };

static double value_at(int64_t x, int64_t y, int64_t z) { /* of a global point, wrapped */
  x = (x + N) % N, y = (y + N) % N, z = (z + N) % N;
  return (double)(x + N * (y + N * z));
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, wrong = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);

  stf_grid_desc desc = {3, {N, N, N}, {0, 0, 0}, {1, 1, 1}, STF_STENCIL_BOX, 1, 1, "-stf_type neighbor"};
  stf_grid grid;
  CHECK(stf_grid_create(MPI_COMM_WORLD, &desc, &grid));
  int64_t nglobal, nlocal, os[3], on[3], gs[3], gn[3];
  int nneighbors;
  const int *neighbors;
  CHECK(stf_grid_get_sizes(grid, &nglobal, &nlocal));
  CHECK(stf_grid_get_boxes(grid, os, on, gs, gn));
  CHECK(stf_grid_get_neighbors(grid, &nneighbors, &neighbors));
  double *global = malloc(sizeof(double) * nglobal), *local = malloc(sizeof(double) * nlocal);
  for (int64_t k = 0; k < on[2]; k++)
    for (int64_t j = 0; j < on[1]; j++)
      for (int64_t i = 0; i < on[0]; i++)
        global[(k * on[1] + j) * on[0] + i] = value_at(os[0] + i, os[1] + j, os[2] + k);

  /* Ghosts travel while the owned points are worked on. */
  stf_request req;
  double interior = 0;
  CHECK(stf_grid_global_to_local_begin(grid, global, local, &req));
  for (int64_t p = 0; p < nglobal; p++) interior += global[p];
  CHECK(stf_grid_global_to_local_end(grid, &req));

  for (int64_t k = 0; k < gn[2]; k++)
    for (int64_t j = 0; j < gn[1]; j++)
      for (int64_t i = 0; i < gn[0]; i++)
        wrong += local[(k * gn[1] + j) * gn[0] + i] != value_at(gs[0] + i, gs[1] + j, gs[2] + k);
  if (rank == 0)
    printf("rank 0: %lld owned points, %lld with ghosts, %d neighbours\n", (long long)nglobal, (long long)nlocal,
           nneighbors);

  free(global);
  free(local);
  CHECK(stf_grid_destroy(&grid));
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &interior, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("grid_halo: %s (sum of owned values %.0f)\n", wrong ? "WRONG" : "ok", interior);
  MPI_Finalize();
  return wrong != 0;
}
