// The message roofline (Ding, Haseeb, Groves and Williams, "Evaluating the
// performance of one-sided communication on CPUs and GPUs", SC'23
// Workshops, 2023): the bandwidth a rank achieves as a function of the
// message size s and of the number m of messages it sends between
// synchronisations, beside the two ceilings that bound it, the peak
// bandwidth and the latency diagonal m * s / latency.
//
// Ranks pair up (r with r ^ 1; an odd last rank sits out). One
// synchronisation of an implementation moves m messages of s bytes each way
// between partners:
//   starforest: m SFs, each one leaf reading the partner's one root, with a
//     unit of s bytes, so that every SF sends one message of s bytes per
//     direction; m bcasts begun, then m ended (the transport under test:
//     basic, window, putsignal);
//   mpi: m MPI_Irecv and m MPI_Isend, one MPI_Waitall.
// Every point's s and m are checked against the SFs' message counters. The
// ceilings are measured per implementation and locality (the latency of one
// synchronisation with one 8-byte message, the best bandwidth of any point)
// and every point is placed against them with src/model's roofline.
//
//   mpiexec -n 2 roofline [--max-size BYTES] [--max-m M] [--transports basic,window,putsignal]
//                         [--target-ms MS] [--json FILE]
// Across hosts: scripts/bench roofline --hosts 2 --ranks 2 (partners on
// different hosts).
#include <starforest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_common.h"
#include "check.h"
#include "model/model.h"

namespace {

struct Options {
  long max_size = 1L << 22;
  int max_m = 64;
  double target_ms = 4;  // timed work per point and round
  int rounds = 3;
  std::vector<std::string> transports = {"basic", "window", "putsignal"};
  std::string json;
};


bool parse(int argc, char **argv, Options *o) {
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    const bool v = i + 1 < argc;
    if (a == "--max-size" && v) o->max_size = std::atol(argv[++i]);
    else if (a == "--max-m" && v) o->max_m = std::atoi(argv[++i]);
    else if (a == "--target-ms" && v) o->target_ms = std::atof(argv[++i]);
    else if (a == "--rounds" && v) o->rounds = std::atoi(argv[++i]);
    else if (a == "--transports" && v) o->transports = bench::split_list(argv[++i]);
    else if (a == "--json" && v) o->json = argv[++i];
    else return false;
  }
  return o->max_size >= 8 && o->max_m >= 1 && o->target_ms > 0 && o->rounds > 0;
}

// One synchronisation's worth of traffic with the partner, for one s and m.
class Exchange {
 public:
  virtual ~Exchange() = default;
  virtual void once() = 0;
};

class SfExchange final : public Exchange {
 public:
  SfExchange(const std::string &transport, int partner, long bytes, int m) : bytes_(bytes) {
    MPI_Type_contiguous(static_cast<int>(bytes), MPI_BYTE, &unit_);
    MPI_Type_commit(&unit_);
    // putsignal's regions are sized per unit: make them fit one message.
    std::string options = "-stf_type " + transport;
    if (transport == "putsignal") options += " -stf_putsignal_unit_bytes " + std::to_string(std::min(bytes, 65536L));
    const stf_node root = {partner, 0};
    sfs_.resize(static_cast<size_t>(m));
    req_.resize(static_cast<size_t>(m));
    roots_.assign(static_cast<size_t>(m), std::vector<char>(static_cast<size_t>(bytes), 1));
    leaves_.assign(static_cast<size_t>(m), std::vector<char>(static_cast<size_t>(bytes), 0));
    for (stf_sf &sf : sfs_) {
      CHECK_STF(stf_create(MPI_COMM_WORLD, &sf));
      CHECK_STF(stf_set_sf_options(sf, options.c_str()));
      CHECK_STF(stf_set_graph(sf, 1, 1, nullptr, STF_COPY_VALUES, &root, STF_COPY_VALUES));
      CHECK_STF(stf_setup(sf));
    }
  }
  ~SfExchange() override {
    for (stf_sf &sf : sfs_) stf_destroy(&sf);
    MPI_Type_free(&unit_);
  }
  void once() override {
    for (size_t k = 0; k < sfs_.size(); k++)
      CHECK_STF(stf_bcast_begin(sfs_[k], unit_, roots_[k].data(), leaves_[k].data(), MPI_REPLACE, &req_[k]));
    for (size_t k = 0; k < sfs_.size(); k++) CHECK_STF(stf_bcast_end(sfs_[k], &req_[k]));
  }
  // Messages and bytes each SF sent since set-up, the same for all: every
  // operation must have been one message of s bytes.
  bool one_message_each(long long operations) const {
    for (stf_sf sf : sfs_) {
      stf_stats st = stf_stats_init();
      CHECK_STF(stf_get_stats(sf, &st));
      if (st.messages_sent != operations || st.bytes_sent_in_node + st.bytes_sent_off_node != operations * bytes_)
        return false;
    }
    return true;
  }
  bool off_node() const {
    stf_stats st = stf_stats_init();
    CHECK_STF(stf_get_stats(sfs_[0], &st));
    return st.messages_sent_off_node > 0;
  }

