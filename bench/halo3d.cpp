// halo3d: a 3D halo exchange with 26 neighbours in the manner of LLNL's Comb,
// starforest against plain MPI.
//
// Each rank owns a box of n^3 zones (--n) on a process grid (--divide PxQxR,
// or MPI_Dims_create), periodic unless --no-periodic, with a ghost layer of
// width w (--ghost) around it. --vars arrays of doubles, each of (n+2w)^3
// zones, live in one allocation on the host or on a device (--memory device:
// stf_device_malloc on the active device, "emu" unless STF_DEVICE names
// another, e.g. cuda). A cycle refreshes every ghost
// zone of every variable from its owner: one message per neighbour and cycle
// holding all variables (faces, edges, corners: 26 messages per rank).
//
// Message grouping (--grouping): each (pack and send every message on its
// own), groups (messages below --cutoff bytes form one group, the others
// another) or all (pack everything, then send everything).
//   mpi         Irecv all; per group pack and Isend; per group wait and
//               unpack (each: MPI_Waitany, unpack what arrived); wait sends
//               (halo3d_mpi.cpp). On device memory (halo3d_mpi_device.cpp)
//               a pack kernel per message and a copy to a pinned host
//               buffer, a stream wait per message (each) or per group
//               before the sends, and per message received a copy up and
//               an unpack kernel; the cycle ends with a stream wait.
//   starforest  one SF per group (each: one per neighbour direction; all:
//               one), leaves = ghost zones, roots = the owners' zones, in
//               one index space of all variables; bcast with MPI_REPLACE.
//               Begin (pack + post) per group, then end (wait + unpack) per
//               group; on device memory the wait includes
//               stf_device_synchronize (results are on the library stream).
// --mock: no communication: every rank is its own neighbour in all 26
// directions (the messages a 1x1x1 periodic grid would send), the MPI side
// unpacks from its own pack buffers and the SFs live on MPI_COMM_SELF.
//
// Phases per cycle: pack+post-send, post-recv, wait-recv+unpack, wait-send
// (starforest's post-recv and wait-send are inside begin and end), and the
// whole cycle, averaged over the cycles of each rank, then min/avg/max over
// ranks. The variants alternate in --rounds rounds; the cycle time reported
// per variant is the median round (slowest rank) with [min..max]. Check
// cycles (the first of each variant, and every --check-every-th) give every
// zone a globally unique value, clear the ghosts, exchange, and compare every
// ghost zone with its owner's value; mismatches are reported by location and
// abort the run.
#include <starforest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench_common.h"
#include "check.h"
#include "halo3d.h"

