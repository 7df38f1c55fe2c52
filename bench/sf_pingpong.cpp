// sf_pingpong: latency of two-rank star forests against raw MPI ping-pong.
//
// Variants (--variant; scripts/bench also knows them as sf_<variant>):
//   pingpong     rank 0 owns n roots, rank 1 owns n contiguous leaves pointing
//                at roots 0..n-1 of rank 0. A round trip is a bcast (roots ->
//                leaves) then a reduce (leaves -> roots), MPI_REPLACE on
//                MPI_BYTE units. Each rank passes one buffer as both root and
//                leaf data (it has only one of the two).
//   newpingpong  the same graph, but every rank keeps one set of root data and
//                one set of leaf data, separate arrays, as an application
//                with both would: shows whether aliasing the buffers matters.
//   unpack       the same graph with MPI_SUM on MPI_DOUBLE units: the leaves
//                and roots are updated with the op, so every message goes
//                through an unpack kernel instead of straight to user memory.
//   scatter      rank 0 also owns n leaves on its own roots (self edges), so
//                the local scatter overlaps the remote message.
// The baseline is MPI_Send/MPI_Recv of the same bytes 0 -> 1 -> 0, on the same
// buffers, measured in the same run. --mem emu puts every buffer in the
// emulated device's memory (stf_device_malloc): the SF then packs and unpacks
// with device kernels and hands device pointers to MPI. --mem cuda puts them
// in a GPU's memory; its baseline by default copies each message to the host,
// sends it, and copies it back on arrival, as code without a CUDA-aware MPI
// must (the SF decides for itself whether MPI takes device pointers).
//
// --bare adds the put-with-signal protocol alone, built into the benchmark
// (BarePutSignal: a shared window, a signal word and the payload per rank,
// one copy in and one copy out per message, as the putsignal transport
// does), timed in the same interleaved rounds: the floor that putsignal's
// own bookkeeping is measured against (host memory, both ranks on one node).
// --prepared adds the starforest round trip by prepared requests
// (stf_bcast_init, stf_reduce_init, then stf_start and the ends), timed in
// the same rounds beside the begin/end form.
//
// On more than 2 ranks (e.g. a cluster from scripts/cluster, several hosts)
// rank 0 pings, one pair after the other, the first rank on its own host
// ("in-host") and the first rank on another host ("between-hosts"), as
// MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) sees the hosts; each pair runs
// the variant on a 2-rank communicator while the other ranks sleep in a
// barrier, and a last table puts the pairs side by side.
//
// Methodology (as in common MPI latency benchmarks): warm-up iterations, then
// 10,000 iterations up to 8 KiB and 1,000 above; one-way latency = round trip
// / 2. Because the machine may be noisy, the two implementations are
// interleaved: each size is timed in several rounds, alternating MPI and
// starforest, and the median round is reported with the fastest and slowest.
#include <starforest.h>

#include "bare_putsignal.h"
#include "bench_common.h"
#include "check.h"
#include "pingpong_baselines.h"

#include <time.h>

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr long kLargeFrom = 8192;  // sizes above this use the "large" counts

enum class Variant { pingpong, newpingpong, unpack, scatter };
const char *const kVariantNames[] = {"pingpong", "newpingpong", "unpack", "scatter"};

struct Options {
  Variant variant = Variant::pingpong;
  std::string mem = "host";  // host | emu | cuda
  std::string type = "basic";
  std::string baseline;  // sendrecv | persistent | staged | copy; default staged on cuda, else sendrecv
  long max_size = 4L << 20;
  double iters_scale = 1.0;
  int rounds = 9;  // interleaved rounds per size; odd, so the median is a real round
  bool bare = false;  // also time the bare put-with-signal protocol
  bool prepared = false;  // also time the round trip by prepared requests
  std::string json;
};

