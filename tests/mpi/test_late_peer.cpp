// A peer that comes late, past -stf_putsignal_timeout, while many
// operations are in flight: every end must either succeed with exactly its
// own operation's data or fail; none may hang. The options come from the
// command line (argv[1]); CTest runs it for putsignal in a node, between
// emulated nodes (RMA window and point-to-point) and under 3step with
// putsignal steps.
//
// Each rank's leaves read the roots of every other rank; rank size-1
// sleeps before it begins. n bcasts are in flight, alternately of units of
// one double (they fit their region) and of `big` (--big, default 3:
// larger than their region, so they go by MPI, with tags that repeat every
// 2S operations; 3000: not sent eagerly either), and each rank ends them
// in an order of its own.
#include <unistd.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "check.h"

using namespace stft;

namespace {

double value(int op, int rank, int component) { return 1000.0 * op + 10.0 * rank + 0.25 * component + 1; }

void late_peer(Checker &ck, const std::string &options, int n, int big, int me, int size) {
  ck.context(options + ": " + std::to_string(n) + " bcasts in flight, units of 1 and " + std::to_string(big) +
             " doubles, the last rank late");
  stf_sf sf = nullptr;
  ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "stf_create");
  ck.code(stf_set_sf_options(sf, options.c_str()), STF_SUCCESS, options.c_str());
  std::vector<stf_node> remote;
  for (int q = 0; q < size; q++)
    if (q != me) remote.push_back({q, 0});
  const stf_int nleaves = static_cast<stf_int>(remote.size());
  ck.code(stf_set_graph(sf, 1, nleaves, nullptr, STF_COPY_VALUES, remote.data(), STF_COPY_VALUES), STF_SUCCESS,
          "graph");
  ck.code(stf_setup(sf), STF_SUCCESS, "stf_setup");
  MPI_Datatype large_unit;
  MPI_Type_contiguous(big, MPI_DOUBLE, &large_unit);
  MPI_Type_commit(&large_unit);
  const auto doubles = [&](int i) { return i % 2 ? big : 1; };
  std::vector<std::vector<double>> roots(n), leaves(n);
  std::vector<stf_request> reqs(n, nullptr);
  if (me == size - 1) sleep(3);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < n; i++) {
    const int d = doubles(i);
    roots[i].resize(d);
    for (int c = 0; c < d; c++) roots[i][c] = value(i, me, c);
    leaves[i].assign(static_cast<std::size_t>(nleaves) * d, -1);
    ck.code(stf_bcast_begin(sf, d == 1 ? MPI_DOUBLE : large_unit, roots[i].data(), leaves[i].data(), MPI_REPLACE, &reqs[i]),
            STF_SUCCESS, "stf_bcast_begin");
  }
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(static_cast<unsigned>(ck.seed() + 7919 * me)));
  int succeeded = 0, wrong_successes = 0;
  for (int i : order) {
    const int rc = stf_bcast_end(sf, &reqs[i]);
    ck.check(rc == STF_SUCCESS || rc == STF_ERR_TIMEOUT || rc == STF_ERR_STATE || rc == STF_ERR_ARG,
             "op %d ended with %d: %s", i, rc, stf_last_error_message());
    if (rc != STF_SUCCESS) continue;
    succeeded++;
    const int d = doubles(i);
    long long wrong = 0;
    stf_int first = -1;
    for (stf_int l = 0; l < nleaves; l++)
      for (int c = 0; c < d; c++)
        if (leaves[i][l * d + c] != value(i, remote[l].rank, c) && wrong++ == 0) first = l;
    if (wrong) wrong_successes++;
    ck.check(wrong == 0, "op %d ended with STF_SUCCESS and %lld wrong values (the first in the leaf from rank %d: %g, "
             "want %g)", i, wrong, first < 0 ? -1 : remote[first].rank, first < 0 ? 0.0 : leaves[i][first * d],
             first < 0 ? 0.0 : value(i, remote[first].rank, 0));
  }
  // Bounded: a few timeouts of 1 s each, not one per operation.
  ck.check(MPI_Wtime() - t0 < 60, "the ends took %.1f s", MPI_Wtime() - t0);
  if (std::getenv("STF_TEST_TRACE"))
    std::printf("[rank %d] %d of %d ends succeeded, %d with wrong data\n", me, succeeded, n, wrong_successes);
  MPI_Barrier(MPI_COMM_WORLD);
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
  MPI_Type_free(&large_unit);
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Checker ck("test_late_peer", argc, argv, 1);
  const std::string options = argc > 1 && argv[1][0] == '-' ? argv[1] : "-stf_type putsignal";
  const int n = static_cast<int>(parse_long(argc, argv, "--ops", "STF_TEST_OPS", 24));
  const int big = static_cast<int>(parse_long(argc, argv, "--big", "STF_TEST_BIG", 3));
  if (size >= 2) late_peer(ck, options + " -stf_putsignal_timeout 1", n, big, me, size);
  const int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
