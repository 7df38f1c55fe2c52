#include "bench_util.h"

#include <algorithm>
#include <cmath>

namespace bench {

Stats summarize(std::vector<double> v, long iterations) {
  Stats s;
  s.iterations = iterations;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  size_t m = v.size();
  s.median_us = m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
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

std::string quoted(const std::string &s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

}  // namespace

JsonRecord &JsonRecord::raw(const char *key, const std::string &json_value) {
  if (!body_.empty()) body_ += ", ";
  body_ += quoted(key) + ": " + json_value;
  return *this;
}

JsonRecord &JsonRecord::add(const char *key, const std::string &value) { return raw(key, quoted(value)); }
JsonRecord &JsonRecord::add(const char *key, const char *value) { return raw(key, quoted(value)); }
JsonRecord &JsonRecord::add(const char *key, long long value) { return raw(key, std::to_string(value)); }
JsonRecord &JsonRecord::add(const char *key, bool value) { return raw(key, value ? "true" : "false"); }
JsonRecord &JsonRecord::add(const char *key, const JsonRecord &object) { return raw(key, object.str()); }

JsonRecord &JsonRecord::add(const char *key, double value) {
  if (!std::isfinite(value)) return raw(key, "null");
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", value);
  return raw(key, buf);
}

JsonRecord &JsonRecord::add_stats(const Stats &s) {
  return add("us", s.median_us).add("min_us", s.min_us).add("max_us", s.max_us).add("iterations", s.iterations);
}

JsonArrayFile::JsonArrayFile(const std::string &path) {
  if (path.empty()) return;
  file_ = std::fopen(path.c_str(), "w");
  if (!file_) std::fprintf(stderr, "cannot write %s\n", path.c_str());
  else std::fprintf(file_, "[\n");
}

JsonArrayFile::~JsonArrayFile() {
  if (!file_) return;
  std::fprintf(file_, "\n]\n");
  std::fclose(file_);
}

void JsonArrayFile::write(const JsonRecord &record) {
  if (!file_) return;
  std::fprintf(file_, "%s  %s", first_ ? "" : ",\n", record.str().c_str());
  first_ = false;
}

}  // namespace bench
