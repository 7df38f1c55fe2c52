// In steady state an operation allocates nothing: buffers, request slots and
// persistent requests are reused. This test replaces the global operator new
// (the library's containers allocate through it) and counts calls made while
// operations repeat on an SF that was warmed up. MPI's own malloc calls are
// not counted: they are MPI's business.
#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "check.h"
#include "graphs.h"

namespace {
std::atomic<long long> news{0};
}

void *operator new(std::size_t n) {
  news++;
  if (void *p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void *operator new(std::size_t n, const std::nothrow_t &) noexcept {
  news++;
  return std::malloc(n ? n : 1);
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete(void *p, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }

namespace {

// One round of every data-moving operation, two of them in flight at once,
// and of the prepared bcast and reduce in prep.
int round(stf_sf sf, std::vector<double> &roots, std::vector<double> &leaves, std::vector<double> &update,
          std::vector<double> &multi, std::vector<int> &iroots, std::vector<int> &ileaves, stf_request prep[2]) {
  stf_request a = nullptr, b = nullptr;
  int rc = stf_bcast_begin(sf, MPI_DOUBLE, roots.data(), leaves.data(), MPI_REPLACE, &a);
  if (!rc) rc = stf_reduce_begin(sf, MPI_INT, ileaves.data(), iroots.data(), MPI_SUM, &b);
  if (!rc) rc = stf_bcast_end(sf, &a);
  if (!rc) rc = stf_reduce_end(sf, &b);
  if (!rc) rc = stf_bcast(sf, MPI_DOUBLE, roots.data(), leaves.data(), MPI_SUM);
  if (!rc) rc = stf_reduce(sf, MPI_DOUBLE, leaves.data(), roots.data(), MPI_MAX);
  if (!rc) rc = stf_fetch_and_op(sf, MPI_DOUBLE, roots.data(), leaves.data(), update.data(), MPI_SUM);
  if (!rc) rc = stf_gather(sf, MPI_DOUBLE, leaves.data(), multi.data());
  if (!rc) rc = stf_scatter(sf, MPI_DOUBLE, multi.data(), leaves.data());
  if (!rc) rc = stf_start(sf, &prep[0]);
  if (!rc) rc = stf_start(sf, &prep[1]);
  if (!rc) rc = stf_reduce_end(sf, &prep[1]);
  if (!rc) rc = stf_bcast_end(sf, &prep[0]);
  return rc;
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::uint64_t seed = stft::parse_seed(argc, argv, 20261122);
  stft::Checker ck("test_steady_state", seed);

  for (int g = 0; g < 4; g++) {
    stft::LocalGraph lg = g == 0 ? stft::grid2d_graph(seed, me, size, 6, 5) : stft::random_graph(seed, g, me, size);
    ck.context("graph " + std::to_string(g));
    stf_sf sf = nullptr;
    ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "stf_create");
    ck.code(stf_set_graph(sf, lg.nroots, lg.nleaves(), lg.ilocal_ptr(), STF_COPY_VALUES, lg.iremote.data(),
                          STF_COPY_VALUES),
            STF_SUCCESS, "stf_set_graph");
    stf_int minleaf, maxleaf, nmulti = 0;
    const stf_int *degree = nullptr;
    lg.leaf_range(&minleaf, &maxleaf);
    ck.code(stf_compute_degree(sf, &degree), STF_SUCCESS, "stf_compute_degree");
    for (stf_int r = 0; r < lg.nroots; r++) nmulti += degree[r];
    std::vector<double> roots(lg.nroots + 1, 1.0), leaves(maxleaf + 2, 1.0), update(maxleaf + 2), multi(nmulti + 1);
    std::vector<int> iroots(lg.nroots + 1, 0), ileaves(maxleaf + 2, 1);

    stf_request prep[2] = {nullptr, nullptr};
    ck.code(stf_bcast_init(sf, MPI_DOUBLE, roots.data(), leaves.data(), MPI_SUM, &prep[0]), STF_SUCCESS, "bcast_init");
    ck.code(stf_reduce_init(sf, MPI_INT, ileaves.data(), iroots.data(), MPI_SUM, &prep[1]), STF_SUCCESS, "reduce_init");
    for (int warm = 0; warm < 3; warm++)
      ck.code(round(sf, roots, leaves, update, multi, iroots, ileaves, prep), STF_SUCCESS, "warm-up");
    long long before = news.load();
    for (int it = 0; it < 50; it++)
      ck.code(round(sf, roots, leaves, update, multi, iroots, ileaves, prep), STF_SUCCESS, "round");
    long long allocated = news.load() - before;
    ck.check(allocated == 0, "expected no operator new in 50 steady-state rounds, got %lld", allocated);
    for (stf_request &r : prep) ck.code(stf_request_free(sf, &r), STF_SUCCESS, "stf_request_free");
    ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
  }
  int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
