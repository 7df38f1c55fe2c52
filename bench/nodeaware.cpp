// nodeaware: node-aware communication strategies on the SpMV ghost exchange
// of real matrices, against the standard one message per peer rank.
//
// For each matrix (Matrix Market files, by default ../shared/matrices) the
// rows are split over the ranks by nonzeros (stf_csr_create); the ghost SF
// of that split (roots: the owned entries of x, leaves: the ghost columns a
// rank needs; generated matrices build theirs rank by rank, split as
// generated_ghosts.h says) is copied into one SF per strategy (-stf_type basic, 2step,
// 3step, split), all on the same nodes (-stf_ranks_per_node K, or the
// hosts). Two exchanges are timed: the ghost exchange (stf_bcast of x,
// MPI_REPLACE) and its transpose (stf_reduce into x, MPI_SUM).
//
// Before timing, every strategy's results must equal basic's exactly (the
// values are integers, so sums in any order are exact), and basic's ghosts
// must be x at the ghost columns. Then each SF's message counters over a
// known number of exchanges give, per exchange, the messages and bytes sent
// to other nodes and inside a node; they are held to each strategy's
// definition (nodeaware_expect.h), and a disagreement is reported (exit
// code 3) with the run's results. Finally the strategies and directions take
// turns in --rounds rounds (bench::time_rotating): the time of one is the
// median round of its time per exchange on the slowest rank, and the ratio
// is that over basic's in the same direction.
#include <starforest.h>
#include <stf_apps.h>

#include "bench_common.h"
#include "check.h"
#include "generated_ghosts.h"
#include "nodeaware_expect.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#ifndef STF_MATRIX_DIR
#define STF_MATRIX_DIR "../shared/matrices"
#endif