void usage(const char *prog) {
  std::printf(
      "usage: mpiexec -n 2 (or more) %s [--variant V] [--mem host|emu|cuda] [--type T] [--max-size BYTES]\n"
      "                       [--iters-scale F] [--rounds R] [--json FILE]\n"
      "  Ping-pong latency of a 2-rank starforest against MPI_Send/MPI_Recv, sizes 8 B .. max-size.\n"
      "  On more ranks: rank 0 with the first rank on its host and with the first on another host.\n"
      "  --variant V       pingpong (default), newpingpong (separate root and leaf arrays),\n"
      "                    unpack (MPI_SUM on doubles), scatter (plus self edges on rank 0)\n"
      "  --mem M           host (default), emu (emulated-device memory) or cuda (GPU memory)\n"
      "  --type T          starforest transport (default basic)\n"
      "  --baseline B      sendrecv (default: MPI_Send/MPI_Recv) or persistent (MPI_Recv_init +\n"
      "                    MPI_Start, MPI_Isend, MPI_Wait: the requests the basic transport uses)\n"
      "                    or staged (MPI_Send/MPI_Recv of host copies; the default with --mem cuda)\n"
      "                    or copy (device memory: a device-to-device copy of the bytes on each rank in\n"
      "                    turn, handed over by empty messages: the floor of the ipc transport)\n"
      "  --max-size BYTES  largest message (default 4194304)\n"
      "  --iters-scale F   multiply iteration counts (e.g. 0.05 for a quick run)\n"
      "  --rounds R        split the iterations into R interleaved rounds (default 9)\n"
      "  --bare            also time the bare put-with-signal protocol (shared window, host memory,\n"
      "                    both ranks on one node): the floor of the putsignal transport\n"
      "  --prepared        also time the starforest round trip by prepared requests (stf_start)\n"
      "  --json FILE       also write the results as a JSON array\n",
      prog);
}

// Returns 0 to run, 1 to exit successfully (--help), 2 on a bad argument.
int parse(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    bool has_value = i + 1 < argc;
    if (a == "--help" || a == "-h") return 1;
    if (a == "--variant" && has_value) {
      std::string v = argv[++i];
      int k = 0;
      while (k < 4 && v != kVariantNames[k]) ++k;
      if (k == 4) {
        std::fprintf(stderr, "sf_pingpong: unknown variant '%s'\n", v.c_str());
        return 2;
      }
      o.variant = (Variant)k;
    } else if (a == "--mem" && has_value) {
      o.mem = argv[++i];
    } else if (a == "--type" && has_value) {
      o.type = argv[++i];
    } else if (a == "--baseline" && has_value) {
      std::string b = argv[++i];
      if (b != "sendrecv" && b != "persistent" && b != "staged" && b != "copy") {
        std::fprintf(stderr, "sf_pingpong: --baseline sendrecv|persistent|staged|copy, got '%s'\n", b.c_str());
        return 2;
      }
      o.baseline = b;
    } else if (a == "--max-size" && has_value) {
      o.max_size = std::atol(argv[++i]);
    } else if (a == "--iters-scale" && has_value) {
      o.iters_scale = std::atof(argv[++i]);
    } else if (a == "--rounds" && has_value) {
      o.rounds = std::atoi(argv[++i]);
    } else if (a == "--bare") {
      o.bare = true;
    } else if (a == "--prepared") {
      o.prepared = true;
    } else if (a == "--json" && has_value) {
      o.json = argv[++i];
    } else {
      std::fprintf(stderr, "sf_pingpong: bad argument '%s' (try --help)\n", a.c_str());
      return 2;
    }
  }
  if (o.max_size < 8 || o.max_size > (1L << 30) || !(o.iters_scale > 0) || o.rounds < 1 ||
      (o.mem != "host" && o.mem != "emu" && o.mem != "cuda") || (o.bare && o.mem != "host") ||
      (o.baseline == "copy" && o.mem == "host")) {
    std::fprintf(stderr,
                 "sf_pingpong: need --max-size in [8, 2^30], --iters-scale > 0, --rounds >= 1, "
                 "--mem host|emu|cuda (host with --bare, not with --baseline copy)\n");
    return 2;
  }
  if (o.baseline.empty()) o.baseline = o.mem == "cuda" ? "staged" : "sendrecv";
  return 0;
}