 private:
  long bytes_;
  MPI_Datatype unit_;
  std::vector<stf_sf> sfs_;
  std::vector<stf_request> req_;
  std::vector<std::vector<char>> roots_, leaves_;
};

class MpiExchange final : public Exchange {
 public:
  MpiExchange(int partner, long bytes, int m)
      : partner_(partner), bytes_(bytes), send_(static_cast<size_t>(m * bytes), 1), recv_(send_.size()),
        req_(2 * static_cast<size_t>(m)) {}
  void once() override {
    const int m = static_cast<int>(req_.size() / 2);
    for (int k = 0; k < m; k++) {
      MPI_Irecv(&recv_[k * bytes_], static_cast<int>(bytes_), MPI_BYTE, partner_, k, MPI_COMM_WORLD, &req_[2 * k]);
      MPI_Isend(&send_[k * bytes_], static_cast<int>(bytes_), MPI_BYTE, partner_, k, MPI_COMM_WORLD,
                &req_[2 * k + 1]);
    }
    MPI_Waitall(static_cast<int>(req_.size()), req_.data(), MPI_STATUSES_IGNORE);
  }

 private:
  int partner_;
  long bytes_;
  std::vector<char> send_, recv_;
  std::vector<MPI_Request> req_;
};

struct Point {
  std::string impl;
  long bytes;
  int m;
  double seconds;  // per synchronisation, median round, slowest rank
};