namespace {

using namespace halo3d;

const char *const kPhaseNames[] = {"pack_post_send", "post_recv", "wait_recv_unpack", "wait_send", "cycle"};
const char *const kGroupings[] = {"each", "groups", "all"};

struct Options {
  int n = 32, ghost = 1, vars = 3, cycles = 500, rounds = 10, check_every = 0;
  int divide[3] = {0, 0, 0};
  long cutoff = 4096;
  bool periodic = true, mock = false, device = false;
  std::string groupings = "each,groups,all", impls = "mpi,starforest", transport = "basic", json;
};

void usage(const char *prog) {
  std::printf(
      "usage: mpiexec -n N %s [options]\n"
      "  Comb-style 3D halo exchange (26 neighbours), starforest against plain MPI.\n"
      "  --n N             zones per rank and direction (default 32; Comb uses 100)\n"
      "  --divide PxQxR    process grid (default: MPI_Dims_create)\n"
      "  --no-periodic     non-periodic domain (default periodic)\n"
      "  --ghost W         ghost width (default 1)      --vars V  variables (default 3)\n"
      "  --cycles C        timed cycles per variant (default 500)\n"
      "  --rounds R        interleaved rounds the cycles are split into (default 10)\n"
      "  --cutoff BYTES    messages smaller than this are 'small' (default 4096)\n"
      "  --grouping LIST   from each,groups,all (default all three)\n"
      "  --impl LIST       from mpi,starforest (default both)\n"
      "  --memory M        host | device (the active device, emu unless STF_DEVICE says; default host)\n"
      "  --transport T     starforest transport (a stf_set_type name; default basic)\n"
      "  --mock            no communication (each rank its own neighbour)\n"
      "  --check-every K   also check every K-th timed cycle (default 0: first cycle only)\n"
      "  --quick           n 6, 2 cycles (the second checked): a check that it runs (CI)\n"
      "  --json FILE       also write the results as a JSON array\n",
      prog);
}

bool in_list(const std::string &list, const std::string &item) {
  return ("," + list + ",").find("," + item + ",") != std::string::npos;
}

bool list_ok(const std::string &list, std::initializer_list<const char *> allowed) {
  for (size_t p = 0; p <= list.size();) {
    size_t q = std::min(list.find(',', p), list.size());
    std::string item = list.substr(p, q - p);
    if (std::none_of(allowed.begin(), allowed.end(), [&](const char *a) { return item == a; })) return false;
    p = q + 1;
  }
  return true;
}

// Returns 0 to run, 1 to exit successfully (--help), 2 on a bad argument.
int parse(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    bool v = i + 1 < argc;
    if (a == "--help" || a == "-h") return 1;
    if (a == "--n" && v) o.n = std::atoi(argv[++i]);
    else if ((a == "--divide" || a == "-divide") && v) {
      if (std::sscanf(argv[++i], "%dx%dx%d", &o.divide[0], &o.divide[1], &o.divide[2]) != 3) {
        std::fprintf(stderr, "halo3d: --divide wants PxQxR, got '%s'\n", argv[i]);
        return 2;
      }
    } else if (a == "--no-periodic") o.periodic = false;
    else if (a == "--ghost" && v) o.ghost = std::atoi(argv[++i]);
    else if (a == "--vars" && v) o.vars = std::atoi(argv[++i]);
    else if (a == "--cycles" && v) o.cycles = std::atoi(argv[++i]);
    else if (a == "--rounds" && v) o.rounds = std::atoi(argv[++i]);
    else if (a == "--cutoff" && v) o.cutoff = std::atol(argv[++i]);
    else if (a == "--grouping" && v) o.groupings = argv[++i];
    else if (a == "--impl" && v) o.impls = argv[++i];
    else if (a == "--memory" && v) {
      std::string m = argv[++i];
      if (m != "host" && m != "device") {
        std::fprintf(stderr, "halo3d: --memory is host or device, got '%s'\n", m.c_str());
        return 2;
      }
      o.device = m == "device";
    } else if (a == "--transport" && v) o.transport = argv[++i];
    else if (a == "--mock") o.mock = true;
    else if (a == "--check-every" && v) o.check_every = std::atoi(argv[++i]);
    else if (a == "--quick") o.n = 6, o.cycles = 2, o.rounds = 1, o.check_every = 2;
    else if (a == "--json" && v) o.json = argv[++i];
    else {
      std::fprintf(stderr, "halo3d: bad argument '%s' (try --help)\n", a.c_str());
      return 2;
    }
  }
  if (o.n < 1 || o.ghost < 1 || o.ghost > o.n || o.vars < 1 || o.cycles < 1 || o.rounds < 1 || o.check_every < 0 ||
      o.cutoff < 0) {
    std::fprintf(stderr, "halo3d: need --n >= 1, 1 <= --ghost <= n, --vars, --cycles, --rounds >= 1, "
                         "--check-every >= 0, --cutoff >= 0\n");
    return 2;
  }
  if (!list_ok(o.groupings, {"each", "groups", "all"}) || !list_ok(o.impls, {"mpi", "starforest"})) {
    std::fprintf(stderr, "halo3d: --grouping takes each,groups,all and --impl mpi,starforest\n");
    return 2;
  }
  o.rounds = std::min(o.rounds, o.cycles);
  return 0;
}

// Zones along one axis of the region a message covers: ghosts (recv) or the
// owned zones a neighbour needs (send) in direction offset o.
void region(int n, int w, int o, bool recv, int &lo, int &hi) {
  if (o == 0) lo = 0, hi = n;
  else if (o < 0) lo = recv ? -w : 0, hi = recv ? 0 : w;
  else lo = recv ? n : n - w, hi = recv ? n + w : n;
}

