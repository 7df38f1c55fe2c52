// sf_pingpong: latency of a two-rank star forest against raw MPI ping-pong.
//
// The setup follows the ping-pong benchmark of the PETSc PetscSF report:
// rank 0 owns n roots, rank 1 owns n contiguous leaves pointing at roots
// 0..n-1 of rank 0, in order. One iteration is a bcast (roots -> leaves)
// followed by a reduce (leaves -> roots), both with MPI_REPLACE, i.e. one
// round trip of n bytes. The baseline is MPI_Send/MPI_Recv of the same bytes
// 0 -> 1 -> 0, measured in the same run.
//
// Methodology (as in common MPI latency benchmarks): warm-up iterations, then
// a fixed iteration count per size; one-way latency = round-trip time / 2.
// Because the machine may be noisy, the two implementations are interleaved:
// each size is timed in several rounds, alternating MPI and starforest, and
// the median round is reported together with the fastest and slowest rounds.
#include <starforest.h>

#include "bench_util.h"
#include "check.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kTag = 17;
constexpr long kLargeFrom = 8192;  // sizes above this use the "large" counts

struct Options {
  long max_size = 4L << 20;
  double iters_scale = 1.0;
  int rounds = 9;  // interleaved rounds per size; odd, so the median is a real round
  std::string json;
};

void usage(const char *prog) {
  std::printf(
      "usage: mpiexec -n 2 %s [--max-size BYTES] [--iters-scale F] [--rounds R] [--json FILE]\n"
      "  Ping-pong latency of a 2-rank starforest (bcast + reduce, MPI_REPLACE,\n"
      "  MPI_BYTE units) against MPI_Send/MPI_Recv, sizes 8 B .. max-size.\n"
      "  --max-size BYTES  largest message (default 4194304)\n"
      "  --iters-scale F   multiply iteration counts (e.g. 0.05 for a quick run)\n"
      "  --rounds R        split the iterations into R interleaved rounds (default 9)\n"
      "  --json FILE       also write the results as a JSON array\n",
      prog);
}

// Returns 0 to run, 1 to exit successfully (--help), 2 on a bad argument.
int parse(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    bool has_value = i + 1 < argc;
    if (a == "--help" || a == "-h") return 1;
    if (a == "--max-size" && has_value) {
      o.max_size = std::atol(argv[++i]);
    } else if (a == "--iters-scale" && has_value) {
      o.iters_scale = std::atof(argv[++i]);
    } else if (a == "--rounds" && has_value) {
      o.rounds = std::atoi(argv[++i]);
    } else if (a == "--json" && has_value) {
      o.json = argv[++i];
    } else {
      std::fprintf(stderr, "sf_pingpong: bad argument '%s' (try --help)\n", a.c_str());
      return 2;
    }
  }
  if (o.max_size < 8 || o.max_size > (1L << 30) || !(o.iters_scale > 0) || o.rounds < 1) {
    std::fprintf(stderr,
                 "sf_pingpong: need --max-size in [8, 2^30], --iters-scale > 0, --rounds >= 1\n");
    return 2;
  }
  return 0;
}

