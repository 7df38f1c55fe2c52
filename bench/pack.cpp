// pack: what packing and unpacking cost per index pattern, against memcpy of
// the same bytes measured in the same run.
//
// Each pattern is the self part of a one-rank star forest on MPI_COMM_SELF,
// built with the public API as a user would: the roots are a large array
// (64 MiB by default, beyond the last-level cache) that the pattern indexes,
// the leaves a contiguous buffer. A bcast with MPI_REPLACE then runs exactly
// the pack kernel (gather into a contiguous buffer), and a reduce the unpack
// kernel (MPI_REPLACE; MPI_SUM for the pattern with duplicates). Patterns:
//   contiguous   roots 0..m-1
//   face2d       the interior of a ghosted 2D array (rows with a gap)
//   xface/yface/zface  the faces of a ghosted 3D box (columns, rows, plane)
//   random       a random permutation of the whole array
//   random_dups  uniform random roots, repeats included (unpack with SUM)
//   permuted     random's roots, and the leaves a random permutation of the
//                leaf array: both calls are the scatter kernel, from and to
//                indexed units (the reduce with SUM)
// Units are doubles in blocks of 1 and 3 (MPI_DOUBLE, a contiguous type of 3).
//
// Every result is checked once before timing. Timings: per pattern the three
// measurements (pack, unpack, memcpy) alternate in --reps rounds of at least
// --min-ms each; the median round is reported with [min..max]. Besides the
// ratio of message bytes per second to memcpy's, each kernel is set against
// the cache-line bound: a unit moves whole 64-byte lines, so the bytes of
// the lines a call touches (both arrays) per second, over the same for
// memcpy (source and destination lines), say how close it comes to moving
// those lines as fast as memcpy moves its own.
#include <starforest.h>

#include "bench_common.h"
#include "check.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Options {
  double mib = 64;   // root array size
  int reps = 7;      // rounds; odd, so the median is a real round
  double min_ms = 20;
  std::vector<std::string> patterns = {"contiguous", "face2d", "xface", "yface", "zface", "random", "random_dups",
                                       "permuted"};
  std::string json;
};

// Root offsets of one pattern (leaf i reads root roots[i]) over n units.
std::vector<stf_int> pattern_roots(const std::string &name, stf_int n) {
  std::vector<stf_int> r;
  std::mt19937 rng(12345);
  if (name == "contiguous") {
    r.resize(n);
    std::iota(r.begin(), r.end(), 0);
  } else if (name == "face2d") {
    const stf_int s = static_cast<stf_int>(std::sqrt(static_cast<double>(n)));
    for (stf_int j = 1; j < s - 1; ++j)
      for (stf_int i = 1; i < s - 1; ++i) r.push_back(i + s * j);
  } else if (name == "xface" || name == "yface" || name == "zface") {
    stf_int c = static_cast<stf_int>(std::cbrt(static_cast<double>(n)));
    while (static_cast<long long>(c + 1) * (c + 1) * (c + 1) <= n) ++c;
    auto slot = [c](stf_int i, stf_int j, stf_int k) { return i + c * (j + c * k); };
    for (stf_int a = 1; a < c - 1; ++a)
      for (stf_int b = 1; b < c - 1; ++b)
        r.push_back(name == "xface" ? slot(0, b, a) : name == "yface" ? slot(b, 0, a) : slot(b, a, 0));
  } else if (name == "random" || name == "permuted") {
    r.resize(n);
    std::iota(r.begin(), r.end(), 0);
    std::shuffle(r.begin(), r.end(), rng);
  } else {  // random_dups
    r.resize(n);
    for (stf_int &x : r) x = static_cast<stf_int>(rng() % static_cast<unsigned>(n));
  }
  return r;
}

// The self part's root pattern as the SF's view describes it.
std::string analysis_of(stf_sf sf) {
  std::FILE *f = std::tmpfile();
  CHECK_STF(stf_view(sf, f));
  std::string s;
  std::rewind(f);
  for (int c; (c = std::fgetc(f)) != EOF;) s += static_cast<char>(c);
  std::fclose(f);
  const std::size_t a = s.find("roots ", s.find("self:")), b = s.find(", leaves", a);
  return a == std::string::npos || b == std::string::npos ? "?" : s.substr(a + 6, b - a - 6);
}