std::vector<long> region_zones(const Box &b, int d, bool recv) {
  int lo[3], hi[3];
  for (int a = 0; a < 3; a++) region(b.n, b.w, offset(d, a), recv, lo[a], hi[a]);
  std::vector<long> z;
  for (int k = lo[2]; k < hi[2]; k++)
    for (int j = lo[1]; j < hi[1]; j++)
      for (int i = lo[0]; i < hi[0]; i++) z.push_back(b.zone(i, j, k));
  return z;
}

Box make_box(const Options &o, int rank, int size) {
  Box b;
  b.n = o.n, b.w = o.ghost, b.vars = o.vars, b.E = o.n + 2 * o.ghost;
  b.G = static_cast<long>(b.E) * b.E * b.E;
  b.periodic = o.periodic || o.mock;
  b.mock = o.mock;
  b.rank = rank;
  std::copy(o.divide, o.divide + 3, b.P);
  if (b.P[0] * b.P[1] * b.P[2] == 0) MPI_Dims_create(size, 3, b.P);
  b.c[0] = rank % b.P[0], b.c[1] = rank / b.P[0] % b.P[1], b.c[2] = rank / (b.P[0] * b.P[1]);
  for (int d = 0; d < kDirs; d++) {
    b.nbr[d] = -1;
    if (d == kSelf) continue;
    // The lists depend on geometry only: a rank on a non-periodic boundary
    // still sends across the face it has a neighbour at.
    b.recv[d] = region_zones(b, d, true);
    b.send[d] = region_zones(b, d, false);
    int q[3];
    bool inside = true;
    for (int a = 0; a < 3; a++) {
      q[a] = b.c[a] + offset(d, a);
      if (b.periodic) q[a] = (q[a] + b.P[a]) % b.P[a];
      inside &= q[a] >= 0 && q[a] < b.P[a];
    }
    if (!inside) continue;
    b.nbr[d] = b.mock ? rank : q[0] + b.P[0] * (q[1] + b.P[1] * q[2]);
  }
  return b;
}

// Groups of directions per grouping mode; every rank gets the same groups
// (message sizes depend on the direction only), so SFs match across ranks.
std::vector<std::vector<int>> make_groups(const Box &b, const std::string &mode, long cutoff) {
  std::vector<std::vector<int>> g;
  auto bytes = [&](int d) {  // the size the message has where it exists
    int zones = 1;
    for (int a = 0; a < 3; a++) zones *= offset(d, a) == 0 ? b.n : b.w;
    return static_cast<long>(zones) * b.vars * static_cast<long>(sizeof(double));
  };
  if (mode == "each") {
    for (int d = 0; d < kDirs; d++)
      if (d != kSelf) g.push_back({d});
  } else if (mode == "groups") {
    std::vector<int> small, large;
    for (int d = 0; d < kDirs; d++)
      if (d != kSelf) (bytes(d) < cutoff ? small : large).push_back(d);
    for (auto *v : {&small, &large})
      if (!v->empty()) g.push_back(*v);
  } else {
    g.emplace_back();
    for (int d = 0; d < kDirs; d++)
      if (d != kSelf) g.back().push_back(d);
  }
  return g;
}

