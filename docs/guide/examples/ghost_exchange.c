/* An unstructured ghost exchange, as a PETSc code does it with a VecScatter
 * from its global vector to a local one with ghosts.
 *
 * A periodic chain of cells, n per rank. Cells have user ids (1000 * cell +
 * 7: any numbering will do), and each rank lists the ids it owns in its own
 * order. Every rank needs, as ghosts, the two cells on either side of its
 * block and cell 0. starforest matches the ids (stf_create_from_matching_indices),
 * the ghosts are then sorted by owner so that each owner's values arrive
 * straight in the ghost array (no unpack), and the exchange overlaps with
 * work on the owned cells, polling with stf_test; a time loop repeats it
 * by a prepared request.
 *
 * usage: mpiexec -n 3 ghost_exchange [--view]; exits 1 if a value is wrong. */
#define _POSIX_C_SOURCE 200809L /* sched_yield */
#include <sched.h>
#include <starforest.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static stf_gint id_of(long cell) { return 1000 * (stf_gint)cell + 7; }
static double value_of(stf_gint id) { return 0.5 * (double)id; }

/* Ghost order by owner (rank, then offset), for qsort. */
static int by_owner(const void *a, const void *b) {
  const stf_node *x = (const stf_node *)a, *y = (const stf_node *)b;
  if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

/* Unpack calls of one bcast with MPI_REPLACE. */
static long long unpacks(stf_sf sf, const double *owned, double *ghost) {
  stf_stats s = stf_stats_init();
  CHECK(stf_reset_stats(sf));
  CHECK(stf_bcast(sf, MPI_DOUBLE, owned, ghost, MPI_REPLACE));
  CHECK(stf_get_stats(sf, &s));
  return s.unpack_calls;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size, wrong = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long n = 6, ncells = n * size, first = rank * n;

  /* Owned ids, listed last cell first; ghost ids in no particular order. */
  stf_gint owned[6], needed[5];
  double values[6];
  for (long i = 0; i < n; i++) owned[i] = id_of(first + n - 1 - i);
  for (long i = 0; i < n; i++) values[i] = value_of(owned[i]);
  const long ghost_cells[5] = {first + n + 1, first - 2, 0, first + n, first - 1};
  for (int g = 0; g < 5; g++) needed[g] = id_of((ghost_cells[g] + ncells) % ncells);

  /* The SF from owned ids to needed ids: leaf g reads the owner of needed[g]. */
  stf_sf sf;
  CHECK(stf_create_from_matching_indices(MPI_COMM_WORLD, n, owned, 5, needed, &sf));

  /* Sort the ghosts by owner: each owner's values then fill one contiguous
   * run of the ghost array, which the library receives into directly. */
  const stf_node *owner;
  stf_node sorted[5];
  CHECK(stf_get_graph(sf, NULL, NULL, NULL, &owner));
  memcpy(sorted, owner, sizeof sorted);
  qsort(sorted, 5, sizeof sorted[0], by_owner);
  stf_sf by_rank;
  CHECK(stf_create(MPI_COMM_WORLD, &by_rank));
  CHECK(stf_set_graph(by_rank, n, 5, NULL, STF_COPY_VALUES, sorted, STF_COPY_VALUES));

  double ghost[5];
  const long long before = unpacks(sf, values, ghost);
  for (int g = 0; g < 5; g++) wrong += ghost[g] != value_of(needed[g]);
  const long long after = unpacks(by_rank, values, ghost);
  if (rank == 0) printf("unpack calls per exchange: %lld as listed, %lld sorted by owner\n", before, after);
  wrong += after != 0;

  /* Overlap: start the exchange, work on owned cells while polling. */
  stf_request req;
  double work = 0;
  int done = 0;
  memset(ghost, 0, sizeof ghost);
  CHECK(stf_bcast_begin(by_rank, MPI_DOUBLE, values, ghost, MPI_REPLACE, &req));
  for (long i = 0; !done; i = (i + 1) % n) {
    work += values[i]; /* stands for the interior computation */
    CHECK(stf_test(by_rank, &req, &done));
    sched_yield(); /* this demo has little work: let the other ranks run */
  }
  for (int g = 0; g < 5; g++) /* root k of rank p is that rank's owned[k]: cell p n + n - 1 - k */
    wrong += ghost[g] != value_of(id_of(sorted[g].rank * n + n - 1 - sorted[g].index));

  /* A time loop: the same exchange on the same arrays, prepared once. */
  stf_request step;
  CHECK(stf_bcast_init(by_rank, MPI_DOUBLE, values, ghost, MPI_REPLACE, &step));
  for (int t = 1; t <= 3; t++) {
    for (long i = 0; i < n; i++) values[i] = value_of(owned[i]) + t; /* new values, same array */
    CHECK(stf_start(by_rank, &step));
    CHECK(stf_bcast_end(by_rank, &step)); /* step stays prepared */
    for (int g = 0; g < 5; g++)
      wrong += ghost[g] != value_of(id_of(sorted[g].rank * n + n - 1 - sorted[g].index)) + t;
  }
  CHECK(stf_request_free(by_rank, &step));

  /* Who this rank receives from, and which ghosts each one fills. */
  int npeers;
  const int *peers;
  const stf_int *offset;
  CHECK(stf_get_root_ranks(by_rank, &npeers, &peers, &offset, NULL, NULL));
  if (rank == 0)
    for (int k = 0; k < npeers; k++)
      printf("rank 0 receives ghosts %d..%d from rank %d\n", offset[k], offset[k + 1] - 1, peers[k]);
  if (argc > 1 && strcmp(argv[1], "--view") == 0) CHECK(stf_view(by_rank, stdout));

  CHECK(stf_destroy(&by_rank));
  CHECK(stf_destroy(&sf));
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("ghost_exchange: %s (work %g)\n", wrong ? "WRONG" : "ok", work);
  MPI_Finalize();
  return wrong != 0;
}
