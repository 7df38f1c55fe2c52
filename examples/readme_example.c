/* A ring: rank r owns 1 or 2 roots; its leaves point at the roots of rank r+1. */
#include <starforest.h>
#include <stdio.h>

#define CHECK(call)                                                              \
  do {                                                                           \
    int rc_ = (call);                                                            \
    if (rc_ != STF_SUCCESS) {                                                    \
      fprintf(stderr, "%s: %s\n", stf_error_name(rc_), stf_last_error_message()); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                              \
    }                                                                            \
  } while (0)

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  CHECK(stf_set_options_from_args(argc, argv)); /* -stf_view, -stf_log_view, -stf_type ... */
  int rank, size, wrong = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int next = (rank + 1) % size;
  int nroots = 1 + rank % 2, nleaves = 1 + next % 2; /* next rank's root count */

  stf_node remote[2];
  for (int i = 0; i < nleaves; i++) remote[i] = (stf_node){next, i};
  stf_sf sf;
  CHECK(stf_create(MPI_COMM_WORLD, &sf));
  CHECK(stf_set_graph(sf, nroots, nleaves, NULL, STF_COPY_VALUES, remote, STF_COPY_VALUES));

  int roots[2], leaves[2];
  for (int i = 0; i < nroots; i++) roots[i] = 10 * rank + i;
  CHECK(stf_bcast(sf, MPI_INT, roots, leaves, MPI_REPLACE));  /* leaves <- roots */
  CHECK(stf_reduce(sf, MPI_INT, leaves, roots, MPI_SUM));     /* roots += leaves */

  for (int i = 0; i < nleaves; i++) {
    printf("rank %d leaf %d = %d\n", rank, i, leaves[i]);
    wrong += leaves[i] != 10 * next + i;
  }
  for (int i = 0; i < nroots; i++) {
    printf("rank %d root %d = %d\n", rank, i, roots[i]);
    wrong += roots[i] != 2 * (10 * rank + i); /* each root has one leaf */
  }
  CHECK(stf_destroy(&sf));
  MPI_Finalize();
  return wrong != 0;
}
