// calibrate: measures this machine's communication and packing costs, fits
// the models of src/model to them, and writes the machine profile (JSON)
// that the model layer reads (docs/MODEL.md).
//
// What it measures, rank 0 always being one end:
//   ping-pong with the first rank on its node and the first on another node
//     (sizes 8 B .. --max-size, powers of 2) -> a postal model per locality
//     class, protocol ranges found from the data;
//   k = 1..32 messages of 8 B answered by one -> the gap per message;
//   node-pong with 1..P concurrent pairs between rank 0's node and the other
//     (4 KiB .. 4 MiB, powers of 4) -> the max-rate model's R_N and R_b,
//     R_N per off-node segment where the sizes span several;
//   an 8-byte put completed by a flush, and a neighbourhood alltoall on a
//     ring of all ranks -> one-sided and collective synchronisation costs;
//   pack and unpack of contiguous, strided and indexed lists through the
//     public API, in host memory and in a device's (--device, default the
//     emulated device) memory.
// Nodes are those of MPI_COMM_TYPE_SHARED, or with --ranks-per-node K groups
// of K consecutive ranks (the profile records K, so readers know the
// "other node" numbers were taken inside one host). A class that cannot be
// measured (one node: no other node) keeps its built-in values, marked
// "measured": false.
#include "calibrate.h"

#include <starforest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "bench_common.h"
#include "profile_print.h"
#include "model/model.h"

namespace m = stf::model;

namespace {

struct Options {
  int ranks_per_node = 0;
  double max_size = 4 << 20;
  bool quick = false;
  std::string device = "emu";  // whose memory packing is also measured; "none": skip
  std::string json;
  calibrate::Settings settings;
};

void usage() {
  std::printf(
      "usage: mpiexec -n N calibrate [--ranks-per-node K] [--max-size BYTES] [--rounds R] [--round-ms MS]\n"
      "                              [--device emu|cuda|none] [--quick] [--json FILE]\n"
      "  Measures messages per locality class, node-pong, many-message sends, puts, collectives and\n"
      "  packing, fits the performance models and writes the machine profile (JSON) to FILE\n"
      "  (default: printed). --ranks-per-node K: nodes are groups of K consecutive ranks.\n"
      "  --device D: also pack and unpack in D's memory (default emu; skipped if D cannot be selected).\n"
      "  --quick: small sizes and short rounds (a smoke test, not a calibration).\n");
}

int parse(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool value = i + 1 < argc;
    if (a == "--help" || a == "-h") return 1;
    if (a == "--ranks-per-node" && value)
      o.ranks_per_node = std::atoi(argv[++i]);
    else if (a == "--max-size" && value)
      o.max_size = std::atof(argv[++i]);
    else if (a == "--rounds" && value)
      o.settings.rounds = std::atoi(argv[++i]);
    else if (a == "--round-ms" && value)
      o.settings.round_seconds = std::atof(argv[++i]) / 1000;
    else if (a == "--json" && value)
      o.json = argv[++i];
    else if (a == "--device" && value)
      o.device = argv[++i];
    else if (a == "--quick")
      o.quick = true;
    else {
      std::fprintf(stderr, "calibrate: bad argument '%s' (try --help)\n", a.c_str());
      return 2;
    }
  }
  if (o.quick) {
    o.max_size = std::min(o.max_size, 65536.0);
    o.settings.rounds = 3;
    o.settings.round_seconds = 0.0005;
  }
  if (o.ranks_per_node < 0 || o.max_size < 64 || o.max_size > (1 << 30) || o.settings.rounds < 1 ||
      !(o.settings.round_seconds > 0)) {
    std::fprintf(stderr, "calibrate: need --ranks-per-node >= 0, --max-size in [64, 2^30], --rounds >= 1\n");
    return 2;
  }
  return 0;
}

