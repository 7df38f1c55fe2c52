// Soak: many operations of every kind on one SF, then many SFs created,
// set up, used once and destroyed, with the resident memory of every rank
// sampled along the way. A library that leaks a little per operation or per
// SF shows it here as a slope; the report gives, per phase, the resident
// memory (largest rank) after the warm-up and at the end, and the growth.
//
//   mpiexec -n 2 soak [--ops N] [--sfs N] [--samples K] [--leaves L]
//                     [--options "-stf_type neighbor"] [--json FILE]
//
// Operations run blocking and, every fourth one, as four begins in flight
// ended in reverse order, so that request slots are taken and given back in
// both orders. Not a test: it takes minutes at the default sizes.
#include <starforest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "bench_common.h"
#include "check.h"

namespace {

struct Options {
  long ops = 1000000;  // per operation kind
  long sfs = 100000;   // created and destroyed
  int samples = 10;    // resident-memory samples per phase
  int leaves = 64;     // per rank
  std::string options;
  std::string json;
};

// Resident memory of this process in KiB (Linux /proc/self/statm).
long resident_kib() {
  long pages_total = 0, pages_resident = 0;
  FILE *f = std::fopen("/proc/self/statm", "r");
  if (!f) return -1;
  const int got = std::fscanf(f, "%ld %ld", &pages_total, &pages_resident);
  std::fclose(f);
  return got == 2 ? pages_resident * (sysconf(_SC_PAGESIZE) / 1024) : -1;
}

long max_resident_kib(MPI_Comm comm) {
  long mine = resident_kib(), most = 0;
  MPI_Allreduce(&mine, &most, 1, MPI_LONG, MPI_MAX, comm);
  return most;
}

// Each rank's leaves read roots of the next two ranks and its own, spread
// over the root space, so that every operation sends and receives messages.
void set_ring_graph(stf_sf sf, int rank, int size, int nleaves) {
  const stf_int nroots = nleaves;
  std::vector<stf_node> remote(static_cast<size_t>(nleaves));
  for (int i = 0; i < nleaves; i++)
    remote[static_cast<size_t>(i)] = {(rank + i % 3) % size, static_cast<stf_int>((7 * i) % nroots)};
  CHECK_STF(stf_set_graph(sf, nroots, nleaves, nullptr, STF_COPY_VALUES, remote.data(), STF_COPY_VALUES));
}

stf_sf make_sf(const Options &o, int rank, int size) {
  stf_sf sf;
  CHECK_STF(stf_create(MPI_COMM_WORLD, &sf));
  if (!o.options.empty()) CHECK_STF(stf_set_sf_options(sf, o.options.c_str()));
  set_ring_graph(sf, rank, size, o.leaves);
  CHECK_STF(stf_setup(sf));
  return sf;
}

struct Phase {
  std::string name;
  long count;
  std::function<void(long)> step;  // the i-th operation (or SF)
};

struct Result {
  std::string name;
  long count = 0, after_warmup_kib = 0, end_kib = 0, peak_kib = 0;
  double seconds = 0;
};

// Runs count steps; samples resident memory after the first 1/samples of
// them (the warm-up: caches, pools and MPI's own buffers fill) and after
// every further 1/samples.
Result run_phase(const Phase &p, int samples, int rank) {
  Result r;
  r.name = p.name;
  r.count = p.count;
  const long chunk = p.count / samples > 0 ? p.count / samples : 1;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  if (rank == 0) std::printf("%-14s KiB:", p.name.c_str());
  for (long i = 0; i < p.count; i++) {
    p.step(i);
    if ((i + 1) % chunk == 0 || i + 1 == p.count) {
      const long kib = max_resident_kib(MPI_COMM_WORLD);
      if (r.after_warmup_kib == 0) r.after_warmup_kib = kib;
      r.end_kib = kib;
      if (kib > r.peak_kib) r.peak_kib = kib;
      if (rank == 0) {
        std::printf(" %ld", kib);
        std::fflush(stdout);
      }
    }
  }
  r.seconds = bench::max_over_ranks(MPI_Wtime() - t0, MPI_COMM_WORLD);
  if (rank == 0) std::printf("\n");
  return r;
}

bool parse(int argc, char **argv, Options *o) {
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--ops" && has_value) o->ops = std::atol(argv[++i]);
    else if (a == "--sfs" && has_value) o->sfs = std::atol(argv[++i]);
    else if (a == "--samples" && has_value) o->samples = std::atoi(argv[++i]);
    else if (a == "--leaves" && has_value) o->leaves = std::atoi(argv[++i]);
    else if (a == "--options" && has_value) o->options = argv[++i];
    else if (a == "--json" && has_value) o->json = argv[++i];
    else return false;
  }
  return o->ops > 0 && o->sfs >= 0 && o->samples > 0 && o->leaves > 0;
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Options o;
  if (!parse(argc, argv, &o)) {
    if (rank == 0)
      std::fprintf(stderr, "usage: soak [--ops N] [--sfs N] [--samples K] [--leaves L] [--options OPTS] "
                           "[--json FILE]\n");
    MPI_Finalize();
    return 2;
  }

