// The timings of stf_stats: operations counted per kind (blocking and split
// forms, stf_test, a node-aware strategy counting its own operations, not
// its steps'), times that add up (wait within end), reset, the wait of a
// putsignal express operation (read while polling) and -stf_log_view's
// summary at destroy.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "check.h"

using namespace stft;

namespace {

stf_sf ring_sf(Checker &ck, const char *options, int rank, int size) {
  stf_sf sf = nullptr;
  ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "stf_create");
  ck.code(stf_set_sf_options(sf, options), STF_SUCCESS, "stf_set_sf_options");
  stf_node roots[2] = {{(rank + 1) % size, 0}, {(rank + size - 1) % size, 1}};
  ck.code(stf_set_graph(sf, 2, 2, nullptr, STF_COPY_VALUES, roots, STF_COPY_VALUES), STF_SUCCESS, "stf_set_graph");
  ck.code(stf_setup(sf), STF_SUCCESS, "stf_setup");
  return sf;
}

void counts_and_times(Checker &ck, const char *options, int rank, int size) {
  ck.context(std::string("timings ") + options);
  stf_sf sf = ring_sf(ck, options, rank, size);
  double root[2] = {1, 2}, leaf[2] = {0, 0};
  const int n = 50;
  for (int i = 0; i < n; i++) ck.code(stf_bcast(sf, MPI_DOUBLE, root, leaf, MPI_REPLACE), STF_SUCCESS, "bcast");
  for (int i = 0; i < n; i++) {
    stf_request req = nullptr;
    ck.code(stf_reduce_begin(sf, MPI_DOUBLE, leaf, root, MPI_SUM, &req), STF_SUCCESS, "reduce_begin");
    int done = 0;
    while (!done) ck.code(stf_test(sf, &req, &done), STF_SUCCESS, "stf_test");
  }
  stf_stats s = stf_stats_init();
  ck.code(stf_get_stats(sf, &s), STF_SUCCESS, "stf_get_stats");
  ck.check(s.operations[STF_OP_BCAST] == n && s.operations[STF_OP_REDUCE] == n &&
               s.operations[STF_OP_FETCH_AND_OP] == 0,
           "operations bcast %lld reduce %lld fetch %lld, want %d %d 0", s.operations[STF_OP_BCAST],
           s.operations[STF_OP_REDUCE], s.operations[STF_OP_FETCH_AND_OP], n, n);
  for (int k : {STF_OP_BCAST, STF_OP_REDUCE})
    ck.check(s.begin_seconds[k] > 0 && s.end_seconds[k] > 0 && s.wait_seconds[k] >= 0 &&
                 s.wait_seconds[k] <= s.end_seconds[k] + 1e-9 && s.begin_seconds[k] < 10 && s.end_seconds[k] < 10,
             "kind %d: begin %g s, end %g s, wait %g s", k, s.begin_seconds[k], s.end_seconds[k], s.wait_seconds[k]);
  ck.code(stf_reset_stats(sf), STF_SUCCESS, "stf_reset_stats");
  ck.code(stf_get_stats(sf, &s), STF_SUCCESS, "stf_get_stats");
  ck.check(s.operations[STF_OP_BCAST] == 0 && s.begin_seconds[STF_OP_BCAST] == 0 && s.end_seconds[STF_OP_BCAST] == 0 &&
               s.wait_seconds[STF_OP_BCAST] == 0,
           "after reset: %lld operations, %g / %g / %g s", s.operations[STF_OP_BCAST], s.begin_seconds[STF_OP_BCAST],
           s.end_seconds[STF_OP_BCAST], s.wait_seconds[STF_OP_BCAST]);
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
}

// Prepared putsignal bcasts on the ring, which go express: rank 0 starts
// 50 ms late, so its two neighbours wait about that long in their ends,
// most of the end (the wait runs to where they last stopped waiting, after
// their last yield), and rank 0, whose messages are there, waits less.
void express_wait(Checker &ck, int rank, int size) {
  ck.context("express wait");
  stf_sf sf = ring_sf(ck, "-stf_type putsignal", rank, size);
  double root[2] = {1, 2}, leaf[2] = {0, 0};
  stf_request req = nullptr;
  ck.code(stf_bcast_init(sf, MPI_DOUBLE, root, leaf, MPI_REPLACE, &req), STF_SUCCESS, "stf_bcast_init");
  for (int i = 0; i < 3; i++) {
    ck.code(stf_start(sf, &req), STF_SUCCESS, "stf_start");
    ck.code(stf_bcast_end(sf, &req), STF_SUCCESS, "stf_bcast_end");
  }
  ck.code(stf_reset_stats(sf), STF_SUCCESS, "stf_reset_stats");
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) usleep(50000);
  ck.code(stf_start(sf, &req), STF_SUCCESS, "stf_start");
  ck.code(stf_bcast_end(sf, &req), STF_SUCCESS, "stf_bcast_end");
  stf_stats s = stf_stats_init();
  ck.code(stf_get_stats(sf, &s), STF_SUCCESS, "stf_get_stats");
  const double wait = s.wait_seconds[STF_OP_BCAST], end = s.end_seconds[STF_OP_BCAST];
  const bool late_peer = rank == 1 || rank == size - 1;
  ck.check(s.express_operations == 1, "express operations %lld, want 1", s.express_operations);
  ck.check(wait <= end + 1e-9 && (late_peer ? wait > 0.025 && wait > 0.5 * end : wait < 0.025),
           "rank %d: wait %g s, end %g s", rank, wait, end);
  ck.code(stf_request_free(sf, &req), STF_SUCCESS, "stf_request_free");
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
}

// The summary goes to stdout on rank 0: point file descriptor 1 at a file
// there for the destroy, then back.
void log_view(Checker &ck, int rank, int size) {
  ck.context("log_view");
  stf_sf sf = ring_sf(ck, "-stf_log_view 1", rank, size);
  double root[2] = {1, 2}, leaf[2] = {0, 0};
  for (int i = 0; i < 5; i++) ck.code(stf_bcast(sf, MPI_DOUBLE, root, leaf, MPI_REPLACE), STF_SUCCESS, "bcast");
  char path[] = "/tmp/stf_log_viewXXXXXX";
  int saved = -1;
  std::fflush(stdout);
  if (rank == 0) {
    const int fd = mkstemp(path);
    saved = dup(1);
    dup2(fd, 1);
    close(fd);
  }
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
  if (rank != 0) return;
  std::fflush(stdout);
  dup2(saved, 1);
  close(saved);
  std::string text;
  if (FILE *f = std::fopen(path, "r")) {
    for (int c; (c = std::fgetc(f)) != EOF;) text += static_cast<char>(c);
    std::fclose(f);
  }
  std::remove(path);
  ck.check(text.find("log_view") != std::string::npos && text.find("bcast") != std::string::npos &&
               text.find("reduce") == std::string::npos,
           "summary:\n%s", text.c_str());
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Checker ck("test_timings", argc, argv, 1);
  counts_and_times(ck, "", rank, size);
  counts_and_times(ck, "-stf_type 3step -stf_ranks_per_node 1", rank, size);
  if (size > 1) express_wait(ck, rank, size);
  log_view(ck, rank, size);
  const int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