class SfHalo : public Variant {
 public:
  SfHalo(const Box &b, const std::vector<std::vector<int>> &groups, const std::string &transport, bool device)
      : b_(b), device_(device) {
    MPI_Comm comm = b.mock ? MPI_COMM_SELF : MPI_COMM_WORLD;
    stf_int nroots = static_cast<stf_int>(b.G * b.vars);
    for (const auto &g : groups) {
      std::vector<stf_int> ilocal;
      std::vector<stf_node> iremote;
      for (int d : g) {
        if (b.nbr[d] < 0) continue;
        // Ghost zone recv[d][k] is owned zone send[opposite(d)][k] of the
        // neighbour at d (same shape, same order).
        const std::vector<long> &theirs = b.send[opposite(d)];
        for (int v = 0; v < b.vars; v++)
          for (size_t k = 0; k < b.recv[d].size(); k++) {
            ilocal.push_back(static_cast<stf_int>(v * b.G + b.recv[d][k]));
            iremote.push_back(stf_node{b.mock ? 0 : b.nbr[d], static_cast<stf_int>(v * b.G + theirs[k])});
          }
      }
      stf_sf sf;
      CHECK_STF(stf_create(comm, &sf));
      CHECK_STF(stf_set_type(sf, transport.c_str()));
      CHECK_STF(stf_set_graph(sf, nroots, static_cast<stf_int>(ilocal.size()), ilocal.data(), STF_COPY_VALUES,
                              iremote.data(), STF_COPY_VALUES));
      CHECK_STF(stf_setup(sf));
      sfs_.push_back(sf);
    }
    reqs_.resize(sfs_.size());
  }
  ~SfHalo() override {
    for (stf_sf &sf : sfs_) CHECK_STF(stf_destroy(&sf));
  }
  bool stats(stf_stats &sum) override {
    sum = stf_stats{};
    for (stf_sf sf : sfs_) {
      stf_stats s = stf_stats_init();
      CHECK_STF(stf_get_stats(sf, &s));
      long long *to = &sum.pack_calls;
      const long long *from = &s.pack_calls;
      for (size_t i = 0; i < (sizeof(stf_stats) - offsetof(stf_stats, pack_calls)) / sizeof(long long); i++)
        to[i] += from[i];
    }
    return true;
  }
  void reset_stats() override {
    for (stf_sf sf : sfs_) CHECK_STF(stf_reset_stats(sf));
  }

  void cycle(double *data, Times &t) override {
    double t0 = MPI_Wtime();
    // Roots (owned zones) and leaves (ghost zones) are disjoint parts of one array.
    for (size_t i = 0; i < sfs_.size(); i++)
      CHECK_STF(stf_bcast_begin(sfs_[i], MPI_DOUBLE, data, data, MPI_REPLACE, &reqs_[i]));
    double t1 = MPI_Wtime();
    for (size_t i = 0; i < sfs_.size(); i++) CHECK_STF(stf_bcast_end(sfs_[i], &reqs_[i]));
    if (device_) CHECK_STF(stf_device_synchronize());
    double t2 = MPI_Wtime();
    t[kPackPost] += t1 - t0, t[kWaitUnpack] += t2 - t1, t[kCycle] += t2 - t0;
  }

 private:
  const Box &b_;
  bool device_;
  std::vector<stf_sf> sfs_;
  std::vector<stf_request> reqs_;
};

// Globally unique value of variable v at global zone (x, y, z) in check cycle `salt`.
double zone_value(const Box &b, int v, long x, long y, long z, int salt) {
  long NX = static_cast<long>(b.P[0]) * b.n, NY = static_cast<long>(b.P[1]) * b.n, NZ = static_cast<long>(b.P[2]) * b.n;
  return static_cast<double>((((static_cast<long>(salt) * b.vars + v) * NZ + z) * NY + y) * NX + x + 1);
}

// Owned zones get their unique values, ghosts -1.
void fill(const Box &b, std::vector<double> &host, int salt) {
  std::fill(host.begin(), host.end(), -1.0);
  for (int v = 0; v < b.vars; v++)
    for (int k = 0; k < b.n; k++)
      for (int j = 0; j < b.n; j++)
        for (int i = 0; i < b.n; i++)
          host[v * b.G + b.zone(i, j, k)] =
              zone_value(b, v, long(b.c[0]) * b.n + i, long(b.c[1]) * b.n + j, long(b.c[2]) * b.n + k, salt);
}