// One MPI round trip of size bytes: 0 -> 1 -> 0.
void mpi_roundtrip(int rank, char *buf, long size) {
  if (rank == 0) {
    MPI_Send(buf, (int)size, MPI_BYTE, 1, kTag, MPI_COMM_WORLD);
    MPI_Recv(buf, (int)size, MPI_BYTE, 1, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(buf, (int)size, MPI_BYTE, 0, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(buf, (int)size, MPI_BYTE, 0, kTag, MPI_COMM_WORLD);
  }
}

// One starforest round trip: roots (rank 0) -> leaves (rank 1) -> roots.
// On each rank one of the two buffers is empty; passing the same pointer for
// both is fine because a rank without roots never reads rootdata and a rank
// without leaves never touches leafdata.
void sf_roundtrip(stf_sf sf, char *buf) {
  CHECK_STF(stf_bcast(sf, MPI_BYTE, buf, buf, MPI_REPLACE));
  CHECK_STF(stf_reduce(sf, MPI_BYTE, buf, buf, MPI_REPLACE));
}

// Builds the SF for one size: n roots on rank 0, n contiguous leaves on rank 1.
stf_sf make_sf(int rank, long size) {
  stf_sf sf = nullptr;
  CHECK_STF(stf_create(MPI_COMM_WORLD, &sf));
  stf_int n = (stf_int)size;
  if (rank == 0) {
    CHECK_STF(stf_set_graph(sf, n, 0, nullptr, STF_COPY_VALUES, nullptr, STF_COPY_VALUES));
  } else {
    std::vector<stf_node> remote(n);
    for (stf_int i = 0; i < n; ++i) remote[i] = stf_node{0, i};
    CHECK_STF(stf_set_graph(sf, 0, n, nullptr, STF_COPY_VALUES, remote.data(), STF_COPY_VALUES));
  }
  CHECK_STF(stf_setup(sf));
  return sf;
}

// Checks once per size that the SF moves the right bytes both ways, so the
// timings below are known to measure a working exchange.
void verify(int rank, stf_sf sf, char *buf, long size) {
  auto pattern = [size](long i, int salt) { return (char)((i * 31 + size + salt) & 0xff); };
  long bad = 0;
  if (rank == 0)
    for (long i = 0; i < size; ++i) buf[i] = pattern(i, 0);
  else
    std::memset(buf, 0, size);
  CHECK_STF(stf_bcast(sf, MPI_BYTE, buf, buf, MPI_REPLACE));
  if (rank == 1) {
    for (long i = 0; i < size; ++i) bad += buf[i] != pattern(i, 0);
    for (long i = 0; i < size; ++i) buf[i] = pattern(i, 1);
  } else {
    std::memset(buf, 0, size);
  }
  CHECK_STF(stf_reduce(sf, MPI_BYTE, buf, buf, MPI_REPLACE));
  if (rank == 0)
    for (long i = 0; i < size; ++i) bad += buf[i] != pattern(i, 1);
  if (bad) {
    std::fprintf(stderr, "sf_pingpong: rank %d: %ld wrong bytes at size %ld\n", rank, bad, size);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

// Times `iters` round trips; returns one-way latency in microseconds.
template <class F>
double time_us(long iters, F &&roundtrip) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (long i = 0; i < iters; ++i) roundtrip();
  double t = MPI_Wtime() - t0;
  // Rank 0 starts and ends every round trip, so its clock is the one to use.
  MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return t / (double)iters / 2.0 * 1e6;
}

void write_json(const std::string &path, const std::vector<long> &sizes,
                const std::vector<bench::Stats> &mpi, const std::vector<bench::Stats> &sf) {
  bench::JsonArrayFile out(path);
  for (size_t i = 0; i < sizes.size(); ++i)
    for (int k = 0; k < 2; ++k)
      out.write(bench::JsonRecord()
                    .add("benchmark", "sf_pingpong")
                    .add("impl", k == 0 ? "mpi" : "starforest")
                    .add("size", sizes[i])
                    .add("ranks", 2)
                    .add_stats(k == 0 ? mpi[i] : sf[i]));
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);

  Options opt;
  int p = parse(argc, argv, opt);
  if (p == 1 && rank == 0) usage(argv[0]);
  if (p == 0 && nranks != 2) {
    if (rank == 0) std::fprintf(stderr, "sf_pingpong: needs exactly 2 ranks, got %d\n", nranks);
    p = 2;
  }
  if (p != 0) {
    MPI_Finalize();
    return p == 1 ? 0 : 1;
  }

  std::vector<long> sizes;
  for (long s = 8; s <= opt.max_size; s *= 2) sizes.push_back(s);
  std::vector<char> buf(sizes.back());
  std::vector<bench::Stats> mpi_stats, sf_stats;

  if (rank == 0) {
    std::printf("# sf_pingpong: 2 ranks, MPI_BYTE units, bcast+reduce (MPI_REPLACE) vs MPI_Send/Recv\n");
    std::printf("# one-way latency = round trip / 2; median of %d interleaved rounds [min..max]\n",
                opt.rounds);
    std::printf("%10s %26s %30s %7s %10s\n", "size(B)", "mpi us [min..max]",
                "starforest us [min..max]", "sf/mpi", "overhead");
  }

  for (long size : sizes) {
    bool large = size > kLargeFrom;
    long warmup = std::max(1L, std::lround((large ? 10 : 100) * std::min(1.0, opt.iters_scale)));
    long iters = std::lround((large ? 1000 : 10000) * opt.iters_scale);
    long per_round = std::max(1L, iters / opt.rounds);

    stf_sf sf = make_sf(rank, size);
    verify(rank, sf, buf.data(), size);

    auto mpi_rt = [&] { mpi_roundtrip(rank, buf.data(), size); };
    auto sf_rt = [&] { sf_roundtrip(sf, buf.data()); };
    for (long i = 0; i < warmup; ++i) mpi_rt();
    for (long i = 0; i < warmup; ++i) sf_rt();

    // Alternate which implementation goes first so that neither one
    // systematically benefits from a warm cache or a quiet moment.
    std::vector<double> t_mpi, t_sf;
    for (int r = 0; r < opt.rounds; ++r) {
      if (r % 2 == 0) {
        t_mpi.push_back(time_us(per_round, mpi_rt));
        t_sf.push_back(time_us(per_round, sf_rt));
      } else {
        t_sf.push_back(time_us(per_round, sf_rt));
        t_mpi.push_back(time_us(per_round, mpi_rt));
      }
    }
    CHECK_STF(stf_destroy(&sf));

    bench::Stats m = bench::summarize(t_mpi, per_round * opt.rounds);
    bench::Stats s = bench::summarize(t_sf, per_round * opt.rounds);
    mpi_stats.push_back(m);
    sf_stats.push_back(s);
    if (rank == 0) {
      char mcol[64], scol[64];
      std::snprintf(mcol, sizeof mcol, "%.2f [%.2f..%.2f]", m.median_us, m.min_us, m.max_us);
      std::snprintf(scol, sizeof scol, "%.2f [%.2f..%.2f]", s.median_us, s.min_us, s.max_us);
      std::printf("%10ld %26s %30s %7.2f %10.2f\n", size, mcol, scol, s.median_us / m.median_us,
                  s.median_us - m.median_us);
      std::fflush(stdout);
    }
  }

  if (rank == 0 && !opt.json.empty()) write_json(opt.json, sizes, mpi_stats, sf_stats);
  MPI_Finalize();
  return 0;
}
