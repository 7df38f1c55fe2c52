/* A fixed number of small operations, for counting starforest's own
 * instructions per operation (scripts/compare-instructions runs it under
 * callgrind): timings on a shared machine are noisy, instruction counts of
 * the same code on the same input are not.
 *   op_loop ring N   2+ ranks: a ring, one 8-byte double per rank; N times a
 *                    bcast (REPLACE) and a reduce (SUM)
 *   op_loop prepared N  the same ring by prepared requests: made once, then
 *                    N times started and ended
 *   op_loop fresh N  the ring's bcast and reduce, each iteration on the next
 *                    of 16 pairs of arrays: no begin repeats a recent one's
 *                    arguments (the cost of a begin that is never repeated)
 *   op_loop ring|fresh|prepared N settled   with an MPI_Barrier between each begin
 *                    (or start) and its end: the messages have come before
 *                    the end looks, so a transport that polls (putsignal)
 *                    counts no polls, whose number depends on timing
 *   op_loop grid N   stf_grid 2D 5-point 256 x 256, periodic; N times a
 *                    global-to-local and a local-to-global */
#include <starforest.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stf_apps.h"

/* The ring's SF: leaf 0 of each rank reads root 0 of the next. */
static int ring_sf(stf_sf *sf, int *rank) {
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  stf_node remote = {(*rank + 1) % size, 0};
  return stf_create(MPI_COMM_WORLD, sf) || stf_set_graph(*sf, 1, 1, NULL, STF_COPY_VALUES, &remote, STF_COPY_VALUES);
}

static int settled;  /* a barrier between each begin and its end */

static void settle(void) {
  if (settled) MPI_Barrier(MPI_COMM_WORLD);
}

/* The ring's bcast and reduce, iteration i on pair i % pairs of root and
 * leaf arrays (ring: one pair; fresh: more pairs than an SF keeps begins
 * for, docs/design/operations.md). */
static int ring(int iters, int pairs) {
  int rank;
  stf_sf sf;
  if (ring_sf(&sf, &rank)) return 1;
  double *root = malloc(2 * (size_t)pairs * sizeof(double)), *leaf = root + pairs;
  if (!root) {
    stf_destroy(&sf);
    return 1;
  }
  for (int p = 0; p < pairs; p++) root[p] = rank, leaf[p] = -1;
  int rc = 0;
  for (int i = 0; i < iters && !rc; i++) {
    double *r = &root[i % pairs], *l = &leaf[i % pairs];
    if (!settled) {
      rc = stf_bcast(sf, MPI_DOUBLE, r, l, MPI_REPLACE);
      if (!rc) rc = stf_reduce(sf, MPI_DOUBLE, l, r, MPI_SUM);
      continue;
    }
    stf_request req = NULL;
    rc = stf_bcast_begin(sf, MPI_DOUBLE, r, l, MPI_REPLACE, &req);
    settle();
    if (!rc) rc = stf_bcast_end(sf, &req);
    if (!rc) rc = stf_reduce_begin(sf, MPI_DOUBLE, l, r, MPI_SUM, &req);
    settle();
    if (!rc) rc = stf_reduce_end(sf, &req);
  }
  stf_destroy(&sf);
  free(root);
  return rc;
}

static int prepared(int iters) {
  int rank;
  stf_sf sf;
  if (ring_sf(&sf, &rank)) return 1;
  double root = rank, leaf = -1;
  stf_request bcast = NULL, reduce = NULL;
  int rc = stf_bcast_init(sf, MPI_DOUBLE, &root, &leaf, MPI_REPLACE, &bcast);
  if (!rc) rc = stf_reduce_init(sf, MPI_DOUBLE, &leaf, &root, MPI_SUM, &reduce);
  for (int i = 0; i < iters && !rc; i++) {
    rc = stf_start(sf, &bcast);
    settle();
    if (!rc) rc = stf_bcast_end(sf, &bcast);
    if (!rc) rc = stf_start(sf, &reduce);
    settle();
    if (!rc) rc = stf_reduce_end(sf, &reduce);
  }
  if (bcast) stf_request_free(sf, &bcast);
  if (reduce) stf_request_free(sf, &reduce);
  stf_destroy(&sf);
  return rc;
}

static int grid(int iters) {
  stf_grid_desc d = {2, {256, 256, 1}, {0, 0, 0}, {1, 1, 0}, STF_STENCIL_STAR, 1, 1, NULL};
  stf_grid g;
  if (stf_grid_create(MPI_COMM_WORLD, &d, &g)) return 1;
  int64_t os[3], on[3], gs[3], gn[3];
  stf_grid_get_boxes(g, os, on, gs, gn);
  double *global = calloc((size_t)(on[0] * on[1]), sizeof(double));
  double *local = calloc((size_t)(gn[0] * gn[1]), sizeof(double));
  int rc = !global || !local;
  for (int i = 0; i < iters && !rc; i++) {
    rc = stf_grid_global_to_local(g, global, local);
    if (!rc) rc = stf_grid_local_to_global(g, local, global);
  }
  stf_grid_destroy(&g);
  free(global);
  free(local);
  return rc;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const int iters = argc > 2 ? atoi(argv[2]) : 1000;
  settled = argc > 3 && strcmp(argv[3], "settled") == 0;
  int rc = 2;
  if (argc > 1 && strcmp(argv[1], "ring") == 0) rc = ring(iters, 1);
  if (argc > 1 && strcmp(argv[1], "grid") == 0) rc = grid(iters);
  if (argc > 1 && strcmp(argv[1], "fresh") == 0) rc = ring(iters, 16);
  if (argc > 1 && strcmp(argv[1], "prepared") == 0) rc = prepared(iters);
  if (rc) fprintf(stderr, "op_loop %s: failed (%s)\n", argc > 1 ? argv[1] : "", stf_last_error_message());
  MPI_Finalize();
  return rc;
}