// Distinct 64-byte lines that units of ub bytes at these offsets of base cover.
long long lines_touched(const char *base, const std::vector<stf_int> &units, std::size_t ub) {
  std::vector<std::uintptr_t> lines;
  for (stf_int u : units) {
    const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(base) + static_cast<std::size_t>(u) * ub;
    for (std::uintptr_t l = first / 64; l <= (first + ub - 1) / 64; ++l) lines.push_back(l);
  }
  std::sort(lines.begin(), lines.end());
  return static_cast<long long>(std::unique(lines.begin(), lines.end()) - lines.begin());
}
long long lines_touched(const void *base, std::size_t bytes) {
  const std::uintptr_t b = reinterpret_cast<std::uintptr_t>(base);
  return bytes ? static_cast<long long>((b + bytes - 1) / 64 - b / 64 + 1) : 0;
}

// Microseconds per call over `iters` calls.
template <class F>
double time_us(long iters, F &&f) {
  return 1e6 * bench::time_per_call(MPI_COMM_SELF, iters, f);
}

void wrong(const char *what, const std::string &pattern, long i) {
  std::fprintf(stderr, "pack: %s of %s is wrong at unit %ld\n", what, pattern.c_str(), i);
  MPI_Abort(MPI_COMM_WORLD, 2);
}

