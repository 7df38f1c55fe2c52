// fit_profile: a machine profile from measurements taken elsewhere (a
// machine we cannot run calibrate on), fitted by the same model code as
// calibrate's: the postal segments per locality class and the max-rate
// model of messages leaving a node.
//
//   fit_profile SAMPLES.tsv PROFILE.json
//
// SAMPLES.tsv, tab separated, one sample or field per line:
//   machine|date|mpi TEXT, ranks|nodes N      recorded in the profile
//   pingpong same_node|other_node BYTES SECONDS   one-way time of a message
//   maxrate PAIRS BYTES SECONDS               node-pong: PAIRS pairs of two
//                                             nodes at once, one-way time
//   many MESSAGES BYTES SECONDS               one rank sending MESSAGES
//                                             messages to another node (BenchPress:
//                                             blocking sends, one after another)
// Other classes (scripts/benchpress-samples also writes the socket ones) are
// skipped, and so are node-pongs below 4 KiB, where calibrate's start:
// below that a message's latency hides its rate. The off-node gap is the
// slope of the 8-byte `many` times over MESSAGES (BenchPress's mult-pong:
// half a round trip of k messages and k replies, so the slope is the mean
// of a send's and a receive's cost; calibrate's is k sends and one reply).
// Everything else the samples do not measure (the in-node gap, busy steps,
// one-sided, collectives, packing) keeps its built-in value and is marked so
// where the profile can say it.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "model/model.h"
#include "profile_print.h"

namespace m = stf::model;

namespace {

struct Samples {
  std::map<std::string, std::string> fields;
  std::map<std::string, std::map<double, double>> pingpong;  // class -> bytes -> seconds
  std::vector<m::MaxRateSample> maxrate;
  std::vector<double> many_messages, many_seconds;  // 8-byte messages only
};

// A count of pairs or messages: a whole number of at least 1, else 0.
int count_of(const std::string &text) {
  char *end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  return end != text.c_str() && *end == '\0' && v >= 1 && v <= 1000000 ? static_cast<int>(v) : 0;
}

bool read_samples(const char *path, Samples *s) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "fit_profile: cannot read %s\n", path);
    return false;
  }
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::istringstream cols(line);
    std::string kind;
    std::getline(cols, kind, '\t');
    if (kind == "pingpong" || kind == "maxrate" || kind == "many") {
      std::string what;
      double bytes = 0, seconds = 0;
      std::getline(cols, what, '\t');
      const int count = count_of(what);
      if (!(cols >> bytes >> seconds) || bytes <= 0 || seconds <= 0 || (kind != "pingpong" && count == 0)) {
        std::fprintf(stderr, "fit_profile: %s:%d: expected %s %s BYTES SECONDS\n", path, n, kind.c_str(),
                     kind == "pingpong" ? "CLASS" : "COUNT");
        return false;
      }
      if (kind == "pingpong") {
        s->pingpong[what][bytes] = seconds;
      } else if (kind == "many") {
        if (bytes == 8) s->many_messages.push_back(count), s->many_seconds.push_back(seconds);
      } else if (bytes >= 4096) {
        s->maxrate.push_back({count, bytes, seconds});
      }
    } else if (!kind.empty() && kind[0] != '#') {
      std::string value;
      std::getline(cols, value);
      s->fields[kind] = value;
    }
  }
  return true;
}

bool fit_class(const Samples &s, const char *cls, m::Postal *out) {
  const auto it = s.pingpong.find(cls);
  if (it == s.pingpong.end() || it->second.size() < 2) {
    std::fprintf(stderr, "fit_profile: fewer than 2 ping-pong sizes of %s\n", cls);
    return false;
  }
  std::vector<double> bytes, seconds;
  for (const auto &e : it->second) {
    bytes.push_back(e.first);
    seconds.push_back(e.second);
  }
  const double gap = out->gap;  // main() fits it where the samples have it
  *out = m::fit_postal(bytes, seconds);
  out->gap = gap;
  out->measured = true;
  return true;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: fit_profile SAMPLES.tsv PROFILE.json\n");
    return 2;
  }
  Samples s;
  if (!read_samples(argv[1], &s)) return 1;
  m::Profile prof = m::default_profile();
  prof.defaults = false;
  prof.machine = s.fields["machine"];
  prof.date = s.fields["date"];
  prof.mpi = s.fields["mpi"];
  prof.ranks = std::atoi(s.fields["ranks"].c_str());
  prof.nodes = std::atoi(s.fields["nodes"].c_str());
  prof.ranks_per_node = 0;  // real nodes
  if (!fit_class(s, "same_node", &prof.network.same_node) || !fit_class(s, "other_node", &prof.network.other_node))
    return 1;
  if (s.many_messages.size() >= 2) prof.network.other_node.gap = m::fit_gap(s.many_messages, s.many_seconds);
  if (s.maxrate.empty()) {
    std::fprintf(stderr, "fit_profile: no node-pong samples of 4 KiB or more\n");
    return 1;
  }
  prof.network.off_node = m::fit_maxrate_by_size(s.maxrate, prof.network.other_node);
  bench::print_postal("same_node", prof.network.same_node);
  bench::print_postal("other_node", prof.network.other_node);
  bench::print_maxrate(prof.network.off_node);
  std::string error;
  if (!m::write_profile(argv[2], prof, &error)) {
    std::fprintf(stderr, "fit_profile: %s\n", error.c_str());
    return 1;
  }
  return 0;
}