// What one variant moves: unit, op, and whether rank 0 has self leaves.
struct Setup {
  MPI_Datatype unit;
  int unit_bytes;
  MPI_Op op;
  bool self_leaves;    // rank 0 owns n leaves on its own roots
  bool alias_buffers;  // root and leaf data share one buffer per rank
  const char *unit_name, *op_name;
};

Setup setup_of(Variant v) {
  if (v == Variant::unpack) return Setup{MPI_DOUBLE, 8, MPI_SUM, false, false, "double", "sum"};
  return Setup{MPI_BYTE, 1, MPI_REPLACE, v == Variant::scatter, v == Variant::pingpong, "byte", "replace"};
}

// Root and leaf data of this rank (device memory with --mem emu).
struct Buffers {
  char *root = nullptr, *leaf = nullptr;
  char *spare = nullptr;   // --baseline copy: where each rank copies the message
  std::vector<char> host;  // staging for checks
  Buffers(long bytes, bool alias, bool with_spare) : host(bytes) {
    void *p = nullptr;
    CHECK_STF(stf_device_malloc(bytes, &p));
    root = (char *)p;
    if (alias) {
      leaf = root;
    } else {
      CHECK_STF(stf_device_malloc(bytes, &p));
      leaf = (char *)p;
    }
    if (with_spare) {
      CHECK_STF(stf_device_malloc(bytes, &p));
      spare = (char *)p;
    }
  }
  ~Buffers() {
    if (spare) stf_device_free(spare);
    if (leaf != root) stf_device_free(leaf);
    stf_device_free(root);
  }
};


