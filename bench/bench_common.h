// Shared by the benchmarks: timing summaries and JSON records, so that every
// benchmark reports the same fields (benchmark, impl, size, ranks, us,
// min_us, max_us, iterations, machine, date, plus the options that matter)
// in one format that scripts/plot reads.
#pragma once

#include <mpi.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace bench {

// Median of timed rounds with the fastest and slowest round, in microseconds.
struct Stats {
  double us = 0, min_us = 0, max_us = 0;
  long iterations = 0;  // timed iterations over all rounds
};

// samples_us: one time per round (already per iteration). Odd counts give a
// real round as the median; even counts average the middle two.
Stats summarize(std::vector<double> samples_us, long iterations);

// One JSON object; fields keep the order they were added in.
class Record {
 public:
  Record &str(const std::string &key, const std::string &value);
  Record &num(const std::string &key, double value);
  Record &integer(const std::string &key, long long value);
  Record &boolean(const std::string &key, bool value);
  Record &object(const std::string &key, const Record &value);  // a nested object
  // benchmark, impl, size, ranks, hosts, ranks_per_host, us, min_us, max_us, iterations, machine, date.
  Record &timing(const std::string &benchmark, const std::string &impl, long long size, int ranks,
                 const Stats &s);
  std::string text() const;

 private:
  std::vector<std::pair<std::string, std::string>> fields_;  // key, JSON value
};

// Where the ranks of the run live, for every record's `hosts` and
// `ranks_per_host` (ranks on each host in host order, "2,1,2").
struct HostLayout {
  int hosts = 1;
  std::string ranks_per_host;
};

// Collective over comm: each rank's host index (0, 1, ... in the order of
// the hosts' lowest ranks), from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED).
std::vector<int> host_of_ranks(MPI_Comm comm);
// The layout those indices describe.
HostLayout layout_of(const std::vector<int> &host_of);
// The layout the records report: the one set here (by a benchmark that
// measured it), else the one scripts/cluster run exports
// (STF_CLUSTER_HOSTS, STF_CLUSTER_RANKS_PER_HOST), else one host with
// every rank.
void set_host_layout(const HostLayout &layout);
HostLayout host_layout(int ranks);

// Collects records and writes them as a JSON array. Call write() on one rank.
class JsonLog {
 public:
  void add(const Record &r) { records_.push_back(r); }
  // False (with a message on stderr) when the file cannot be written.
  bool write(const std::string &path) const;
  bool empty() const { return records_.empty(); }

 private:
  std::vector<Record> records_;
};

// The largest of every rank's value (collective over comm).
double max_over_ranks(double value, MPI_Comm comm);

// Times `iters` calls of f between barriers; seconds per call on the slowest rank.
template <class F>
double time_per_call(MPI_Comm comm, long iters, F &&f) {
  MPI_Barrier(comm);
  double t0 = MPI_Wtime();
  for (long i = 0; i < iters; ++i) f();
  return max_over_ranks((MPI_Wtime() - t0) / (double)iters, comm);
}

// How a round times its calls. streamed: back to back between barriers,
// seconds per call on the slowest rank (a solver's loop of exchanges, where
// one call's tail overlaps the next one's start). isolated: each call alone
// after a barrier, the slowest rank's time of each call, averaged (one
// exchange from a common start: what the models predict).
enum class Timing { streamed, isolated };
// "streamed" or "isolated"; false for anything else.
bool parse_timing(const std::string &name, Timing *t);
const char *timing_name(Timing t);

// Times `iters` calls of f, each after a barrier; the mean over calls of
// the slowest rank's seconds for that call.
double time_isolated_call(MPI_Comm comm, long iters, const std::function<void()> &f);

// Times several implementations of one operation in `rounds` rounds of
// `iters` calls each, rotating which one goes first so that none of them
// systematically gets the warm cache or the quiet moment. Each call is
// preceded by one untimed call. Returns microseconds per call (slowest
// rank) per implementation, the calls timed as `timing` says (above).
std::vector<Stats> time_rotating(MPI_Comm comm, int rounds, long iters,
                                 const std::vector<std::function<void()>> &impls,
                                 Timing timing = Timing::streamed);
// The same with calls per round per implementation (iters[i] for impls[i]).
std::vector<Stats> time_rotating(MPI_Comm comm, int rounds, const std::vector<long> &iters,
                                 const std::vector<std::function<void()>> &impls,
                                 Timing timing = Timing::streamed);

// "12.34 [11.90..13.10]": the median with the range, for tables.
std::string range_text(const Stats &s);

// The matrices of a directory: the *.mtx.gz files' names without the
// suffix, sorted (none if it cannot be read).
std::vector<std::string> matrix_names(const std::string &dir);

// "a,b,,c" -> {"a", "b", "c"}: a command line's comma-separated list.
std::vector<std::string> split_list(const std::string &list);

}  // namespace bench
