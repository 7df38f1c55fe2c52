/* cluster_hosts: checks that a multi-host run really is one.
 *
 * Every rank reports its host name. Ranks with the same host name must share
 * one MPI_COMM_TYPE_SHARED communicator and ranks on different hosts must
 * not; ranks must sit in blocks (host by host, in rank order), and with
 * --hosts H / --layout a,b,... the number of hosts and the ranks on each
 * must be those. Then a star forest across the hosts: each rank owns one
 * root holding (host, rank) and has two leaves, on the root of its own
 * host's first rank and on that of the next host's first rank; bcast must
 * bring those values and reduce (MPI_SUM of ones) must count, at each
 * host's first rank, the ranks of its own and of the previous host. The
 * same bcast through the window transport with pscw synchronisation, which
 * set-up refuses across hosts when built with MPICH 4.0 (it hangs there).
 *
 * usage: cluster_hosts [--hosts H] [--layout a,b,...]
 * Prints the ranks per host on rank 0; exits 1 on any failed check. */
#include <starforest.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_LEN 64

static int failures = 0;

static void fail(int rank, const char *what) {
  fprintf(stderr, "[rank %d] FAIL cluster_hosts: %s\n", rank, what);
  failures++;
}

static void check_stf(int rank, int rc, const char *call) {
  if (rc != STF_SUCCESS) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s: %s: %s", call, stf_error_name(rc), stf_last_error_message());
    fail(rank, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int want_hosts = 0;
  const char *want_layout = NULL;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--hosts") == 0) want_hosts = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--layout") == 0) want_layout = argv[i + 1];
  }

  /* Host names, and the first rank of each rank's shared-memory group. */
  char name[NAME_LEN] = {0};
  int len;
  MPI_Get_processor_name(name, &len);
  char *names = malloc((size_t)size * NAME_LEN);
  MPI_Allgather(name, NAME_LEN, MPI_CHAR, names, NAME_LEN, MPI_CHAR, MPI_COMM_WORLD);
  MPI_Comm shared;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
  int leader = rank;
  MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, shared);
  MPI_Comm_free(&shared);
  int *leaders = malloc(sizeof(int) * (size_t)size);
  MPI_Allgather(&leader, 1, MPI_INT, leaders, 1, MPI_INT, MPI_COMM_WORLD);

  /* Same host name <=> same shared-memory group; hosts in blocks. */
  int *host_of = malloc(sizeof(int) * (size_t)size), hosts = 0;
  char msg[256];
  for (int r = 0; r < size; r++) {
    for (int q = 0; q < r; q++) {
      int same_name = strcmp(names + r * NAME_LEN, names + q * NAME_LEN) == 0;
      if (same_name != (leaders[r] == leaders[q])) {
        snprintf(msg, sizeof msg, "ranks %d (%s) and %d (%s): %s host names but %s shared-memory group", r,
                 names + r * NAME_LEN, q, names + q * NAME_LEN, same_name ? "same" : "different",
                 same_name ? "another" : "the same");
        fail(rank, msg);
      }
    }
    if (r == 0 || leaders[r] != leaders[r - 1]) {
      if (leaders[r] != r) {
        snprintf(msg, sizeof msg, "rank %d (%s) is not placed next to the other ranks of its host", r,
                 names + r * NAME_LEN);
        fail(rank, msg);
      }
      hosts++;
    }
    host_of[r] = hosts - 1;
  }
  char layout[256] = "";
  int *first = malloc(sizeof(int) * (size_t)hosts), *count = calloc((size_t)hosts, sizeof(int));
  for (int r = size - 1; r >= 0; r--) {
    first[host_of[r]] = r;
    count[host_of[r]]++;
  }
  for (int h = 0; h < hosts; h++)
    snprintf(layout + strlen(layout), sizeof layout - strlen(layout), "%s%d", h ? "," : "", count[h]);
  if (want_hosts && hosts != want_hosts) {
    snprintf(msg, sizeof msg, "%d hosts, want %d", hosts, want_hosts);
    fail(rank, msg);
  }
  if (want_layout && strcmp(layout, want_layout) != 0) {
    snprintf(msg, sizeof msg, "ranks per host %s, want %s", layout, want_layout);
    fail(rank, msg);
  }

  /* Star forest: leaves on the first rank of this host and of the next. */
  int h = host_of[rank], next = (h + 1) % hosts, prev = (h + hosts - 1) % hosts;
  stf_node remote[2] = {{first[h], 0}, {first[next], 0}};
  stf_sf sf;
  check_stf(rank, stf_create(MPI_COMM_WORLD, &sf), "stf_create");
  check_stf(rank, stf_set_graph(sf, 1, 2, NULL, STF_COPY_VALUES, remote, STF_COPY_VALUES), "stf_set_graph");
  int root = 1000 * h + rank, leaves[2] = {-1, -1};
  check_stf(rank, stf_bcast(sf, MPI_INT, &root, leaves, MPI_REPLACE), "stf_bcast");
  if (leaves[0] != 1000 * h + first[h] || leaves[1] != 1000 * next + first[next]) {
    snprintf(msg, sizeof msg, "bcast gave %d %d, want %d %d", leaves[0], leaves[1], 1000 * h + first[h],
             1000 * next + first[next]);
    fail(rank, msg);
  }
  int ones[2] = {1, 1}, got = 0;
  check_stf(rank, stf_reduce(sf, MPI_INT, ones, &got, MPI_SUM), "stf_reduce");
  int want = rank == first[h] ? count[h] + count[prev] : 0;
  if (got != want) {
    snprintf(msg, sizeof msg, "reduce counted %d leaves at rank %d, want %d", got, rank, want);
    fail(rank, msg);
  }
  check_stf(rank, stf_destroy(&sf), "stf_destroy");

  /* pscw: refused across hosts with MPICH 4.0 (as mpi.h names it), else the bcast. */
  int refused = 0;
