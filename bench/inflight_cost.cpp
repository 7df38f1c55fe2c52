// Cost of one operation with many in flight: n bcasts of one double over a
// ring begun, then ended (oldest first, then newest first), against n
// MPI_Irecv/MPI_Isend pairs completed by one MPI_Waitall, for n from 1 to
// 40,000. starforest's own part must not grow with n (a begin takes a free
// request slot in constant time); what grows is MPI's, the same in both.
//
//   mpiexec -n 2 inflight_cost [--max N] [--total T]
#include <starforest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_common.h"
#include "check.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, np;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  long max_n = 40000, total = 200000;  // operations timed per n (at least 2 rounds)
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--max") max_n = std::atol(argv[i + 1]);
    else if (a == "--total") total = std::atol(argv[i + 1]);
  }
  stf_sf sf;
  CHECK_STF(stf_create(MPI_COMM_WORLD, &sf));
  const stf_node root = {(me + 1) % np, 0};
  CHECK_STF(stf_set_graph(sf, 1, 1, nullptr, STF_COPY_VALUES, &root, STF_COPY_VALUES));
  CHECK_STF(stf_setup(sf));
  if (me == 0)
    std::printf("%d ranks; microseconds per operation with n in flight (slowest rank)\n%8s %14s %14s %14s %8s\n",
                np, "n", "sf oldest 1st", "sf newest 1st", "MPI Isend", "sf/MPI");
  for (long n = 1; n <= max_n; n = n < 10000 ? n * 10 : n * 4) {
    std::vector<double> roots(static_cast<size_t>(n), 1.0), leaves(static_cast<size_t>(n));
    std::vector<stf_request> req(static_cast<size_t>(n));
    std::vector<MPI_Request> mreq(2 * static_cast<size_t>(n));
    const long rounds = total / n > 2 ? total / n : 2;
    auto sf_round = [&](bool newest_first) {
      for (long i = 0; i < n; i++)
        CHECK_STF(stf_bcast_begin(sf, MPI_DOUBLE, &roots[i], &leaves[i], MPI_REPLACE, &req[i]));
      for (long k = 0; k < n; k++) CHECK_STF(stf_bcast_end(sf, &req[newest_first ? n - 1 - k : k]));
    };
    auto mpi_round = [&]() {
      for (long i = 0; i < n; i++) {
        MPI_Irecv(&leaves[i], 1, MPI_DOUBLE, (me + 1) % np, 7, MPI_COMM_WORLD, &mreq[2 * i]);
        MPI_Isend(&roots[i], 1, MPI_DOUBLE, (me + np - 1) % np, 7, MPI_COMM_WORLD, &mreq[2 * i + 1]);
      }
      MPI_Waitall(static_cast<int>(2 * n), mreq.data(), MPI_STATUSES_IGNORE);
    };
    const double scale = 1e6 / static_cast<double>(n);
    const double oldest = scale * bench::time_per_call(MPI_COMM_WORLD, rounds, [&] { sf_round(false); });
    const double newest = scale * bench::time_per_call(MPI_COMM_WORLD, rounds, [&] { sf_round(true); });
    const double mpi = scale * bench::time_per_call(MPI_COMM_WORLD, rounds, mpi_round);
    if (me == 0) std::printf("%8ld %14.2f %14.2f %14.2f %8.2f\n", n, oldest, newest, mpi, oldest / mpi);
  }
  CHECK_STF(stf_destroy(&sf));
  MPI_Finalize();
  return 0;
}