namespace {

struct Options {
  std::string dir = STF_MATRIX_DIR, json;
  std::vector<std::string> matrices;  // empty: every *.mtx.gz in dir
  std::vector<std::string> strategies = {"basic", "2step", "3step", "split", "auto"};
  int rounds = 7;
  long iterations = 0;     // calls per round; 0: from the time budget
  double seconds = 3.0;    // timed seconds per matrix when iterations is 0
  long split_bytes = 16384;
  std::string profile;  // auto's -stf_model_profile
  int autotune = 0;     // auto's -stf_autotune
  int ranks_per_node = 0;  // 0: the hosts
  bool per_rank = false;   // also print every rank's inter-node counts
  bool explain = false;    // stf_explain of the last SF (auto's, by default) after the timing
  bench::Timing timing = bench::Timing::streamed;
};

void usage(const char *prog) {
  std::printf(
      "usage: mpiexec -n N %s [--matrices a,b,..] [--rounds R] [--iterations I] [--seconds S]\n"
      "                         [--split-bytes N] [--ranks-per-node K] [--strategies a,b] [--dir DIR]\n"
      "                         [--quick] [--per-rank] [--timing streamed|isolated] [--json FILE]\n"
      "  SpMV ghost exchange (bcast) and its transpose (reduce) on real or generated matrices with the\n"
      "  node-aware strategies, against basic (one message per peer rank).\n"
      "  --matrices L        names (bcsstk16) or paths; default every *.mtx.gz in DIR; also generated ghost\n"
      "                      graphs, each rank building its rows: stencil7_N, stencil27_N (N^3 points in boxes),\n"
      "                      powerlaw_N (N rows; bench/generated_ghosts.h)\n"
      "  --rounds R          rounds in which the strategies take turns (default 7)\n"
      "  --iterations I      exchanges per round and strategy (default: from --seconds)\n"
      "  --seconds S         timed seconds per matrix when --iterations is not given (default 3)\n"
      "  --split-bytes N     split's cap on one inter-node message (-stf_split_bytes, default 16384)\n"
      "  --ranks-per-node K  emulated nodes of K consecutive ranks (default: the hosts)\n"
      "  --profile FILE      auto's machine profile (-stf_model_profile; default: built-in values)\n"
      "  --explain           print stf_explain of the last strategy's SF (auto's) after timing\n"
      "  --autotune N        auto also times its best candidates over N rounds (-stf_autotune; default 0)\n"
      "  --strategies L      among basic,2step,3step,split,auto (default all; basic is always run: the baseline;\n"
      "                      auto is shown with what it chose, auto:NAME, and held to its rules)\n"
      "  --dir DIR           matrix directory (default $STF_MATRIX_DIR, else %s)\n"
      "  --quick             --rounds 3 --iterations 5 (a check that it runs)\n"
      "  --per-rank          also print each rank's inter-node messages and bytes per exchange\n"
      "  --timing T          streamed: each round's exchanges back to back (default); isolated: each alone after\n"
      "                      a barrier (one exchange from a common start, as autoselect --timing isolated)\n"
      "  --json FILE         also write the results as a JSON array\n",
      prog, STF_MATRIX_DIR);
}


int parse(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool v = i + 1 < argc;
    if (a == "--help" || a == "-h") return 1;
    if (a == "--matrices" && v) o.matrices = bench::split_list(argv[++i]);
    else if (a == "--strategies" && v) o.strategies = bench::split_list(argv[++i]);
    else if (a == "--rounds" && v) o.rounds = std::atoi(argv[++i]);
    else if (a == "--iterations" && v) o.iterations = std::atol(argv[++i]);
    else if (a == "--seconds" && v) o.seconds = std::atof(argv[++i]);
    else if (a == "--split-bytes" && v) o.split_bytes = std::atol(argv[++i]);
    else if (a == "--profile" && v) o.profile = argv[++i];
    else if (a == "--autotune" && v) o.autotune = std::atoi(argv[++i]);
    else if (a == "--ranks-per-node" && v) o.ranks_per_node = std::atoi(argv[++i]);
    else if (a == "--dir" && v) o.dir = argv[++i];
    else if (a == "--json" && v) o.json = argv[++i];
    else if (a == "--quick") o.rounds = 3, o.iterations = 5;
    else if (a == "--per-rank") o.per_rank = true;
    else if (a == "--explain") o.explain = true;
    else if (a == "--timing" && v && bench::parse_timing(argv[i + 1], &o.timing)) ++i;
    else {
      std::fprintf(stderr, "nodeaware: bad argument '%s' (try --help)\n", a.c_str());
      return 2;
    }
  }
  if (o.rounds < 1 || o.iterations < 0 || o.iterations > 100000 || o.seconds <= 0 || o.split_bytes < 1 ||
      o.ranks_per_node < 0) {
    std::fprintf(stderr, "nodeaware: --rounds, --iterations, --seconds, --split-bytes must be >= 1, "
                         "--iterations <= 100000, --ranks-per-node >= 0\n");
    return 2;
  }
  // basic first: it is the baseline every ratio and check refers to.
  o.strategies.erase(std::remove(o.strategies.begin(), o.strategies.end(), "basic"), o.strategies.end());
  o.strategies.insert(o.strategies.begin(), "basic");
  return 0;
}

std::string path_of(const Options &o, const std::string &m) {
  if (m.find('/') != std::string::npos) return m;
  return o.dir + "/" + m + (m.find(".mtx") != std::string::npos ? "" : ".mtx.gz");
}

std::string short_name(const std::string &path) {
  std::string n = path.substr(path.find_last_of('/') + 1);
  return n.substr(0, n.find(".mtx"));
}

using Graph = bench::GhostGraph;

// The ghost graph of one matrix, with the leaf array's extent.
Graph ghost_graph(const stf_coo &g) {
  stf_csr A = nullptr;
  CHECK_STF(stf_csr_create(MPI_COMM_WORLD, &g, STF_PARTITION_NNZ, &A));
  stf_sf ghost = nullptr;
  CHECK_STF(stf_csr_get_ghost_sf(A, &ghost));
  Graph h = bench::ghost_graph_of(ghost);
  h.rows = g.nrows;
  h.nnz = g.nnz;
  CHECK_STF(stf_csr_destroy(&A));
  return h;
}