// One pattern, one block size: check, then time pack, unpack and memcpy.
void run_pattern(const Options &o, const std::string &name, int bs, bench::JsonLog *log) {
  MPI_Datatype unit = MPI_DOUBLE;
  if (bs > 1) {
    MPI_Type_contiguous(bs, MPI_DOUBLE, &unit);
    MPI_Type_commit(&unit);
  }
  const std::size_t ub = 8 * static_cast<std::size_t>(bs);
  const stf_int n = static_cast<stf_int>(o.mib * 1048576 / static_cast<double>(ub));
  const std::vector<stf_int> roots = pattern_roots(name, n);
  const stf_int m = static_cast<stf_int>(roots.size());
  std::vector<stf_node> remote(m);
  for (stf_int i = 0; i < m; ++i) remote[i] = stf_node{0, roots[i]};
  // Leaf i's place in the leaf array: i, or a random permutation.
  std::vector<stf_int> leaves(m);
  std::iota(leaves.begin(), leaves.end(), 0);
  const bool permuted = name == "permuted";
  if (permuted) std::shuffle(leaves.begin(), leaves.end(), std::mt19937(54321));
  stf_sf sf;
  CHECK_STF(stf_create(MPI_COMM_SELF, &sf));
  CHECK_STF(stf_set_graph(sf, n, m, permuted ? leaves.data() : nullptr, STF_COPY_VALUES, remote.data(),
                          STF_COPY_VALUES));
  CHECK_STF(stf_setup(sf));
  const bool summed = name == "random_dups" || permuted;  // reduced with MPI_SUM
  const MPI_Op unpack_op = summed ? MPI_SUM : MPI_REPLACE;

  std::vector<double> rootdata(static_cast<std::size_t>(n) * bs), leafdata(static_cast<std::size_t>(m) * bs, 0.0);
  for (std::size_t e = 0; e < rootdata.size(); ++e) rootdata[e] = static_cast<double>(e % 1000);
  const std::size_t bytes = static_cast<std::size_t>(m) * ub;
  std::vector<char> from(bytes, 1), to(bytes, 0);

  // Check once: pack gathers, unpack scatters back (REPLACE) or adds (SUM).
  CHECK_STF(stf_bcast(sf, unit, rootdata.data(), leafdata.data(), MPI_REPLACE));
  for (stf_int i = 0; i < m; ++i)
    for (int e = 0; e < bs; ++e)
      if (leafdata[static_cast<std::size_t>(leaves[i]) * bs + e] !=
          rootdata[static_cast<std::size_t>(roots[i]) * bs + e])
        wrong("pack", name, i);
  std::vector<double> want = rootdata;
  for (double &x : leafdata) x = 1.0;
  for (stf_int i = 0; i < m; ++i)
    for (int e = 0; e < bs; ++e) {
      double &w = want[static_cast<std::size_t>(roots[i]) * bs + e];
      w = summed ? w + 1.0 : 1.0;
    }
  CHECK_STF(stf_reduce(sf, unit, leafdata.data(), rootdata.data(), unpack_op));
  if (rootdata != want) wrong("unpack", name, -1);

  auto pack = [&] { CHECK_STF(stf_bcast(sf, unit, rootdata.data(), leafdata.data(), MPI_REPLACE)); };
  auto unpack = [&] { CHECK_STF(stf_reduce(sf, unit, leafdata.data(), rootdata.data(), unpack_op)); };
  auto copy = [&] { std::memcpy(to.data(), from.data(), bytes); };
  // Iterations per round from one call each, so every round lasts >= min_ms.
  const double probe = std::max({time_us(1, pack), time_us(1, unpack), time_us(1, copy), 1.0});
  const long iters = std::max(1L, std::lround(o.min_ms * 1000 / probe));
  CHECK_STF(stf_reset_stats(sf));
  const std::vector<bench::Stats> st3 = bench::time_rotating(MPI_COMM_SELF, o.reps, iters, {pack, unpack, copy});
  stf_stats st = stf_stats_init();
  CHECK_STF(stf_get_stats(sf, &st));
  const long calls = 2 * (iters + 1) * o.reps;  // pack and unpack, timed and one warm-up per round
  const bench::Stats &sm = st3[2];
  const double mgbps = static_cast<double>(bytes) / sm.us / 1e3;
  // Bytes of the lines each call touches: the indexed array and the buffer.
  const double kernel_lines = 64.0 * static_cast<double>(lines_touched(reinterpret_cast<const char *>(rootdata.data()),
                                                                       roots, ub) +
                                                         lines_touched(leafdata.data(), bytes));
  const double memcpy_lines =
      64.0 * static_cast<double>(lines_touched(from.data(), bytes) + lines_touched(to.data(), bytes));
  const double memcpy_line_gbps = memcpy_lines / sm.us / 1e3;
  const std::string analysis = analysis_of(sf);
  for (int k = 0; k < 2; ++k) {
    const bench::Stats &s = st3[k];
    const double gbps = static_cast<double>(bytes) / s.us / 1e3;
    const double line_ratio = kernel_lines / s.us / 1e3 / memcpy_line_gbps;
    bench::Record rec;
    rec.timing("pack", k == 0 ? "pack" : "unpack", static_cast<long long>(bytes), 1, s)
        .str("op", k == 0 || !summed ? "MPI_REPLACE" : "MPI_SUM")
        .str("pattern", name)
        .integer("bs", bs)
        .str("memory", "host")
        .num("gbps", gbps)
        .num("memcpy_gbps", mgbps)
        .num("ratio", gbps / mgbps)
        .num("line_bytes", kernel_lines)
        .num("memcpy_line_bytes", memcpy_lines)
        .num("line_ratio", line_ratio);
    log->add(rec);
    std::printf("%-12s %2d %-7s %-7s %10.2f %9.1f [%7.1f..%7.1f] %8.2f %8.2f %6.2f %6.2f  %s\n", name.c_str(), bs,
                k == 0 ? "pack" : "unpack", k == 0 || !summed ? "REPLACE" : "SUM", static_cast<double>(bytes) / 1048576,
                s.us, s.min_us, s.max_us, gbps, mgbps, gbps / mgbps, line_ratio, analysis.c_str());
  }
  // Calls counted by the SF over the timed rounds: the self part is one
  // scatter kernel per call, never a pack into a buffer.
  std::printf("%-12s %2d stats   pack_calls %lld, unpack_calls %lld, scatter_calls %lld (%ld calls)\n", name.c_str(),
              bs, st.pack_calls, st.unpack_calls, st.scatter_calls, calls);
  std::fflush(stdout);
  CHECK_STF(stf_destroy(&sf));
  if (bs > 1) MPI_Type_free(&unit);
}

