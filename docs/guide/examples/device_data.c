/* Root and leaf data in device memory, under each stream model. Runs on the
 * emulated device ("emu": device code paths on CPU threads); with a GPU the
 * starforest calls are the same under -stf_device cuda, while your own
 * kernels take the place of stf_device_launch (which runs host functions).
 *
 * A ring: each rank's leaves read all roots of the next rank.
 *   model B: the roots are produced on the library stream; end returns with
 *            the unpack in flight: synchronise before reading the leaves.
 *   model A: the roots come from a stream the library does not know; begin
 *            waits for the whole device, end for its own work.
 *   model C: begin does not wait, so more work can be queued between begin
 *            and end; end waits for the packing, then sends.
 *
 * usage: mpiexec -n 2 device_data; exits 1 if a leaf is wrong. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

enum { N = 1000 };

struct Fill {
  double *roots;
  int rank, round;
};

/* A "kernel": roots[i] = f(rank, round, i) over [begin, end). */
static void fill(int64_t begin, int64_t end, void *ctx) {
  const struct Fill *f = (const struct Fill *)ctx;
  for (int64_t i = begin; i < end; i++) f->roots[i] = 1e6 * f->rank + 1e3 * f->round + (double)i;
}

/* Leaves (on the host) against what the next rank's fill wrote. */
static int check_leaves(const double *leaves, int next, int round) {
  int wrong = 0;
  for (int i = 0; i < N; i++) wrong += leaves[i] != 1e6 * next + 1e3 * round + i;
  return wrong;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size, wrong = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int next = (rank + 1) % size;
  CHECK(stf_device_select("emu"));

  stf_node remote[N];
  for (int i = 0; i < N; i++) remote[i] = (stf_node){next, i};
  stf_sf sf;
  CHECK(stf_create(MPI_COMM_WORLD, &sf));
  CHECK(stf_set_graph(sf, N, N, NULL, STF_COPY_VALUES, remote, STF_COPY_VALUES));
  double *roots, *leaves, host[N];
  CHECK(stf_device_malloc(N * sizeof(double), (void **)&roots));
  CHECK(stf_device_malloc(N * sizeof(double), (void **)&leaves));
  stf_stream user;
  CHECK(stf_stream_create(&user));
  stf_request req;

  /* Model B (the default): produce on the library stream (NULL). */
  struct Fill b = {roots, rank, 1};
  CHECK(stf_device_launch(NULL, N, fill, &b));
  CHECK(stf_bcast(sf, MPI_DOUBLE, roots, leaves, MPI_REPLACE));
  CHECK(stf_device_synchronize()); /* the unpack may still be running */
  CHECK(stf_device_memcpy(host, leaves, sizeof host));
  wrong += check_leaves(host, next, 1);

  /* Model A: the roots come from a stream of the user's. */
  struct Fill a = {roots, rank, 2};
  CHECK(stf_set_stream_model(sf, STF_STREAM_MODEL_A));
  CHECK(stf_device_launch(user, N, fill, &a));
  CHECK(stf_bcast(sf, MPI_DOUBLE, roots, leaves, MPI_REPLACE)); /* leaves ready on return */
  CHECK(stf_device_memcpy(host, leaves, sizeof host));
  wrong += check_leaves(host, next, 2);

  /* Model C: begin queues the packing and returns; work goes on meanwhile. */
  struct Fill c = {roots, rank, 3};
  double scratch[N];
  struct Fill other = {scratch, rank, 0};
  CHECK(stf_set_stream_model(sf, STF_STREAM_MODEL_C));
  CHECK(stf_device_launch(NULL, N, fill, &c));
  CHECK(stf_bcast_begin(sf, MPI_DOUBLE, roots, leaves, MPI_REPLACE, &req));
  CHECK(stf_device_launch(user, N, fill, &other)); /* more work, no host wait yet */
  CHECK(stf_bcast_end(sf, &req));
  CHECK(stf_device_synchronize());
  CHECK(stf_stream_synchronize(user));
  CHECK(stf_device_memcpy(host, leaves, sizeof host));
  wrong += check_leaves(host, next, 3);

  CHECK(stf_stream_destroy(user));
  CHECK(stf_destroy(&sf));
  CHECK(stf_device_free(roots));
  CHECK(stf_device_free(leaves));
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("device_data: %s\n", wrong ? "WRONG" : "ok");
  MPI_Finalize();
  return wrong != 0;
}