// Whether the pair shares memory (the bare protocol needs it).
bool pair_on_one_node() {
  MPI_Comm node;
  MPI_Comm_split_type(g_pair, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int n = 0;
  MPI_Comm_size(node, &n);
  MPI_Comm_free(&node);
  int all = 0;
  MPI_Allreduce(&n, &all, 1, MPI_INT, MPI_MIN, g_pair);
  return all == 2;
}

// One starforest round trip: roots (rank 0) -> leaves -> roots. A rank
// without roots never reads rootdata, one without leaves never touches
// leafdata, so aliased buffers are fine.
void sf_roundtrip(stf_sf sf, const Setup &s, Buffers &b) {
  CHECK_STF(stf_bcast(sf, s.unit, b.root, b.leaf, s.op));
  CHECK_STF(stf_reduce(sf, s.unit, b.leaf, b.root, s.op));
}

// The same round trip by prepared requests, made once.
struct PreparedRoundtrip {
  stf_sf sf;
  stf_request bcast = nullptr, reduce = nullptr;
  PreparedRoundtrip(stf_sf s, const Setup &su, Buffers &b) : sf(s) {
    CHECK_STF(stf_bcast_init(sf, su.unit, b.root, b.leaf, su.op, &bcast));
    CHECK_STF(stf_reduce_init(sf, su.unit, b.leaf, b.root, su.op, &reduce));
  }
  ~PreparedRoundtrip() {
    CHECK_STF(stf_request_free(sf, &bcast));
    CHECK_STF(stf_request_free(sf, &reduce));
  }
  void operator()() {
    CHECK_STF(stf_start(sf, &bcast));
    CHECK_STF(stf_bcast_end(sf, &bcast));
    CHECK_STF(stf_start(sf, &reduce));
    CHECK_STF(stf_reduce_end(sf, &reduce));
  }
};

// n units: rank 0 owns n roots (and n self leaves for scatter), rank 1 n leaves.
stf_sf make_sf(int rank, stf_int n, const Setup &s, const std::string &type) {
  stf_sf sf = nullptr;
  CHECK_STF(stf_create(g_pair, &sf));
  CHECK_STF(stf_set_type(sf, type.c_str()));
  stf_int nroots = rank == 0 ? n : 0;
  stf_int nleaves = rank == 1 || s.self_leaves ? n : 0;
  std::vector<stf_node> remote(nleaves);
  for (stf_int i = 0; i < nleaves; ++i) remote[i] = stf_node{0, i};
  CHECK_STF(stf_set_graph(sf, nroots, nleaves, nullptr, STF_COPY_VALUES, remote.data(), STF_COPY_VALUES));
  CHECK_STF(stf_setup(sf));
  return sf;
}

// Value of unit i in the checks: small integers, exact as bytes and doubles.
int pattern(long i, int salt) { return (int)((i * 31 + salt) % 101); }

void fill(std::vector<char> &h, const Setup &s, long n, int salt) {
  for (long i = 0; i < n; ++i) {
    if (s.unit_bytes == 1) h[i] = (char)pattern(i, salt);
    else ((double *)h.data())[i] = pattern(i, salt);
  }
}

long count_wrong(const std::vector<char> &h, const Setup &s, long n, int salt) {
  long bad = 0;
  for (long i = 0; i < n; ++i) {
    if (s.unit_bytes == 1) bad += h[i] != (char)pattern(i, salt);
    else bad += ((const double *)h.data())[i] != pattern(i, salt);
  }
  return bad;
}

// Checks once per size that the SF moves the right data both ways, so the
// timings are known to measure a working exchange. Destinations start at 0,
// so MPI_SUM and MPI_REPLACE give the same expected values; with self
// leaves, both leaves of a root send the same value in the reduce.
void verify(int rank, stf_sf sf, const Setup &s, Buffers &b, long size) {
  long n = size / s.unit_bytes, bad = 0;
  bool has_roots = rank == 0, has_leaves = rank == 1 || s.self_leaves;
  std::vector<char> zero(size, 0);
  auto put = [&](char *dst, int salt) {
    if (salt < 0) {
      CHECK_STF(stf_device_memcpy(dst, zero.data(), size));
    } else {
      fill(b.host, s, n, salt);
      CHECK_STF(stf_device_memcpy(dst, b.host.data(), size));
    }
  };
  auto wrong = [&](const char *src, int salt) {
    CHECK_STF(stf_device_synchronize());
    CHECK_STF(stf_device_memcpy(b.host.data(), src, size));
    return count_wrong(b.host, s, n, salt);
  };
  if (has_roots) put(b.root, 0);
  if (has_leaves) put(b.leaf, -1);
  CHECK_STF(stf_bcast(sf, s.unit, b.root, b.leaf, s.op));
  if (has_leaves) bad += wrong(b.leaf, 0);
  if (has_leaves) put(b.leaf, 1);
  if (has_roots) put(b.root, -1);
  CHECK_STF(stf_reduce(sf, s.unit, b.leaf, b.root, s.op));
  if (has_roots) bad += wrong(b.root, 1);
  if (bad) {
    std::fprintf(stderr, "sf_pingpong: rank %d: %ld wrong units at size %ld\n", rank, bad, size);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

// One-way latency in microseconds of `iters` round trips. Rank 0 starts and
// ends every round trip, so its clock is the one to use.
template <class F>
double time_us(long iters, F &&roundtrip) {
  MPI_Barrier(g_pair);
  double t0 = MPI_Wtime();
  for (long i = 0; i < iters; ++i) roundtrip();
  CHECK_STF(stf_device_synchronize());  // device results count (no-op on host)
  double t = MPI_Wtime() - t0;
  MPI_Bcast(&t, 1, MPI_DOUBLE, 0, g_pair);
  return t / (double)iters / 2.0 * 1e6;
}

// Where one round trip's work goes, from the SF's counters (rank 0 and 1).
void print_counters(int rank, stf_sf sf, const Setup &s, Buffers &b, long size) {
  CHECK_STF(stf_reset_stats(sf));
  sf_roundtrip(sf, s, b);
  CHECK_STF(stf_device_synchronize());
  stf_stats st = stf_stats_init();
  CHECK_STF(stf_get_stats(sf, &st));
  long long v[8] = {st.pack_calls, st.unpack_calls, st.scatter_calls, st.messages_sent,
                    st.messages_received, st.device_kernel_launches, st.device_stream_syncs,
                    st.bytes_unpacked};
  long long all[16];
  MPI_Gather(v, 8, MPI_LONG_LONG, all, 8, MPI_LONG_LONG, 0, g_pair);
  if (rank == 0)
    for (int r = 0; r < 2; ++r) {
      long long *c = all + 8 * r;
      std::printf("# counters, one round trip at %ld B, rank %d: pack %lld, unpack %lld (%lld B), self %lld, "
                  "sent %lld, received %lld, device kernels %lld, stream waits %lld\n",
                  size, r, c[0], c[1], c[7], c[2], c[3], c[4], c[5], c[6]);
    }
}

// One measured pair: rank 0 of MPI_COMM_WORLD and `peer`.
struct Pair {
  const char *label;  // "in-host" or "between-hosts"
  int peer;
};

// The pairs to measure: on 2 ranks the only one; on more, rank 0 with the
// first rank on its host and with the first rank on another host.
std::vector<Pair> choose_pairs(const std::vector<int> &host_of) {
  auto label = [&](int r) { return host_of[r] == host_of[0] ? "in-host" : "between-hosts"; };
  if (host_of.size() == 2) return {Pair{label(1), 1}};
  std::vector<Pair> pairs;
  for (int want_same = 1; want_same >= 0; --want_same)
    for (int r = 1; r < (int)host_of.size(); ++r)
      if ((host_of[r] == host_of[0]) == (want_same == 1)) {
        pairs.push_back(Pair{label(r), r});
        break;
      }
  return pairs;
}

// A barrier that sleeps: ranks waiting for other pairs leave the cores to
// them (a blocking MPI_Barrier spins).
void quiet_barrier(MPI_Comm comm) {
  MPI_Request req;
  MPI_Ibarrier(comm, &req);
  int done = 0;
  const timespec nap{0, 200000};
  while (MPI_Test(&req, &done, MPI_STATUS_IGNORE), !done) nanosleep(&nap, nullptr);
}

// Median mpi and starforest latency per size (rank 0 of the pair).
struct PairResult {
  std::vector<bench::Stats> mpi, sf, bare, prepared;
};

// The bare protocol's data check, once per size: rank 0's pattern reaches
// rank 1 and comes back.
void verify_bare(int rank, BarePutSignal &bare, std::vector<char> &buf, long size) {
  for (long i = 0; i < size; ++i) buf[i] = rank == 0 ? (char)pattern(i, 3) : 0;
  bare(buf.data(), size);
  long bad = 0;
  for (long i = 0; i < size; ++i) bad += buf[i] != (char)pattern(i, 3);
  if (bad) {
    std::fprintf(stderr, "sf_pingpong: rank %d: bare protocol, %ld wrong bytes at size %ld\n", rank, bad, size);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

PairResult run_pair(int rank, const Options &opt, const Setup &s, const std::string &name,
                    const std::vector<long> &sizes, const Pair &pair, int nranks, bench::JsonLog &log) {
  PairResult out;
  Buffers b(sizes.back(), s.alias_buffers, opt.baseline == "copy");
  const bool with_bare = opt.bare && pair_on_one_node();
  if (opt.bare && !with_bare && rank == 0) std::printf("# --bare: ranks 0 and %d share no memory, left out\n", pair.peer);
  std::unique_ptr<BarePutSignal> bare;
  std::vector<char> bare_buf;
  if (with_bare) {
    bare = std::make_unique<BarePutSignal>(g_pair, sizes.back());
    bare_buf.resize(sizes.back());
  }
  if (rank == 0) {
    std::printf("# %s: ranks 0 and %d (%s) of %d, %s units, bcast+reduce (%s), transport %s, %s memory, vs %s\n",
                name.c_str(), pair.peer, pair.label, nranks, s.unit_name, s.op_name, opt.type.c_str(),
                opt.mem.c_str(),
                opt.baseline == "persistent" ? "persistent receive, MPI_Isend"
                : opt.baseline == "staged"   ? "MPI_Send/Recv of host copies"
                : opt.baseline == "copy"     ? "a device copy on each rank in turn"
                                             : "MPI_Send/Recv");
    std::printf("# one-way latency = round trip / 2; median of %d interleaved rounds [min..max]\n", opt.rounds);
    std::printf("%10s %26s %30s %7s %10s", "size(B)", "mpi us [min..max]", "starforest us [min..max]",
                "sf/mpi", "overhead");
    if (with_bare) std::printf(" %26s %8s %9s", "bare put+signal us", "sf/bare", "bare/mpi");
    if (opt.prepared) std::printf(" %26s %8s", "prepared us [min..max]", "prep/mpi");
    std::printf("\n");
  }

  for (long size : sizes) {
    bool large = size > kLargeFrom;
    long warmup = std::max(1L, std::lround((large ? 10 : 100) * std::min(1.0, opt.iters_scale)));
    long iters = std::lround((large ? 1000 : 10000) * opt.iters_scale);
    long per_round = std::max(1L, iters / opt.rounds);

    stf_sf sf = make_sf(rank, (stf_int)(size / s.unit_bytes), s, opt.type);
    verify(rank, sf, s, b, size);

    PersistentRoundtrip persistent(rank, b.root, size);
    auto mpi_rt = [&] {
      if (opt.baseline == "persistent") persistent();
      else if (opt.baseline == "staged") staged_roundtrip(rank, b.root, b.host, size);
      else if (opt.baseline == "copy") copy_roundtrip(rank, b.spare, b.root, size);
      else mpi_roundtrip(rank, b.root, size);
    };
    auto sf_rt = [&] { sf_roundtrip(sf, s, b); };
    auto bare_rt = [&] { (*bare)(bare_buf.data(), size); };
    std::unique_ptr<PreparedRoundtrip> prepared;
    if (opt.prepared) prepared = std::make_unique<PreparedRoundtrip>(sf, s, b);
    auto prepared_rt = [&] { (*prepared)(); };
    if (with_bare) verify_bare(rank, *bare, bare_buf, size);
    for (long i = 0; i < warmup; ++i) mpi_rt();
    for (long i = 0; i < warmup; ++i) sf_rt();
    for (long i = 0; with_bare && i < warmup; ++i) bare_rt();
    for (long i = 0; prepared && i < warmup; ++i) prepared_rt();

    // Rotate which implementation goes first so that none of them
    // systematically benefits from a warm cache or a quiet moment.
    std::vector<double> t_mpi, t_sf, t_bare, t_prepared;
    std::vector<int> kinds = {0, 1};
    if (with_bare) kinds.push_back(2);
    if (prepared) kinds.push_back(3);
    const int nk = static_cast<int>(kinds.size());
    for (int r = 0; r < opt.rounds; ++r)
      for (int k = 0; k < nk; ++k)
        switch (kinds[(r + k) % nk]) {
          case 0: t_mpi.push_back(time_us(per_round, mpi_rt)); break;
          case 1: t_sf.push_back(time_us(per_round, sf_rt)); break;
          case 2: t_bare.push_back(time_us(per_round, bare_rt)); break;
          default: t_prepared.push_back(time_us(per_round, prepared_rt)); break;
        }
    prepared.reset();
    if (size == sizes.back()) print_counters(rank, sf, s, b, size);
    CHECK_STF(stf_destroy(&sf));

    bench::Stats m = bench::summarize(t_mpi, per_round * opt.rounds);
    bench::Stats f = bench::summarize(t_sf, per_round * opt.rounds);
    out.mpi.push_back(m);
    out.sf.push_back(f);
    bench::Stats g;
    if (with_bare) {
      g = bench::summarize(t_bare, per_round * opt.rounds);
      out.bare.push_back(g);
      bench::Record r;
      r.timing(name, "bare_putsignal", size, nranks, g)
          .str("memory", "host")
          .str("transport", "none")
          .str("unit", "byte")
          .str("pair", pair.label)
          .integer("peer", pair.peer);
      log.add(r);
    }
    bench::Stats pr;
    if (opt.prepared) {
      pr = bench::summarize(t_prepared, per_round * opt.rounds);
      out.prepared.push_back(pr);
    }
    for (int k = 0; k < (opt.prepared ? 3 : 2); ++k) {
      bench::Record r;
      r.timing(name, k == 2 ? "starforest_prepared" : k ? "starforest" : "mpi", size, nranks, k == 2 ? pr : k ? f : m)
          .str("memory", opt.mem == "host" ? "host" : "device")
          .str("device", opt.mem)
          .str("transport", k ? opt.type : "none")
          .str("baseline", opt.baseline)
          .str("unit", s.unit_name)
          .str("op", s.op_name)
          .str("stream", opt.mem == "host" ? "none" : "library")
          .str("pair", pair.label)
          .integer("peer", pair.peer);
      log.add(r);
    }
    if (rank == 0) {
      std::printf("%10ld %26s %30s %7.2f %10.2f", size, bench::range_text(m).c_str(),
                  bench::range_text(f).c_str(), f.us / m.us, f.us - m.us);
      if (with_bare) std::printf(" %26s %8.2f %9.2f", bench::range_text(g).c_str(), f.us / g.us, g.us / m.us);
      if (opt.prepared) std::printf(" %26s %8.2f", bench::range_text(pr).c_str(), pr.us / m.us);
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  return out;
}

// The pairs side by side: medians, and each pair's starforest/mpi.
void print_side_by_side(const std::vector<Pair> &pairs, const std::vector<PairResult> &res,
                        const std::vector<long> &sizes) {
  std::printf("\n# side by side: median one-way latency in us (rank 0 with rank");
  for (const Pair &p : pairs) std::printf(" %d: %s;", p.peer, p.label);
  std::printf(")\n%10s", "size(B)");
  for (const Pair &p : pairs) {
    std::string mpi = std::string(p.label) + " mpi", sf = std::string(p.label) + " sf";
    std::printf(" %18s %18s %7s", mpi.c_str(), sf.c_str(), "sf/mpi");
  }
  std::printf("\n");
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::printf("%10ld", sizes[i]);
    for (const PairResult &r : res) std::printf(" %18.2f %18.2f %7.2f", r.mpi[i].us, r.sf[i].us, r.sf[i].us / r.mpi[i].us);
    std::printf("\n");
  }
  if (pairs.size() == 2 && !res[0].mpi.empty())
    std::printf("# %s / %s, mpi at %ld B: %.1fx\n", pairs[1].label, pairs[0].label, sizes[0],
                res[1].mpi[0].us / res[0].mpi[0].us);
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);

  Options opt;
  int p = parse(argc, argv, opt);
  if (p == 1 && rank == 0) usage(argv[0]);
  if (p == 0 && nranks < 2) {
    if (rank == 0) std::fprintf(stderr, "sf_pingpong: needs at least 2 ranks, got %d\n", nranks);
    p = 2;
  }
  if (p != 0) {
    MPI_Finalize();
    return p == 1 ? 0 : 1;
  }
  CHECK_STF(stf_device_select(opt.mem.c_str()));

  const Setup s = setup_of(opt.variant);
  const std::string name = std::string("sf_") + kVariantNames[(int)opt.variant];
  std::vector<long> sizes;
  for (long sz = 8; sz <= opt.max_size; sz *= 2) sizes.push_back(sz);
  bench::JsonLog log;

  std::vector<int> host_of = bench::host_of_ranks(MPI_COMM_WORLD);
  bench::set_host_layout(bench::layout_of(host_of));
  std::vector<Pair> pairs = choose_pairs(host_of);
  std::vector<PairResult> results;
  for (const Pair &pair : pairs) {
    bool member = rank == 0 || rank == pair.peer;
    MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED, rank, &g_pair);
    if (member) {
      int pair_rank;
      MPI_Comm_rank(g_pair, &pair_rank);
      results.push_back(run_pair(pair_rank, opt, s, name, sizes, pair, nranks, log));
      MPI_Comm_free(&g_pair);
    }
    quiet_barrier(MPI_COMM_WORLD);
    if (rank == 0) std::printf("\n");
  }
  if (rank == 0 && pairs.size() > 1) print_side_by_side(pairs, results, sizes);

  int rc = 0;
  if (rank == 0 && !opt.json.empty() && !log.write(opt.json)) rc = 1;
  MPI_Finalize();
  return rc;
}