// Compares every zone with what it must hold: owned zones their own value,
// ghost zones with a neighbour their owner's value, others -1.
long verify(const Box &b, const std::vector<double> &host, int salt, const char *variant) {
  long bad = 0;
  const int n = b.n, w = b.w;
  for (int v = 0; v < b.vars; v++)
    for (int k = -w; k < n + w; k++)
      for (int j = -w; j < n + w; j++)
        for (int i = -w; i < n + w; i++) {
          int loc[3] = {i, j, k}, d = 0;
          long g[3];
          for (int a = 2; a >= 0; a--) {
            int o = loc[a] < 0 ? -1 : loc[a] >= n ? 1 : 0;
            d = d * 3 + o + 1;
            // The owner's zone: a neighbouring box, wrapped around a periodic
            // grid; in mock mode this box's own periodic image.
            long N = static_cast<long>(b.P[a]) * n;
            if (b.mock) g[a] = long(b.c[a]) * n + (loc[a] + n) % n;
            else g[a] = ((long(b.c[a]) * n + loc[a]) % N + N) % N;
          }
          double want = d == kSelf || b.nbr[d] >= 0 ? zone_value(b, v, g[0], g[1], g[2], salt) : -1.0;
          double got = host[v * b.G + b.zone(i, j, k)];
          if (got != want && bad++ < 10)
            std::fprintf(stderr,
                         "halo3d: %s: rank %d var %d zone (%d,%d,%d) (direction %d, owner rank %d) holds %.17g, "
                         "expected %.17g\n",
                         variant, b.rank, v, i, j, k, d, d == kSelf ? b.rank : b.nbr[d], got, want);
        }
  return bad;
}

// The data array on the host or the emulated device.
class Data {
 public:
  Data(size_t doubles, bool device) : n_(doubles), device_(device) {
    if (device) CHECK_STF(stf_device_malloc(doubles * sizeof(double), reinterpret_cast<void **>(&ptr_)));
    else host_.resize(doubles), ptr_ = host_.data();
  }
  ~Data() {
    if (device_) CHECK_STF(stf_device_free(ptr_));
  }
  Data(const Data &) = delete;
  Data &operator=(const Data &) = delete;
  double *get() { return ptr_; }
  void upload(const std::vector<double> &h) {
    if (device_) CHECK_STF(stf_device_memcpy(ptr_, h.data(), n_ * sizeof(double)));
    else host_ = h;
  }
  void download(std::vector<double> &h) {
    if (device_) CHECK_STF(stf_device_memcpy(h.data(), ptr_, n_ * sizeof(double)));
    else h = host_;
  }

 private:
  size_t n_;
  bool device_;
  std::vector<double> host_;
  double *ptr_ = nullptr;
};

struct Result {
  std::string impl, grouping;
  std::vector<double> round_us;  // slowest rank's mean cycle time per round
  Times sum{};                   // this rank's phase seconds over all timed cycles
  long timed = 0;
  bool has_stats = false;
  stf_stats stats{};  // this rank's counters over the --cycles cycles of the timed loop
};