std::string utc_now() {
  char buf[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

std::string mpi_version() {
  char v[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(v, &len);
  std::string s(v, len);
  return s.substr(0, s.find_first_of("\n,"));
}

std::string hostname() {
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  return host;
}

std::vector<double> powers(double from, double to, double factor) {
  std::vector<double> v;
  for (double n = from; n <= to; n *= factor) v.push_back(n);
  return v;
}

// The postal fit of one-way times t at sizes, printed beside them on rank
// 0 (which measured them).
m::Postal fitted(const std::vector<double> &sizes, const std::vector<double> &t) {
  m::Postal p = m::fit_postal(sizes, t);
  p.measured = true;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    std::printf("  %10s %12s %12s\n", "bytes", "one-way us", "model us");
    for (size_t i = 0; i < sizes.size(); ++i)
      std::printf("  %10.0f %12.3f %12.3f\n", sizes[i], 1e6 * t[i], 1e6 * p.time(sizes[i]));
  }
  return p;
}

// Rank 0 measured; everyone writes the same profile.
void share(m::Postal *p) {
  int nseg = static_cast<int>(p->segments.size());
  MPI_Bcast(&nseg, 1, MPI_INT, 0, MPI_COMM_WORLD);
  p->segments.resize(nseg);
  MPI_Bcast(p->segments.data(), static_cast<int>(nseg * sizeof(m::PostalSegment)), MPI_BYTE, 0, MPI_COMM_WORLD);
  MPI_Bcast(&p->gap, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
}

// Ping-pong plus many-message sends between rank 0 and partner.
m::Postal measure_postal(int partner, const Options &o) {
  const std::vector<double> sizes = powers(8, o.max_size, 2), counts = {1, 2, 4, 8, 16, 32};
  const std::vector<double> t = calibrate::pingpong(0, partner, sizes, o.settings);
  const std::vector<double> k = calibrate::many_messages(0, partner, counts, o.settings);
  m::Postal p = fitted(sizes, t);
  p.gap = m::fit_gap(counts, k);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    std::printf("  k messages of 8 B (round trip us):");
    for (size_t i = 0; i < counts.size(); ++i) std::printf(" %g:%.2f", counts[i], 1e6 * k[i]);
    std::printf("\n");
  }
  share(&p);
  return p;
}

#if !defined(STF_SMPI)
// The put-with-signal protocol alone between rank 0 and partner, on one
// node (putsignal's in-node messages).
m::Postal measure_heap(int partner, const Options &o) {
  const std::vector<double> sizes = powers(8, o.max_size, 2);
  m::Postal p = fitted(sizes, calibrate::heap_pingpong(0, partner, sizes, o.settings));
  share(&p);
  return p;
}
#endif

// Rates and per-call cost from the two sizes of calibrate::pack_times.
m::PackRates fit_rates(const calibrate::PackTimes &t) {
  m::PackRates r;
  std::vector<double> launches;
  const double db = t.large_bytes - t.small_bytes;
  for (int p = 0; p < m::kPatterns; ++p) {
    const double pack = db / std::max(1e-12, t.pack[p][1] - t.pack[p][0]);
    const double unpack = db / std::max(1e-12, t.unpack[p][1] - t.unpack[p][0]);
    r.pack[p] = pack;
    r.unpack[p] = unpack;
    launches.push_back(std::max(0.0, t.pack[p][0] - t.small_bytes / pack));
    launches.push_back(std::max(0.0, t.unpack[p][0] - t.small_bytes / unpack));
  }
  std::sort(launches.begin(), launches.end());
  r.launch = 0.5 * (launches[launches.size() / 2 - 1] + launches[launches.size() / 2]);
  r.measured = true;
  return r;
}

void print_rates(const char *name, const m::PackRates &r) {
  std::printf("%s: per call %.3f us;", name, 1e6 * r.launch);
  for (int p = 0; p < m::kPatterns; ++p)
    std::printf(" %s pack %.2f / unpack %.2f GB/s;", m::pattern_name(static_cast<m::Pattern>(p)), 1e-9 * r.pack[p],
                1e-9 * r.unpack[p]);
  std::printf("\n");
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Options o;
  if (int rc = parse(argc, argv, o)) {
    if (rank == 0 && rc == 1) usage();
    MPI_Finalize();
    return rc == 1 ? 0 : 2;
  }

  // Each rank's node, numbered in the order of the nodes' lowest ranks.
  std::vector<int> node = bench::host_of_ranks(MPI_COMM_WORLD);
  if (o.ranks_per_node > 0)
    for (int r = 0; r < size; ++r) node[r] = r / o.ranks_per_node;
  const int nodes = *std::max_element(node.begin(), node.end()) + 1;
  int same = -1, other = -1;
  for (int r = size - 1; r > 0; --r) (node[r] == node[0] ? same : other) = r;

  m::Profile prof = m::default_profile();
  prof.machine = hostname();
  prof.date = utc_now();
  prof.mpi = mpi_version();
  prof.defaults = false;
  prof.ranks = size;
  prof.nodes = nodes;
  prof.ranks_per_node = o.ranks_per_node;
  if (rank == 0)
    std::printf("calibrate: %d ranks on %d %s, rank 0's partners: same node %d, other node %d\n", size, nodes,
                o.ranks_per_node > 0 ? "emulated nodes" : "nodes", same, other);

  if (same > 0) {
    if (rank == 0) std::printf("same node (ranks 0 and %d):\n", same);
    prof.network.same_node = measure_postal(same, o);
#if !defined(STF_SMPI)  // SMPI's ranks share no memory
    if (rank == 0) std::printf("put with signal through shared memory (ranks 0 and %d):\n", same);
    prof.onesided.heap = measure_heap(same, o);
#endif
  }
  if (other > 0) {
    if (rank == 0) std::printf("other node (ranks 0 and %d):\n", other);
    prof.network.other_node = measure_postal(other, o);
    // Pairs between rank 0's node and the partner's, in rank order.
    std::vector<int> first, second;
    for (int r = 0; r < size; ++r) {
      if (node[r] == node[0]) first.push_back(r);
      if (node[r] == node[other]) second.push_back(r);
    }
    const std::vector<double> sizes = powers(4096, o.max_size, 4);
    const auto samples = calibrate::multi_pair(first, second, sizes, o.settings);
    // Latencies per off-node segment (the first for the fit over all
    // sizes): a later segment's start-up may exceed the node-pong times
    // themselves on a noisy machine, and then that segment gets no rate.
    prof.network.off_node = m::fit_maxrate_by_size(samples, prof.network.other_node);
    if (rank == 0) {
      std::printf("node-pong (pairs, bytes, one-way us):");
      for (const auto &s : samples) std::printf(" (%d, %.0f, %.1f)", s.pairs, s.bytes, 1e6 * s.seconds);
      std::printf("\n");
    }
  }
  // Every rank at once: to the next rank of its node (in-node ring), and
  // to the rank of its place on the next node (ring of nodes).
  std::vector<std::vector<int>> members(nodes);
  for (int r = 0; r < size; ++r) members[node[r]].push_back(r);
  std::vector<int> ring_in_node(size, -1), ring_of_nodes(size, -1);
  for (int r = 0; r < size; ++r) {
    const std::vector<int> &mine = members[node[r]], &next = members[(node[r] + 1) % nodes];
    const size_t place = std::find(mine.begin(), mine.end(), r) - mine.begin();
    if (mine.size() > 1) ring_in_node[r] = mine[(place + 1) % mine.size()];
    if (nodes > 1) ring_of_nodes[r] = next[place % next.size()];
  }
  if (same > 0) {
    prof.network.same_node.busy_step = calibrate::busy_step(ring_in_node, o.settings);
    if (rank == 0) std::printf("busy step in a node (every rank at once, 8 B): %.3f us\n", 1e6 * prof.network.same_node.busy_step);
  }
  if (other > 0) {
    prof.network.other_node.busy_step = calibrate::busy_step(ring_of_nodes, o.settings);
    if (rank == 0)
      std::printf("busy step between nodes (every rank at once, 8 B): %.3f us\n", 1e6 * prof.network.other_node.busy_step);
  }
  const int put_peer = other > 0 ? other : same;
  const m::Postal &put_class = other > 0 ? prof.network.other_node : prof.network.same_node;
  if (put_peer > 0) {
    const double t = calibrate::put_flush(0, put_peer, o.settings);
    double sync = std::max(0.0, t - put_class.time(8));
    MPI_Bcast(&sync, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    prof.onesided.sync = sync;
    prof.onesided.measured = true;
    if (rank == 0) std::printf("put + flush of 8 B: %.3f us\n", 1e6 * t);
  }
#if defined(STF_SMPI)
  // SimGrid's SMPI has no distributed-graph communicators: the built-in value stays.
  if (size > 1 && rank == 0) std::printf("neighbour alltoall: not under SMPI, the built-in value stays\n");
#else
  if (size > 1) {
    const double t = calibrate::ring_neighbor_alltoall(o.settings);
    prof.collective.call = std::max(0.0, t - put_class.time_many(2, 8));
    prof.collective.measured = true;
    if (rank == 0) std::printf("neighbour alltoall on a ring, 8 B each: %.3f us\n", 1e6 * t);
  }
#endif
  prof.host_pack = fit_rates(calibrate::pack_times(false, o.settings));
  if (o.device != "none" && stf_device_select(o.device.c_str()) == STF_SUCCESS) {
    prof.device_name = o.device;
    prof.device.sync = calibrate::device_sync(o.settings);
    prof.device.rates = fit_rates(calibrate::pack_times(true, o.settings));
    prof.device.measured = true;
    stf_device_select("host");
  } else if (o.device != "none" && rank == 0) {
    std::printf("device %s cannot be selected (%s): its rates keep their built-in values\n", o.device.c_str(),
                stf_last_error_message());
  }

  int failed = 0;
  if (rank == 0) {
    bench::print_postal("postal same node", prof.network.same_node);
    bench::print_postal("postal other node", prof.network.other_node);
    if (prof.onesided.heap.measured) bench::print_postal("put with signal in a node", prof.onesided.heap);
    bench::print_maxrate(prof.network.off_node);
    std::printf("one-sided sync %.3f us per message, collective %.3f us per call\n", 1e6 * prof.onesided.sync,
                1e6 * prof.collective.call);
    print_rates("host pack", prof.host_pack);
    if (prof.device.measured) {
      std::printf("device %s: ", prof.device_name.c_str());
      print_rates("pack", prof.device.rates);
      std::printf("device %s: stream sync %.3f us\n", prof.device_name.c_str(), 1e6 * prof.device.sync);
    }
    const std::string text = m::profile_to_json(prof);
    std::string error;
    if (o.json.empty()) {
      std::fputs(text.c_str(), stdout);
    } else if (!m::write_profile(o.json, prof, &error)) {
      std::fprintf(stderr, "calibrate: %s\n", error.c_str());
      failed = 1;
    } else {
      // What was written must read back as the same profile.
      m::Profile back;
      if (!m::read_profile(o.json, &back, &error) || m::profile_to_json(back) != text) {
        std::fprintf(stderr, "calibrate: %s does not read back: %s\n", o.json.c_str(), error.c_str());
        failed = 1;
      } else {
        std::printf("profile written to %s\n", o.json.c_str());
      }
    }
  }
  MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return failed;
}