// One SF per strategy on the graph; a strategy the library refuses ends the run.
stf_sf make_sf(const Options &o, const Graph &h, const std::string &strategy) {
  std::string opts = "-stf_type " + strategy + " -stf_ranks_per_node " + std::to_string(o.ranks_per_node);
  if (strategy == "split" || strategy == "auto") opts += " -stf_split_bytes " + std::to_string(o.split_bytes);
  if (strategy == "auto" && !o.profile.empty()) opts += " -stf_model_profile " + o.profile;
  if (strategy == "auto") opts += " -stf_autotune " + std::to_string(o.autotune);
  stf_sf sf = nullptr;
  CHECK_STF(stf_create(MPI_COMM_WORLD, &sf));
  if (stf_set_sf_options(sf, opts.c_str()) != STF_SUCCESS) {
    std::fprintf(stderr, "nodeaware: the library refuses '%s': %s\n", opts.c_str(), stf_last_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  CHECK_STF(stf_set_graph(sf, h.nroots, static_cast<stf_int>(h.ilocal.size()), h.ilocal.data(), STF_COPY_VALUES,
                          h.iremote.data(), STF_COPY_VALUES));
  CHECK_STF(stf_setup(sf));
  return sf;
}

// Aborts unless every rank found nothing wrong; what is wrong is printed
// by the ranks that found it.
void agree(long bad, const std::string &what) {
  long total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (total == 0) return;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::fprintf(stderr, "nodeaware: %s: %ld wrong values over all ranks\n", what.c_str(), total);
  MPI_Abort(MPI_COMM_WORLD, 2);
}

// Counts the entries of got that differ from want, printing the first.
long differ(const std::vector<double> &got, const std::vector<double> &want, const std::string &what) {
  long bad = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i] && bad++ == 0) {
      int rank;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      std::fprintf(stderr, "nodeaware: rank %d: %s: entry %zu is %.17g, must be %.17g\n", rank, what.c_str(), i,
                   got[i], want[i]);
    }
  return bad;
}

// Every strategy's bcast and reduce against basic's (sfs[0]), on values
// that are integers so that any summation order is exact.
void check_results(const std::vector<stf_sf> &sfs, const std::vector<std::string> &names, const Graph &h,
                   const std::string &matrix) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::vector<double> x(h.nroots), ghosts_want(h.nleafspace, -1.0), sums_want;
  for (stf_int i = 0; i < h.nroots; ++i) x[i] = 1e6 * rank + i;
  long bad = 0;
  for (size_t l = 0; l < h.ilocal.size(); ++l) ghosts_want[h.ilocal[l]] = 1e6 * h.iremote[l].rank + h.iremote[l].index;
  for (size_t s = 0; s < sfs.size(); ++s) {
    const std::string who = matrix + ": " + names[s];
    std::vector<double> ghosts(h.nleafspace, -1.0), sums(h.nroots);
    CHECK_STF(stf_bcast(sfs[s], MPI_DOUBLE, x.data(), ghosts.data(), MPI_REPLACE));
    bad += differ(ghosts, ghosts_want, who + " bcast");
    for (stf_int i = 0; i < h.nroots; ++i) sums[i] = 1000.0 * (i % 7);
    for (size_t l = 0; l < h.ilocal.size(); ++l) ghosts[h.ilocal[l]] = 1 + (rank * 31 + l) % 97;
    CHECK_STF(stf_reduce(sfs[s], MPI_DOUBLE, ghosts.data(), sums.data(), MPI_SUM));
    if (s == 0) sums_want = sums;
    else bad += differ(sums, sums_want, who + " reduce");
  }
  agree(bad, matrix + ": results differ from basic's");
}

