// What SMPI lacks is refused, on every rank, with a message that says so
// (the transports of docs/design/simulation.md); the rest works beside it.
#include <mpi.h>
#include <starforest.h>
#include <stdio.h>
#include <string.h>

// A ring: leaf 0 reads the left neighbour's root. Returns stf_setup's code.
static int setup_ring(const char *type, stf_sf *sf) {
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  stf_node left = {(me + n - 1) % n, 0};
  char options[64];
  snprintf(options, sizeof options, "-stf_type %s", type);
  if (stf_create(MPI_COMM_WORLD, sf) || stf_set_sf_options(*sf, options) ||
      stf_set_graph(*sf, 1, 1, NULL, STF_COPY_VALUES, &left, STF_COPY_VALUES))
    return -1;
  return stf_setup(*sf);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, n, bad = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const char *refused[] = {"neighbor", "putsignal", "window"};
  for (int k = 0; k < 3; k++) {
    stf_sf sf = NULL;
    const int rc = setup_ring(refused[k], &sf);
    if (rc != STF_ERR_UNSUPPORTED || !strstr(stf_last_error_message(), "SMPI")) {
      fprintf(stderr, "[rank %d] %s: %s (%s), expected STF_ERR_UNSUPPORTED naming SMPI\n", me, refused[k],
              stf_error_name(rc), stf_last_error_message());
      bad++;
    }
    stf_destroy(&sf);
  }
  stf_sf sf = NULL;
  int root = 10 * me, leaf = -1;
  if (setup_ring("basic", &sf) || stf_bcast(sf, MPI_INT, &root, &leaf, MPI_REPLACE) ||
      leaf != 10 * ((me + n - 1) % n)) {
    fprintf(stderr, "[rank %d] basic after the refusals: leaf %d (%s)\n", me, leaf, stf_last_error_message());
    bad++;
  }
  stf_destroy(&sf);
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0) printf("smpi_refusals: %s\n", bad ? "FAILED" : "3 transports refused on every rank, basic works");
  MPI_Finalize();
  return bad ? 1 : 0;
}