// Seconds per synchronisation: a calibration call sets the iterations so
// that a round takes about target_ms; the median of the rounds.
double time_exchange(Exchange &x, const Options &o, long long *calls) {
  x.once();
  const double one = bench::time_per_call(MPI_COMM_WORLD, 1, [&] { x.once(); });
  long iters = static_cast<long>(o.target_ms * 1e-3 / std::max(one, 1e-7));
  MPI_Allreduce(MPI_IN_PLACE, &iters, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
  iters = std::max(1L, std::min(iters, 20000L));
  std::vector<double> rounds;
  for (int r = 0; r < o.rounds; r++)
    rounds.push_back(bench::time_per_call(MPI_COMM_WORLD, iters, [&] { x.once(); }));
  *calls = 2 + static_cast<long long>(o.rounds) * iters;
  std::sort(rounds.begin(), rounds.end());
  return rounds[rounds.size() / 2];
}

std::string impl_label(const std::string &impl) { return impl == "mpi" ? "MPI Isend/Irecv" : "sf " + impl; }

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Options o;
  if (!parse(argc, argv, &o) || size < 2) {
    if (rank == 0)
      std::fprintf(stderr, "usage (2 or more ranks): roofline [--max-size BYTES] [--max-m M] [--target-ms MS] "
                           "[--rounds R] [--transports basic,window,putsignal] [--json FILE]\n");
    MPI_Finalize();
    return 2;
  }
  // An odd last rank has no partner: it reads its own root (no message).
  const int partner = (rank ^ 1) < size ? (rank ^ 1) : rank;
  std::vector<long> sizes;
  for (long s = 8; s <= o.max_size; s *= 4) sizes.push_back(s);
  std::vector<int> ms;
  for (int m = 1; m <= o.max_m; m *= 4) ms.push_back(m);
  std::vector<std::string> impls = o.transports;
  impls.insert(impls.begin(), "mpi");

  std::vector<Point> points;
  bool counts_ok = true, off_node = false;
  for (const std::string &impl : impls)
    for (int m : ms)
      for (long s : sizes) {
        long long calls = 0;
        double t = 0;
        if (impl == "mpi") {
          MpiExchange x(partner, s, m);
          t = time_exchange(x, o, &calls);
        } else {
          SfExchange x(impl, partner, s, m);
          t = time_exchange(x, o, &calls);
          if (partner != rank && !x.one_message_each(calls)) counts_ok = false;
          off_node |= partner != rank && x.off_node();
        }
        points.push_back({impl, s, m, t});
      }
  int bad = counts_ok ? 0 : 1, off = off_node ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &off, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  const char *locality = off ? "between nodes" : "in a node";

  if (rank == 0) {
    bench::JsonLog log;
    std::printf("message roofline, %d ranks in pairs, partners %s; per rank and synchronisation: m messages of s "
                "bytes each way\n",
                size, locality);
    for (const std::string &impl : impls) {
      // Ceilings from this implementation's own points: the latency of a
      // synchronisation with one smallest message, the best bandwidth seen.
      stf::model::Roofline roof;
      for (const Point &p : points) {
        if (p.impl != impl) continue;
        if (p.m == 1 && p.bytes == sizes.front()) roof.latency = p.seconds;
        roof.peak = std::max(roof.peak, static_cast<double>(p.m) * static_cast<double>(p.bytes) / p.seconds);
      }
      std::printf("\n%s: peak %.1f MB/s, latency %.2f us\n%10s %4s %12s %12s %12s %9s %10s %10s\n",
                  impl_label(impl).c_str(), roof.peak / 1e6, roof.latency * 1e6, "bytes", "m", "us per sync",
                  "MB/s", "bound MB/s", "fraction", "regime", "vs MPI");
      for (const Point &p : points) {
        if (p.impl != impl) continue;
        const stf::model::RooflinePoint rp = stf::model::roofline_point(roof, p.m, static_cast<double>(p.bytes), p.seconds);
        double mpi = 0;
        for (const Point &q : points)
          if (q.impl == "mpi" && q.m == p.m && q.bytes == p.bytes) mpi = q.seconds;
        std::printf("%10ld %4d %12.2f %12.1f %12.1f %9.2f %10s %10.2f\n", p.bytes, p.m, p.seconds * 1e6,
                    rp.achieved / 1e6, rp.bound / 1e6, rp.fraction, rp.regime, p.seconds / mpi);
        bench::Stats st;
        st.us = st.min_us = st.max_us = p.seconds * 1e6;
        log.add(bench::Record()
                    .timing("roofline", impl, p.bytes, size, st)
                    .integer("messages_per_sync", p.m)
                    .str("locality", locality)
                    .num("bandwidth", rp.achieved)
                    .num("bound", rp.bound)
                    .num("fraction", rp.fraction)
                    .str("regime", rp.regime)
                    .num("peak", roof.peak)
                    .num("latency", roof.latency)
                    .num("ratio_to_mpi", p.seconds / mpi));
      }
    }
    std::printf("\nmessage counts %s\n", bad ? "WRONG: some SF did not send one message of s bytes per operation"
                                                 : "checked: one message of s bytes per SF and operation");
    if (!o.json.empty() && !log.write(o.json)) MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return bad ? 1 : 0;
}