#if defined(MPICH_VERSION)
  refused = hosts > 1 && strncmp(MPICH_VERSION, "4.0", 3) == 0;
#endif
  check_stf(rank, stf_create(MPI_COMM_WORLD, &sf), "stf_create");
  check_stf(rank, stf_set_sf_options(sf, "-stf_type window -stf_window_sync pscw"), "stf_set_sf_options");
  check_stf(rank, stf_set_graph(sf, 1, 2, NULL, STF_COPY_VALUES, remote, STF_COPY_VALUES), "stf_set_graph");
  int rc = stf_setup(sf);
  if (refused) {
    if (rc != STF_ERR_UNSUPPORTED || !strstr(stf_last_error_message(), "pscw")) {
      snprintf(msg, sizeof msg, "pscw set-up across hosts with MPICH 4.0 gave %s (%s), want STF_ERR_UNSUPPORTED",
               stf_error_name(rc), stf_last_error_message());
      fail(rank, msg);
    }
  } else {
    check_stf(rank, rc, "stf_setup (window, pscw)");
    leaves[0] = leaves[1] = -1;
    check_stf(rank, stf_bcast(sf, MPI_INT, &root, leaves, MPI_REPLACE), "stf_bcast (window, pscw)");
    if (leaves[0] != 1000 * h + first[h] || leaves[1] != 1000 * next + first[next]) fail(rank, "pscw bcast");
  }
  check_stf(rank, stf_destroy(&sf), "stf_destroy");

  int all_failures = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    for (int k = 0; k < hosts; k++)
      printf("host %s: ranks %d..%d\n", names + first[k] * NAME_LEN, first[k], first[k] + count[k] - 1);
    printf("cluster_hosts: %d ranks on %d hosts (%s): %s\n", size, hosts, layout,
           all_failures ? "FAILED" : "checks passed");
  }
  free(first);
  free(count);
  free(host_of);
  free(leaders);
  free(names);
  MPI_Finalize();
  return all_failures != 0;
}
