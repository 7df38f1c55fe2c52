// Shared by the benchmarks: statistics over timed rounds, JSON records and
// the JSON array file they go to, so every benchmark reports the same way.
#pragma once

#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

namespace bench {

// Summary of the timed rounds of one measurement (times in microseconds).
struct Stats {
  double median_us = 0, min_us = 0, max_us = 0;
  long iterations = 0;  // timed iterations over all rounds
};

// Median (mean of the middle two for an even count), min and max of rounds.
Stats summarize(std::vector<double> round_us, long iterations);

// The largest of every rank's value (collective over comm).
double max_over_ranks(double value, MPI_Comm comm);

// One JSON object, built key by key in the order given. Non-finite numbers
// become null, which JSON can represent.
class JsonRecord {
 public:
  JsonRecord &add(const char *key, const std::string &value);
  JsonRecord &add(const char *key, const char *value);
  JsonRecord &add(const char *key, long long value);
  JsonRecord &add(const char *key, long value) { return add(key, static_cast<long long>(value)); }
  JsonRecord &add(const char *key, int value) { return add(key, static_cast<long long>(value)); }
  JsonRecord &add(const char *key, double value);
  JsonRecord &add(const char *key, bool value);
  JsonRecord &add(const char *key, const JsonRecord &object);
  // The fields every record carries for a Stats: us (median), min_us, max_us, iterations.
  JsonRecord &add_stats(const Stats &s);
  std::string str() const { return "{" + body_ + "}"; }

 private:
  JsonRecord &raw(const char *key, const std::string &json_value);
  std::string body_;
};

// A file holding one JSON array of records. An empty path writes nothing, so
// ranks other than 0 (and runs without --json) can hold a disabled one.
class JsonArrayFile {
 public:
  explicit JsonArrayFile(const std::string &path);
  ~JsonArrayFile();
  JsonArrayFile(const JsonArrayFile &) = delete;
  JsonArrayFile &operator=(const JsonArrayFile &) = delete;
  void write(const JsonRecord &record);

 private:
  std::FILE *file_ = nullptr;
  bool first_ = true;
};

}  // namespace bench