// With two ranks or more: contiguous messages between ranks 0 and 1 go
// straight from and into user memory. The counters prove it.
void no_copy_proof(int rank, int size) {
  const stf_int n = 1 << 20;
  stf_sf sf;
  CHECK_STF(stf_create(MPI_COMM_WORLD, &sf));
  std::vector<stf_node> remote(rank < 2 ? n : 0);
  for (stf_node &r : remote) r = stf_node{1 - rank, static_cast<stf_int>(&r - remote.data())};
  CHECK_STF(stf_set_graph(sf, rank < 2 ? n : 0, static_cast<stf_int>(remote.size()), nullptr, STF_COPY_VALUES,
                          remote.data(), STF_COPY_VALUES));
  std::vector<double> roots(n, rank), leaves(n, -1);
  for (int it = 0; it < 10; ++it) {
    CHECK_STF(stf_bcast(sf, MPI_DOUBLE, roots.data(), leaves.data(), MPI_REPLACE));
    CHECK_STF(stf_reduce(sf, MPI_DOUBLE, leaves.data(), roots.data(), MPI_REPLACE));
  }
  stf_stats st = stf_stats_init();
  CHECK_STF(stf_get_stats(sf, &st));
  if (rank == 0)
    std::printf("# no-copy proof, %d ranks: 10 x (bcast + reduce) of %d contiguous doubles between ranks 0 and 1: "
                "pack_calls %lld, unpack_calls %lld, bytes_packed %lld, messages sent %lld, received %lld\n",
                size, n, st.pack_calls, st.unpack_calls, st.bytes_packed, st.messages_sent, st.messages_received);
  if (rank < 2 && (st.pack_calls != 0 || st.unpack_calls != 0 || leaves[0] != 1 - rank)) {
    std::fprintf(stderr, "pack: rank %d: contiguous messages were copied or wrong\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  CHECK_STF(stf_destroy(&sf));
}

void usage(const char *prog) {
  std::printf(
      "usage: mpiexec -n 1 %s [--mib M] [--reps R] [--min-ms T] [--patterns a,b,..] [--json FILE]\n"
      "  Pack and unpack bandwidth of starforest's kernels per index pattern (the self\n"
      "  part of a one-rank SF), against memcpy of the same bytes in the same run.\n"
      "  --mib M      size of the indexed root array in MiB (default 64)\n"
      "  --reps R     interleaved rounds per measurement (default 7)\n"
      "  --min-ms T   shortest round in milliseconds (default 20)\n"
      "  --patterns L comma-separated subset of contiguous,face2d,xface,yface,zface,random,random_dups,\n"
      "               permuted\n"
      "  --json FILE  also write the results as a JSON array\n"
      "  With 2 or more ranks, rank 0 times and ranks 0 and 1 also show that\n"
      "  contiguous messages between ranks are never packed.\n",
      prog);
}

int parse(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--help" || a == "-h") return 1;
    if (a == "--mib" && has_value)
      o.mib = std::atof(argv[++i]);
    else if (a == "--reps" && has_value)
      o.reps = std::atoi(argv[++i]);
    else if (a == "--min-ms" && has_value)
      o.min_ms = std::atof(argv[++i]);
    else if (a == "--json" && has_value)
      o.json = argv[++i];
    else if (a == "--patterns" && has_value) {
      std::vector<std::string> all = o.patterns, chosen;
      std::stringstream ss(argv[++i]);
      for (std::string name; std::getline(ss, name, ',');) {
        if (std::find(all.begin(), all.end(), name) == all.end()) {
          std::fprintf(stderr, "pack: unknown pattern '%s'\n", name.c_str());
          return 2;
        }
        chosen.push_back(name);
      }
      o.patterns = chosen;
    }
    else {
      std::fprintf(stderr, "pack: bad argument '%s' (try --help)\n", a.c_str());
      return 2;
    }
  }
  if (!(o.mib >= 1 && o.mib <= 4096) || o.reps < 1 || !(o.min_ms > 0)) {
    std::fprintf(stderr, "pack: need --mib in [1, 4096], --reps >= 1, --min-ms > 0\n");
    return 2;
  }
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Options o;
  const int p = parse(argc, argv, o);
  if (p != 0) {
    if (p == 1 && rank == 0) usage(argv[0]);
    MPI_Finalize();
    return p == 1 ? 0 : 1;
  }
  int rc = 0;
  if (rank == 0) {
    bench::JsonLog log;
    std::printf("# pack: %.0f MiB root array, doubles in blocks of bs; median of %d rounds [min..max]; "
                "GB/s = message bytes / time; ratio = GB/s / memcpy's; lines = (64-byte lines touched / time) / "
                "memcpy's (its source and destination lines)\n",
                o.mib, o.reps);
    std::printf("%-12s %2s %-7s %-7s %10s %9s %19s %8s %8s %6s %6s  %s\n", "pattern", "bs", "kernel", "op", "MiB",
                "us", "[min..max]", "GB/s", "memcpy", "ratio", "lines", "analysis");
    for (const std::string &name : o.patterns)
      for (int bs : {1, 3}) run_pattern(o, name, bs, &log);
    if (!o.json.empty() && !log.write(o.json)) rc = 1;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (size >= 2) no_copy_proof(rank, size);
  MPI_Finalize();
  return rc;
}