// One cycle, checked: unique values in, every zone compared after.
void check_cycle(const Box &b, Variant &var, Data &data, std::vector<double> &host, int salt, const std::string &name) {
  fill(b, host, salt);
  data.upload(host);
  Times ignored{};
  var.cycle(data.get(), ignored);
  data.download(host);
  long bad = verify(b, host, salt, name.c_str()), total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (total) {
    if (b.rank == 0) std::fprintf(stderr, "halo3d: %s: %ld wrong zones\n", name.c_str(), total);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Options opt;
  int p = parse(argc, argv, opt);
  if (p == 1 && rank == 0) usage(argv[0]);
  if (p == 0 && opt.divide[0] * opt.divide[1] * opt.divide[2] != 0 &&
      opt.divide[0] * opt.divide[1] * opt.divide[2] != size) {
    if (rank == 0) std::fprintf(stderr, "halo3d: --divide %dx%dx%d does not have %d ranks\n", opt.divide[0],
                                opt.divide[1], opt.divide[2], size);
    p = 2;
  }
  if (p) {
    MPI_Finalize();
    return p == 1 ? 0 : 2;
  }
  std::string memory_name = "host";
  if (opt.device) {
    const char *dev = nullptr;
    CHECK_STF(stf_device_get_name(&dev));
    if (std::strcmp(dev, "host") == 0) CHECK_STF(stf_device_select("emu"));
    CHECK_STF(stf_device_get_name(&dev));
    memory_name = std::string("device (") + dev + ")";
  }

  Box b = make_box(opt, rank, size);
  size_t doubles = static_cast<size_t>(b.G) * b.vars;
  std::vector<double> host(doubles);
  std::vector<Result> results;
  {
    Data data(doubles, opt.device);
    std::vector<std::unique_ptr<Variant>> variants;
    for (const char *gm : kGroupings) {
      if (!in_list(opt.groupings, gm)) continue;
      auto groups = make_groups(b, gm, opt.cutoff);
      for (const char *impl : {"mpi", "starforest"}) {
        if (!in_list(opt.impls, impl)) continue;
        if (std::strcmp(impl, "mpi") == 0)
          variants.emplace_back(make_mpi_halo(b, groups, std::strcmp(gm, "each") == 0,
                                              opt.device ? device_messages(b) : host_messages(b)));
        else variants.emplace_back(new SfHalo(b, groups, opt.transport, opt.device));
        results.emplace_back();
        results.back().impl = impl;
        results.back().grouping = gm;
      }
    }
    auto name = [&](size_t k) { return results[k].impl + "/" + results[k].grouping; };
    // The first cycle of each variant is a check and a warm-up.
    for (size_t k = 0; k < variants.size(); k++) check_cycle(b, *variants[k], data, host, 0, name(k));
    fill(b, host, 0);
    data.upload(host);
    for (auto &v : variants) v->reset_stats();
    int done = 0;
    for (int r = 0; r < opt.rounds; r++) {
      int cycles = opt.cycles * (r + 1) / opt.rounds - opt.cycles * r / opt.rounds;
      for (size_t i = 0; i < variants.size(); i++) {
        size_t k = (i + r) % variants.size();  // rotate who goes first
        Times t{};
        MPI_Barrier(MPI_COMM_WORLD);
        for (int c = 0; c < cycles; c++) {
          int index = done + c + 1;
          if (opt.check_every && index % opt.check_every == 0) check_cycle(b, *variants[k], data, host, index, name(k));
          else variants[k]->cycle(data.get(), t);
        }
        int timed = cycles;
        if (opt.check_every) timed -= (done + cycles) / opt.check_every - done / opt.check_every;
        for (int ph = 0; ph < kNumPhases; ph++) results[k].sum[ph] += t[ph];
        results[k].timed += timed;
        if (timed > 0)  // the same on every rank
          results[k].round_us.push_back(bench::max_over_ranks(t[kCycle] / timed * 1e6, MPI_COMM_WORLD));
      }
      done += cycles;
    }
    for (size_t k = 0; k < variants.size(); k++) results[k].has_stats = variants[k]->stats(results[k].stats);
  }

  // Logical messages and bytes per cycle on this rank (self messages included).
  long msgs = 0, bytes = 0;
  for (int d = 0; d < kDirs; d++)
    if (b.nbr[d] >= 0) msgs++, bytes += b.message_doubles(d) * static_cast<long>(sizeof(double));
  long max_msgs = 0, max_bytes = 0;
  MPI_Allreduce(&msgs, &max_msgs, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&bytes, &max_bytes, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);

  bench::JsonLog log;
  if (rank == 0) {
    std::printf("# halo3d: %d ranks as %dx%dx%d, n %d^3 per rank, ghost %d, %d vars, %s%s, memory %s, cutoff %ld B, "
                "starforest transport %s\n",
                size, b.P[0], b.P[1], b.P[2], b.n, b.w, b.vars, opt.periodic ? "periodic" : "non-periodic",
                opt.mock ? ", MOCK (no communication)" : "", memory_name.c_str(), opt.cutoff,
                opt.transport.c_str());
    std::printf("# per rank and cycle: up to %ld messages, %ld bytes; %ld timed cycles per variant in %d rounds\n",
                max_msgs, max_bytes, results.empty() ? 0L : results[0].timed, opt.rounds);
    std::printf("# cycle us: median round (slowest rank) [min..max]; phases: us per cycle, min/avg/max over ranks\n");
    std::printf("%-11s %-7s %26s %8s %9s %8s\n", "impl", "group", "cycle us [min..max]", "GB/s", "Mmsg/s", "sf/mpi");
  }
  std::vector<bench::Stats> stats;
  for (const Result &r : results) stats.push_back(bench::summarize(r.round_us, r.timed));
  std::vector<std::array<std::array<double, 3>, kNumPhases>> phases(results.size());
  for (size_t k = 0; k < results.size(); k++)
    for (int ph = 0; ph < kNumPhases; ph++) {
      double us = results[k].timed ? results[k].sum[ph] / results[k].timed * 1e6 : 0, mn, mx, sum;
      MPI_Allreduce(&us, &mn, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
      MPI_Allreduce(&us, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      MPI_Allreduce(&us, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      phases[k][ph] = {mn, sum / size, mx};
    }
  if (rank == 0) {
    for (size_t k = 0; k < results.size(); k++) {
      const bench::Stats &s = stats[k];
      double ratio = 0;  // starforest against the MPI variant of the same grouping
      for (size_t m = 0; m < results.size(); m++)
        if (results[m].grouping == results[k].grouping && results[m].impl == "mpi")
          ratio = s.us / stats[m].us;
      double gbps = max_bytes / s.us * 1e-3, mmsg = max_msgs / s.us;
      std::printf("%-11s %-7s %26s %8.3f %9.3f %8.2f\n", results[k].impl.c_str(), results[k].grouping.c_str(),
                  bench::range_text(s).c_str(), gbps, mmsg, ratio);
      bench::Record ph;
      for (int i = 0; i < kNumPhases; i++)
        ph.object(kPhaseNames[i], bench::Record()
                                      .num("min_us", phases[k][i][0])
                                      .num("avg_us", phases[k][i][1])
                                      .num("max_us", phases[k][i][2]));
      char divide[48];
      std::snprintf(divide, sizeof divide, "%dx%dx%d", b.P[0], b.P[1], b.P[2]);
      bench::Record rec;
      rec.timing("halo3d", results[k].impl, b.n, size, s)
          .str("grouping", results[k].grouping)
          .integer("bytes", max_bytes)
          .integer("messages", max_msgs)
          .num("ratio_to_mpi", ratio)
          .num("gbps", gbps)
          .num("msgs_per_s", mmsg * 1e6)
          .str("transport", results[k].impl == "mpi" ? "isend" : opt.transport)
          .str("memory", opt.device ? "device" : "host")
          .str("stream", opt.device ? "library" : "none")
          .str("divide", divide)
          .boolean("periodic", opt.periodic)
          .integer("ghost", b.w)
          .integer("vars", b.vars)
          .integer("cutoff", opt.cutoff)
          .boolean("mock", opt.mock)
          .object("phases", ph);
      log.add(rec);
    }
    std::printf("\n%-11s %-7s", "impl", "group");
    for (int i = 0; i < kNumPhases; i++) std::printf(" %24s", kPhaseNames[i]);
    std::printf("\n");
    for (size_t k = 0; k < results.size(); k++) {
      std::printf("%-11s %-7s", results[k].impl.c_str(), results[k].grouping.c_str());
      for (int i = 0; i < kNumPhases; i++) {
        char col[64];
        std::snprintf(col, sizeof col, "%.1f/%.1f/%.1f", phases[k][i][0], phases[k][i][1], phases[k][i][2]);
        std::printf(" %24s", col);
      }
      std::printf("\n");
    }
    std::printf("\n# starforest counters per cycle on rank 0: messages sent, pack and unpack kernels, local\n"
                "# scatters, device kernel launches and library-stream waits\n");
    std::printf("%-11s %-7s %8s %8s %8s %8s %8s %8s\n", "impl", "group", "msgs", "packs", "unpacks", "scatters",
                "dev_kern", "dev_sync");
    for (const Result &r : results) {
      if (!r.has_stats) continue;
      double c = opt.cycles;
      const stf_stats &s = r.stats;
      std::printf("%-11s %-7s %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f\n", r.impl.c_str(), r.grouping.c_str(),
                  s.messages_sent / c, s.pack_calls / c, s.unpack_calls / c, s.scatter_calls / c,
                  s.device_kernel_launches / c, s.device_stream_syncs / c);
    }
  }
  int rc = 0;
  if (rank == 0 && !opt.json.empty() && !log.write(opt.json)) rc = 1;
  MPI_Finalize();
  return rc;
}