  stf_sf sf = make_sf(o, rank, size);
  const stf_int *degree = nullptr;
  CHECK_STF(stf_compute_degree(sf, &degree));
  stf_int nmulti = 0;
  for (int i = 0; i < o.leaves; i++) nmulti += degree[i];
  std::vector<double> roots(static_cast<size_t>(o.leaves), 1.0), leaves(static_cast<size_t>(o.leaves), 0.0);
  std::vector<double> multi(static_cast<size_t>(nmulti), 0.0), fetched(static_cast<size_t>(o.leaves));

  // Every fourth call: four operations in flight, ended newest first.
  auto blocking_or_four = [](long i, const std::function<void()> &blocking,
                             const std::function<void(stf_request *)> &begin,
                             const std::function<void(stf_request *)> &end) {
    if (i % 4 != 3) return blocking();
    stf_request req[4];
    for (auto &r : req) begin(&r);
    for (int k = 3; k >= 0; k--) end(&req[k]);
  };
  // In flight together, the operations share no output buffer.
  std::vector<std::vector<double>> out(4, std::vector<double>(static_cast<size_t>(o.leaves)));
  int next = 0;
  auto buffer = [&]() { return out[static_cast<size_t>(next++ % 4)].data(); };

  const std::vector<Phase> phases = {
      {"bcast", o.ops,
       [&](long i) {
         blocking_or_four(
             i, [&] { CHECK_STF(stf_bcast(sf, MPI_DOUBLE, roots.data(), leaves.data(), MPI_REPLACE)); },
             [&](stf_request *r) {
               CHECK_STF(stf_bcast_begin(sf, MPI_DOUBLE, roots.data(), buffer(), MPI_REPLACE, r));
             },
             [&](stf_request *r) { CHECK_STF(stf_bcast_end(sf, r)); });
       }},
      {"reduce", o.ops,
       [&](long i) {
         blocking_or_four(
             i, [&] { CHECK_STF(stf_reduce(sf, MPI_DOUBLE, leaves.data(), roots.data(), MPI_MAX)); },
             [&](stf_request *r) {
               CHECK_STF(stf_reduce_begin(sf, MPI_DOUBLE, leaves.data(), buffer(), MPI_MAX, r));
             },
             [&](stf_request *r) { CHECK_STF(stf_reduce_end(sf, r)); });
       }},
      {"fetch_and_op", o.ops,
       [&](long) {
         CHECK_STF(stf_fetch_and_op(sf, MPI_DOUBLE, roots.data(), leaves.data(), fetched.data(), MPI_MAX));
       }},
      {"gather", o.ops, [&](long) { CHECK_STF(stf_gather(sf, MPI_DOUBLE, leaves.data(), multi.data())); }},
      {"scatter", o.ops, [&](long) { CHECK_STF(stf_scatter(sf, MPI_DOUBLE, multi.data(), leaves.data())); }},
      {"create_destroy", o.sfs,
       [&](long) {
         stf_sf t = make_sf(o, rank, size);
         CHECK_STF(stf_bcast(t, MPI_DOUBLE, roots.data(), leaves.data(), MPI_REPLACE));
         CHECK_STF(stf_destroy(&t));
       }},
  };

  if (rank == 0)
    std::printf("soak: %d ranks, %d leaves per rank, options \"%s\"; resident memory of the largest rank, "
                "%d samples per phase (the first after warm-up)\n",
                size, o.leaves, o.options.c_str(), o.samples);
  std::vector<Result> results;
  for (const Phase &p : phases)
    if (p.count > 0) results.push_back(run_phase(p, o.samples, rank));
  CHECK_STF(stf_destroy(&sf));

  bench::JsonLog log;
  if (rank == 0) {
    std::printf("\n%-14s %9s %10s %12s %10s %10s %10s\n", "phase", "count", "seconds", "us per op",
                "warm KiB", "end KiB", "growth");
    for (const Result &r : results) {
      std::printf("%-14s %9ld %10.2f %12.2f %10ld %10ld %+10ld\n", r.name.c_str(), r.count, r.seconds,
                  1e6 * r.seconds / static_cast<double>(r.count), r.after_warmup_kib, r.end_kib,
                  r.end_kib - r.after_warmup_kib);
      log.add(bench::Record()
                  .str("benchmark", "soak")
                  .str("phase", r.name)
                  .integer("count", r.count)
                  .integer("ranks", size)
                  .num("seconds", r.seconds)
                  .integer("resident_after_warmup_kib", r.after_warmup_kib)
                  .integer("resident_end_kib", r.end_kib)
                  .integer("resident_peak_kib", r.peak_kib)
                  .str("options", o.options));
    }
  }
  if (rank == 0 && !o.json.empty() && !log.write(o.json)) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Finalize();
  return 0;
}
