#include "bench_common.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <ctime>

namespace bench {

Stats summarize(std::vector<double> v, long iterations) {
  Stats s;
  s.iterations = iterations;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  size_t m = v.size();
  s.us = m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
  s.min_us = v.front();
  s.max_us = v.back();
  return s;
}

double max_over_ranks(double value, MPI_Comm comm) {
  double out = value;
  MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, comm);
  return out;
}

namespace {

// Where and when a record was measured, for the plots' titles: host name,
// CPU model and core count; date (UTC).
const std::string &machine() {
  static const std::string m = [] {
    char host[256] = "unknown host";
    gethostname(host, sizeof host - 1);
    std::string cpu;
    if (FILE *f = std::fopen("/proc/cpuinfo", "r")) {
      char line[512];
      while (cpu.empty() && std::fgets(line, sizeof line, f))
        if (std::strncmp(line, "model name", 10) == 0 && std::strchr(line, ':')) cpu = std::strchr(line, ':') + 2;
      std::fclose(f);
    }
    if (!cpu.empty() && cpu.back() == '\n') cpu.pop_back();
    return std::string(host) + (cpu.empty() ? "" : ", " + cpu) + ", " + std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) +
           " cores";
  }();
  return m;
}

std::string today() {
  char buf[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&now));
  return buf;
}

std::string quoted(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if ((unsigned char)c < 0x20) continue;  // names and options never need control characters
    out += c;
  }
  return out + "\"";
}

}  // namespace

Record &Record::str(const std::string &key, const std::string &value) {
  fields_.emplace_back(key, quoted(value));
  return *this;
}

Record &Record::num(const std::string &key, double value) {
  char buf[64];
  // JSON has no inf or nan: write null so that readers do not choke.
  if (std::isfinite(value)) std::snprintf(buf, sizeof buf, "%.6g", value);
  else std::snprintf(buf, sizeof buf, "null");
  fields_.emplace_back(key, buf);
  return *this;
}

Record &Record::integer(const std::string &key, long long value) {
  fields_.emplace_back(key, std::to_string(value));
  return *this;
}

Record &Record::boolean(const std::string &key, bool value) {
  fields_.emplace_back(key, value ? "true" : "false");
  return *this;
}

Record &Record::object(const std::string &key, const Record &value) {
  fields_.emplace_back(key, value.text());
  return *this;
}

Record &Record::timing(const std::string &benchmark, const std::string &impl, long long size, int ranks,
                       const Stats &s) {
  return str("benchmark", benchmark)
      .str("impl", impl)
      .integer("size", size)
      .integer("ranks", ranks)
      .integer("hosts", host_layout(ranks).hosts)
      .str("ranks_per_host", host_layout(ranks).ranks_per_host)
      .num("us", s.us)
      .num("min_us", s.min_us)
      .num("max_us", s.max_us)
      .integer("iterations", s.iterations)
      .str("machine", machine())
      .str("date", today());
}

std::string Record::text() const {
  std::string out = "{";
  for (size_t i = 0; i < fields_.size(); ++i) {
    if (i) out += ", ";
    out += quoted(fields_[i].first) + ": " + fields_[i].second;
  }
  return out + "}";
}

bool JsonLog::write(const std::string &path) const {
  FILE *f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    return false;
  }
  std::fprintf(f, "[\n");
  for (size_t i = 0; i < records_.size(); ++i)
    std::fprintf(f, "  %s%s\n", records_[i].text().c_str(), i + 1 < records_.size() ? "," : "");
  std::fprintf(f, "]\n");
  return std::fclose(f) == 0;
}

bool parse_timing(const std::string &name, Timing *t) {
  if (name != "streamed" && name != "isolated") return false;
  *t = name == "streamed" ? Timing::streamed : Timing::isolated;
  return true;
}

const char *timing_name(Timing t) { return t == Timing::streamed ? "streamed" : "isolated"; }

double time_isolated_call(MPI_Comm comm, long iters, const std::function<void()> &f) {
  std::vector<double> seconds(static_cast<size_t>(iters));
  for (double &s : seconds) {
    MPI_Barrier(comm);
    const double t0 = MPI_Wtime();
    f();
    s = MPI_Wtime() - t0;
  }
  MPI_Allreduce(MPI_IN_PLACE, seconds.data(), static_cast<int>(iters), MPI_DOUBLE, MPI_MAX, comm);
  double sum = 0;
  for (double s : seconds) sum += s;
  return sum / static_cast<double>(iters);
}

std::vector<Stats> time_rotating(MPI_Comm comm, int rounds, long iters,
                                 const std::vector<std::function<void()>> &impls, Timing timing) {
  return time_rotating(comm, rounds, std::vector<long>(impls.size(), iters), impls, timing);
}

std::vector<Stats> time_rotating(MPI_Comm comm, int rounds, const std::vector<long> &iters,
                                 const std::vector<std::function<void()>> &impls, Timing timing) {
  const size_t n = impls.size();
  std::vector<std::vector<double>> samples(n);
  for (int r = 0; r < rounds; ++r)
    for (size_t k = 0; k < n; ++k) {
      size_t i = (k + (size_t)r) % n;
      impls[i]();  // warm-up
      const double s = timing == Timing::streamed ? time_per_call(comm, iters[i], impls[i])
                                                  : time_isolated_call(comm, iters[i], impls[i]);
      samples[i].push_back(1e6 * s);
    }
  std::vector<Stats> out;
  for (size_t i = 0; i < n; ++i) out.push_back(summarize(samples[i], iters[i] * rounds));
  return out;
}

std::vector<int> host_of_ranks(MPI_Comm comm) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Comm local;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
  int leader = rank;  // a host is named by its lowest rank
  MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, local);
  MPI_Comm_free(&local);
  std::vector<int> leaders(size);
  MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, comm);
  std::vector<int> sorted = leaders, host(size);
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  for (int r = 0; r < size; ++r)
    host[r] = (int)(std::lower_bound(sorted.begin(), sorted.end(), leaders[r]) - sorted.begin());
  return host;
}

HostLayout layout_of(const std::vector<int> &host_of) {
  HostLayout l;
  l.hosts = host_of.empty() ? 0 : *std::max_element(host_of.begin(), host_of.end()) + 1;
  std::vector<int> count(l.hosts, 0);
  for (int h : host_of) ++count[h];
  for (int h = 0; h < l.hosts; ++h) l.ranks_per_host += (h ? "," : "") + std::to_string(count[h]);
  return l;
}

namespace {
bool layout_set = false;
HostLayout layout_given;
}  // namespace

void set_host_layout(const HostLayout &layout) {
  layout_given = layout;
  layout_set = true;
}

HostLayout host_layout(int ranks) {
  if (layout_set) return layout_given;
  HostLayout l;
  const char *hosts = std::getenv("STF_CLUSTER_HOSTS"), *per_host = std::getenv("STF_CLUSTER_RANKS_PER_HOST");
  if (hosts && per_host && std::atoi(hosts) > 0) {
    l.hosts = std::atoi(hosts);
    l.ranks_per_host = per_host;
  } else {
    l.ranks_per_host = std::to_string(ranks);
  }
  return l;
}

std::string range_text(const Stats &s) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.2f [%.2f..%.2f]", s.us, s.min_us, s.max_us);
  return buf;
}

std::vector<std::string> matrix_names(const std::string &dir) {
  std::vector<std::string> names;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d)) {
      const std::string f = e->d_name;
      if (f.size() > 7 && f.compare(f.size() - 7, 7, ".mtx.gz") == 0) names.push_back(f.substr(0, f.size() - 7));
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> split_list(const std::string &list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace bench