// This rank's counters for one exchange of sf in one direction: taken over
// one exchange and checked against three (a count that changes from one
// exchange to the next is reported as a finding).
bench::RankCounts count_one(stf_sf sf, bool bcast, std::vector<double> &x, std::vector<double> &ghosts,
                            std::string &finding) {
  auto run = [&] {
    if (bcast) CHECK_STF(stf_bcast(sf, MPI_DOUBLE, x.data(), ghosts.data(), MPI_REPLACE));
    else CHECK_STF(stf_reduce(sf, MPI_DOUBLE, ghosts.data(), x.data(), MPI_SUM));
  };
  auto take = [&] {
    stf_stats s = stf_stats_init();
    CHECK_STF(stf_get_stats(sf, &s));
    return bench::RankCounts{s.messages_sent_off_node, s.bytes_sent_off_node, s.messages_sent_in_node,
                             s.bytes_sent_in_node};
  };
  CHECK_STF(stf_reset_stats(sf));
  run();
  const bench::RankCounts one = take();
  run();
  run();
  const bench::RankCounts three = take();
  if (three.off_msgs != 3 * one.off_msgs || three.off_bytes != 3 * one.off_bytes || three.in_msgs != 3 * one.in_msgs ||
      three.in_bytes != 3 * one.in_bytes)
    finding = "the counters of 3 exchanges are not 3 times those of one (" + std::to_string(three.off_msgs) +
              " inter-node messages against " + std::to_string(one.off_msgs) + ")";
  return one;
}

// The counters of every rank, on rank 0 (elsewhere empty).
std::vector<bench::RankCounts> gather_counts(const bench::RankCounts &c) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long long mine[4] = {c.off_msgs, c.off_bytes, c.in_msgs, c.in_bytes};
  std::vector<long long> all(rank == 0 ? 4 * size : 0);
  MPI_Gather(mine, 4, MPI_LONG_LONG, all.data(), 4, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  std::vector<bench::RankCounts> out;
  for (size_t r = 0; r < all.size() / 4; ++r)
    out.push_back(bench::RankCounts{all[4 * r], all[4 * r + 1], all[4 * r + 2], all[4 * r + 3]});
  return out;
}

// The remote leaves of every rank, on rank 0 (elsewhere empty).
std::vector<bench::Edge> gather_edges(const Graph &h) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<long long> mine;
  for (const stf_node &n : h.iremote)
    if (n.rank != rank) mine.insert(mine.end(), {rank, n.rank, n.index});
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(size), displs(size, 0);
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  for (int r = 1; r < size; ++r) displs[r] = displs[r - 1] + counts[r - 1];
  std::vector<long long> all(rank == 0 ? displs[size - 1] + counts[size - 1] : 0);
  MPI_Gatherv(mine.data(), count, MPI_LONG_LONG, all.data(), counts.data(), displs.data(), MPI_LONG_LONG, 0,
              MPI_COMM_WORLD);
  std::vector<bench::Edge> edges;
  for (size_t k = 0; k + 2 < all.size(); k += 3)
    edges.push_back(bench::Edge{static_cast<int>(all[k]), static_cast<int>(all[k + 1]), all[k + 2]});
  return edges;
}

struct Measured {
  std::string strategy;
  bool bcast;
  bench::Stats time;
  std::vector<bench::RankCounts> counts;  // rank 0 only
  std::string finding;                    // rank 0 only: where counts break the definition
};

