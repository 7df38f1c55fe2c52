// Pack and unpack timings of bench/calibrate (calibrate.h), through the
// public API as applications pack: the self part of a one-rank star forest
// whose leaves are one contiguous buffer, so a bcast is exactly a pack
// (gather) and a reduce with MPI_REPLACE exactly an unpack (scatter).
#include <starforest.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <random>
#include <vector>

#include "calibrate.h"
#include "check.h"

namespace calibrate {

namespace {

// Root offsets of n leaves: contiguous 0..n-1, strided every 4th unit (one
// double in 32 bytes), indexed a random permutation of 0..n-1.
std::vector<stf_int> roots_of(int pattern, stf_int n) {
  std::vector<stf_int> r(n);
  std::iota(r.begin(), r.end(), 0);
  if (pattern == 1) {
    for (stf_int &x : r) x *= 4;
  } else if (pattern == 2) {
    std::shuffle(r.begin(), r.end(), std::mt19937(7));
  }
  return r;
}

// Seconds per call of f: the fastest of s.rounds rounds of about
// round_seconds (as calibrate_mpi.cpp times messages).
template <class F>
double per_call(const Settings &s, F &&f) {
  f();
#if defined(STF_SMPI)
  // SMPI's time passes in MPI calls only (simulate-computation:no): a pack
  // costs nothing there, and sizing rounds by it made 10^5 real packs each.
  const long iters = 1;
#else
  const double start = MPI_Wtime();
  f();
  const double once = std::max(MPI_Wtime() - start, 1e-7);
  const long iters = std::max(1L, std::min(100000L, static_cast<long>(s.round_seconds / once)));
#endif
  std::vector<double> v;
  for (int r = 0; r < s.rounds; ++r) {
    const double t0 = MPI_Wtime();
    for (long i = 0; i < iters; ++i) f();
    v.push_back((MPI_Wtime() - t0) / iters);
  }
  return *std::min_element(v.begin(), v.end());
}

// One pattern and size: returns {pack, unpack} seconds per call.
std::pair<double, double> time_pattern(int pattern, stf_int n, bool device_memory, const Settings &s) {
  const std::vector<stf_int> roots = roots_of(pattern, n);
  const stf_int nroots = pattern == 1 ? 4 * n : n;
  std::vector<stf_node> remote(n);
  for (stf_int i = 0; i < n; ++i) remote[i] = stf_node{0, roots[i]};
  stf_sf sf;
  CHECK_STF(stf_create(MPI_COMM_SELF, &sf));
  CHECK_STF(stf_set_graph(sf, nroots, n, nullptr, STF_COPY_VALUES, remote.data(), STF_COPY_VALUES));
  CHECK_STF(stf_setup(sf));
  void *rootdata = nullptr, *leafdata = nullptr;
  const size_t root_bytes = sizeof(double) * nroots, leaf_bytes = sizeof(double) * n;
  if (device_memory) {
    CHECK_STF(stf_device_malloc(root_bytes, &rootdata));
    CHECK_STF(stf_device_malloc(leaf_bytes, &leafdata));
  } else {
    rootdata = std::calloc(nroots, sizeof(double));
    leafdata = std::calloc(n, sizeof(double));
  }
  // Device work is asynchronous: a call is timed to its completion.
  auto done = [&] {
    if (device_memory) CHECK_STF(stf_device_synchronize());
  };
  const double pack = per_call(s, [&] {
    CHECK_STF(stf_bcast(sf, MPI_DOUBLE, rootdata, leafdata, MPI_REPLACE));
    done();
  });
  const double unpack = per_call(s, [&] {
    CHECK_STF(stf_reduce(sf, MPI_DOUBLE, leafdata, rootdata, MPI_REPLACE));
    done();
  });
  CHECK_STF(stf_destroy(&sf));
  if (device_memory) {
    CHECK_STF(stf_device_free(rootdata));
    CHECK_STF(stf_device_free(leafdata));
  } else {
    std::free(rootdata);
    std::free(leafdata);
  }
  return {pack, unpack};
}

}  // namespace

PackTimes pack_times(bool device_memory, const Settings &s) {
  PackTimes t;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const stf_int small = 16, large = stf_int{1} << 20;  // 128 B and 8 MiB of doubles
  t.small_bytes = sizeof(double) * small;
  t.large_bytes = sizeof(double) * large;
  if (rank == 0) {
    for (int p = 0; p < 3; ++p) {
      int k = 0;
      for (stf_int n : {small, large}) {
        const auto pu = time_pattern(p, n, device_memory, s);
        t.pack[p][k] = pu.first;
        t.unpack[p][k] = pu.second;
        ++k;
      }
    }
  }
  sleeping_barrier(MPI_COMM_WORLD);
  MPI_Bcast(&t, sizeof t, MPI_BYTE, 0, MPI_COMM_WORLD);
  return t;
}

double device_sync(const Settings &s) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double t = 0;
  if (rank == 0) t = per_call(s, [] { CHECK_STF(stf_device_synchronize()); });
  sleeping_barrier(MPI_COMM_WORLD);
  MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return t;
}

}  // namespace calibrate