// Returns false when a count broke a strategy's definition.
bool run_matrix(const Options &o, const std::string &name, const Graph &h, bench::JsonLog &log) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<stf_sf> sfs;
  std::vector<std::string> names;  // "auto" is shown with its choice, "auto:3step"
  for (const std::string &s : o.strategies) {
    sfs.push_back(make_sf(o, h, s));
    const char *type = "";
    CHECK_STF(stf_get_type(sfs.back(), &type));
    names.push_back(s == "auto" ? "auto:" + std::string(type) : s);
  }

  // The nodes as basic's SF sees them; every strategy must see the same.
  int node = 0, nnodes = 0;
  CHECK_STF(stf_get_node_layout(sfs[0], &node, &nnodes, nullptr, nullptr));
  for (size_t s = 1; s < sfs.size(); ++s) {
    int n2 = 0, nn2 = 0;
    CHECK_STF(stf_get_node_layout(sfs[s], &n2, &nn2, nullptr, nullptr));
    if (n2 != node || nn2 != nnodes) {
      std::fprintf(stderr, "nodeaware: rank %d: %s sees node %d of %d, basic node %d of %d\n", rank,
                   names[s].c_str(), n2, nn2, node, nnodes);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  std::vector<int> node_of(size);
  MPI_Allgather(&node, 1, MPI_INT, node_of.data(), 1, MPI_INT, MPI_COMM_WORLD);

  check_results(sfs, names, h, name);

  // Buffers of the counted and timed exchanges; reduces accumulate into x.
  std::vector<double> x(h.nroots, 1.0), ghosts(h.nleafspace, 1.0);
  std::vector<Measured> m;
  std::vector<std::function<void()>> calls;
  for (int dir = 0; dir < 2; ++dir)
    for (size_t s = 0; s < sfs.size(); ++s) {
      Measured r{names[s], dir == 0, {}, {}, {}};
      std::string finding;
      const bench::RankCounts c = count_one(sfs[s], r.bcast, x, ghosts, finding);
      r.counts = gather_counts(c);
      int local = !finding.empty(), any = 0;
      MPI_Reduce(&local, &any, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
      if (any) r.finding = "counters not constant per exchange on some rank; " + finding + "\n";
      m.push_back(r);
      stf_sf sf = sfs[s];
      if (r.bcast) calls.push_back([sf, &x, &ghosts] { CHECK_STF(stf_bcast(sf, MPI_DOUBLE, x.data(), ghosts.data(), MPI_REPLACE)); });
      else calls.push_back([sf, &x, &ghosts] { CHECK_STF(stf_reduce(sf, MPI_DOUBLE, ghosts.data(), x.data(), MPI_SUM)); });
    }

  // Calls per round: from the time budget unless given; the estimate is the
  // same on every rank (time_per_call takes the slowest rank's).
  long iters = o.iterations;
  if (iters == 0) {
    double per_round = 0;
    for (auto &call : calls) per_round += bench::time_per_call(MPI_COMM_WORLD, 3, call);
    iters = std::clamp(std::lround(o.seconds / (o.rounds * per_round)), 2L, 100000L);
  }
  const std::vector<bench::Stats> st = bench::time_rotating(MPI_COMM_WORLD, o.rounds, iters, calls, o.timing);
  for (size_t k = 0; k < m.size(); ++k) m[k].time = st[k];
  if (o.explain) {  // predictions beside what the SF measured (its timings)
    if (rank == 0) std::printf("\n## %s: stf_explain of the %s SF\n", name.c_str(), names.back().c_str());
    std::fflush(stdout);
    CHECK_STF(stf_explain(sfs.back(), MPI_DOUBLE, stdout));
  }
  for (stf_sf &sf : sfs) CHECK_STF(stf_destroy(&sf));

  const std::vector<bench::Edge> edges = gather_edges(h);
  long long ghosts_total = 0, mine = static_cast<long long>(h.ilocal.size());
  MPI_Reduce(&mine, &ghosts_total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank != 0) return true;

  bool ok = true;
  const bench::Expectation want[2] = {bench::expect(edges, node_of, true, sizeof(double), o.split_bytes),
                                      bench::expect(edges, node_of, false, sizeof(double), o.split_bytes)};
  std::printf("\n## %s: %lld rows, %lld nonzeros, %lld ghost entries; %ld exchanges per round; distinct inter-node "
              "bytes per exchange %lld\n",
              name.c_str(), (long long)h.rows, (long long)h.nnz, ghosts_total, iters, want[0].distinct_off_bytes);
  std::printf("%-10s %-6s %-8s %32s %6s %9s %10s %8s %12s %9s %12s %5s\n", "matrix", "dir", "strategy",
              "us per exchange [min..max]", "ratio", "inter max", "inter tot", "bound", "inter bytes", "in-node",
              "in-node B", "check");
  for (size_t k = 0; k < m.size(); ++k) {
    Measured &r = m[k];
    const bench::Expectation &e = want[r.bcast ? 0 : 1];
    r.finding += bench::check_counts(r.strategy, e, node_of, r.counts);
    bench::RankCounts tot;
    long long off_max = 0;
    for (const bench::RankCounts &c : r.counts) {
      tot.off_msgs += c.off_msgs, tot.off_bytes += c.off_bytes, tot.in_msgs += c.in_msgs, tot.in_bytes += c.in_bytes;
      off_max = std::max(off_max, c.off_msgs);
    }
    const double ratio = r.time.us / m[r.bcast ? 0 : sfs.size()].time.us;
    const char *dir = r.bcast ? "bcast" : "reduce";
    const std::string bound = bench::bound_text(r.strategy, e);
    std::printf("%-10s %-6s %-8s %32s %6.2f %9lld %10lld %8s %12lld %9lld %12lld %5s\n", name.c_str(), dir,
                r.strategy.c_str(), bench::range_text(r.time).c_str(), ratio, off_max, tot.off_msgs, bound.c_str(),
                tot.off_bytes, tot.in_msgs, tot.in_bytes, r.finding.empty() ? "ok" : "FAIL");
    bench::Record rec;
    rec.timing("nodeaware", "starforest", h.rows, size, r.time)
        .str("matrix", name)
        .str("strategy", r.strategy)
        .str("direction", dir)
        .str("timing", bench::timing_name(o.timing))
        .str("transport", r.strategy)
        .integer("nodes", nnodes)
        .integer("ranks_per_node", o.ranks_per_node)
        .integer("split_bytes", o.split_bytes)
        .integer("nnz", h.nnz)
        .integer("ghost_entries", ghosts_total)
        .integer("inter_node_messages_max", off_max)
        .integer("inter_node_messages", tot.off_msgs)
        .integer("inter_node_bytes", tot.off_bytes)
        .integer("in_node_messages", tot.in_msgs)
        .integer("in_node_bytes", tot.in_bytes)
        .integer("inter_node_bytes_distinct", e.distinct_off_bytes)
        .str("inter_node_messages_bound", bound)
        .boolean("counts_ok", r.finding.empty())
        .num("ratio_to_standard", ratio);
    log.add(rec);
  }
  if (o.per_rank) {
    // What each rank sent, beside the other nodes it has data for (the
    // inter-node messages one origin rank needs with 2step).
    for (int dir = 0; dir < 2; ++dir) {
      std::printf("# %s %s: per rank, other nodes with data from it:", name.c_str(), dir ? "reduce" : "bcast");
      for (long long n : want[dir].rank_dest_nodes) std::printf(" %lld", n);
      std::printf("\n");
    }
    for (const Measured &r : m) {
      std::printf("# %s %s %s: per rank, inter-node messages (bytes):", name.c_str(), r.bcast ? "bcast" : "reduce",
                  r.strategy.c_str());
      for (const bench::RankCounts &c : r.counts) std::printf(" %lld (%lld)", c.off_msgs, c.off_bytes);
      std::printf("\n");
    }
  }
  for (const Measured &r : m)
    if (!r.finding.empty()) {
      ok = false;
      std::istringstream lines(r.finding);
      for (std::string line; std::getline(lines, line);)
        std::printf("# COUNT CHECK FAILED: %s %s %s: %s\n", name.c_str(), r.bcast ? "bcast" : "reduce",
                    r.strategy.c_str(), line.c_str());
    }
  std::fflush(stdout);
  return ok;
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Options opt;
  if (const char *d = std::getenv("STF_MATRIX_DIR")) opt.dir = d;
  const int p = parse(argc, argv, opt);
  if (p == 1 && rank == 0) usage(argv[0]);
  if (p != 0) {
    MPI_Finalize();
    return p == 1 ? 0 : 2;
  }
  bool have_dir = false;
  if (DIR *d = opendir(opt.dir.c_str())) have_dir = true, closedir(d);
  bool need_dir = opt.matrices.empty();
  for (const std::string &m : opt.matrices)
    need_dir |= m.find('/') == std::string::npos && !bench::generated_ghosts(MPI_COMM_WORLD, m, nullptr);
  if (!have_dir && need_dir) {
    // No matrices on this machine: a distinct code that CTest reports as skipped.
    if (rank == 0) std::fprintf(stderr, "nodeaware: no matrix directory %s (--dir or STF_MATRIX_DIR)\n", opt.dir.c_str());
    MPI_Finalize();
    return 77;
  }
  std::vector<std::string> paths = opt.matrices.empty() ? bench::matrix_names(opt.dir) : opt.matrices;
  for (std::string &m : paths)
    if (!bench::generated_ghosts(MPI_COMM_WORLD, m, nullptr)) m = path_of(opt, m);
  if (paths.empty()) {
    if (rank == 0) std::fprintf(stderr, "nodeaware: no *.mtx.gz in %s (--dir or --matrices)\n", opt.dir.c_str());
    MPI_Finalize();
    return 1;
  }

  // Records say where the ranks really were (hosts), nodes say what the SFs used.
  bench::set_host_layout(bench::layout_of(bench::host_of_ranks(MPI_COMM_WORLD)));
  const bench::HostLayout layout = bench::host_layout(size);
  if (rank == 0) {
    std::string strategies;
    for (const std::string &s : opt.strategies) strategies += (strategies.empty() ? "" : ",") + s;
    std::printf("# nodeaware: %d ranks on %d host(s) (ranks per host: %s); nodes: %s; strategies %s; split cap %ld B\n",
                size, layout.hosts, layout.ranks_per_host.c_str(),
                opt.ranks_per_node ? ("emulated, " + std::to_string(opt.ranks_per_node) + " consecutive ranks each").c_str()
                                   : "the hosts",
                strategies.c_str(), opt.split_bytes);
    std::printf("# per exchange of MPI_DOUBLE (bcast: x to the ghosts, MPI_REPLACE; reduce: ghosts into x, MPI_SUM): "
                "us = median of %d rounds [min..max], %s, slowest rank; ratio = us / basic's, same direction;\n"
                "# inter = messages to other nodes (max per rank, total over ranks), bound = what the strategy's "
                "definition gives for that total (= exact, <= at most); bytes and in-node messages: totals\n",
                opt.rounds, bench::timing_name(opt.timing));
  }
  bench::JsonLog log;
  bool ok = true, refused = false;
  for (const std::string &path : paths) {
    Graph h;
    if (bench::generated_ghosts(MPI_COMM_WORLD, path, nullptr)) {
      // Refused on every rank alike (rank 0 says why): the run ends here.
      if (!bench::generated_ghosts(MPI_COMM_WORLD, path, &h)) {
        refused = true;
        break;
      }
      ok &= run_matrix(opt, path, h, log);
      continue;
    }
    stf_coo g{};
    if (stf_mm_read(path.c_str(), &g) != STF_SUCCESS) {
      if (rank == 0) std::fprintf(stderr, "nodeaware: cannot read %s: %s\n", path.c_str(), stf_last_error_message());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (g.nrows == g.ncols) ok &= run_matrix(opt, short_name(path), ghost_graph(g), log);
    else if (rank == 0) std::printf("# %s: not square, skipped\n", short_name(path).c_str());
    stf_coo_free(&g);
  }
  int rc = refused ? 1 : ok ? 0 : 3;
  if (rank == 0 && !opt.json.empty() && !log.write(opt.json)) rc = 1;
  // The last line says that nothing failed (ctest matches it with the output it checks).
  if (rank == 0 && rc == 0) std::printf("# nodeaware: every check passed\n");
  if (rank == 0 && !ok) std::fprintf(stderr, "nodeaware: message counts break a strategy's definition (see COUNT CHECK lines)\n");
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return rc;
}
