// test_device's stream work on the emulated device: the device counters of
// every stream model and data path, ordering against a slow kernel on a
// user stream (models A and B), model C with ends in rank-dependent order,
// two bcasts in flight with device data on some ranks only, and a reduce
// whose unpack targets repeat (atomics needed on emu's thread pool).
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "check.h"
#include "device_parts.h"
#include "graphs.h"
#include "oracle.h"
#include "runner.h"

using namespace stft;

namespace {

// Leaf i of rank p reads root i (or n-1-i when reversed) of rank p+1: with
// more than one rank every message is contiguous (or, reversed, needs packing).
LocalGraph shift_graph(int me, int size, int n, bool reversed) {
  LocalGraph g;
  g.nroots = n;
  for (int i = 0; i < n; ++i) g.iremote.push_back(stf_node{(me + 1) % size, reversed ? n - 1 - i : i});
  return g;
}

const char *const kModels[] = {"A", "B", "C"};

std::string path_options(int model, bool staged) {
  return std::string("-stf_stream_model ") + kModels[model] + " -stf_device_aware " + (staged ? "0" : "1");
}

long long delta(const stf_stats &a, const stf_stats &b, long long stf_stats::*f) { return b.*f - a.*f; }

}  // namespace

// The device counters of one bcast with roots and leaves on the device, for
// each stream model and data path, against what the models promise: a
// contiguous bcast launches no pack kernel; model A waits for the device once
// in begin and for the stream once in end; B waits for the stream exactly
// once in begin when it sends (and never in end); C never waits in begin and
// waits for its packing event in end; staging copies down once and up once
// per operation (one message each way here); transports whose transfers are
// stream work wait for nothing but model A's device sync and stream sync. REPLACE iterations, then SUM
// ones adding the same roots again; the leaves are checked at the end.
void counter_tests(Checker &ck, int me, int size, int first_path) {
  const int n = 64;
  const bool remote = size > 1;  // one rank: no messages, a self scatter only
  const bool check_mpi = std::getenv("STF_DEVICE_CHECK_MPI") && *std::getenv("STF_DEVICE_CHECK_MPI") == '1';
  // The window transport in fence or pscw mode (fence is its default) cannot
  // defer sends: model C runs as B there.
  const char *type = std::getenv("STF_TYPE"), *wsync = std::getenv("STF_WINDOW_SYNC");
  // Transports whose transfers are stream work (ipc, nvshmem) cannot defer
  // sends either, and need no stream sync in begin in any model.
  const bool on_stream = type && (std::string(type) == "ipc" || std::string(type) == "nvshmem");
  const bool c_runs_as_b =
      on_stream || (type && std::string(type) == "window" && !(wsync && std::string(wsync) == "lock"));
  void *root = nullptr, *leaf = nullptr;
  stf_device_malloc(n * sizeof(int), &root);
  stf_device_malloc(n * sizeof(int), &leaf);
  std::vector<int> init(n), got(n);
  for (int i = 0; i < n; ++i) init[i] = 1000 * me + i;
  stf_device_memcpy(root, init.data(), n * sizeof(int));
  for (int staged = first_path; staged < 2; ++staged)
    for (int model = 0; model < 3; ++model)
      for (int reversed = 0; reversed < 2; ++reversed) {
        const std::string opts = path_options(model, staged);
        const std::string what = std::string(reversed ? "packed" : "contiguous") + " bcast, " + opts;
        stf_sf sf = make_sf(ck, shift_graph(me, size, n, reversed), MPI_COMM_WORLD, opts.c_str(), STF_COPY_VALUES);
        if (!sf) continue;
        const int iters = 3;
        for (int it = 0; it < 2 * iters; ++it) {
          const bool sum = it >= iters;
          ck.context("counters: " + std::string(sum ? "MPI_SUM " : "REPLACE ") + what);
          stf_stats before = stf_stats_init(), mid = stf_stats_init(), after = stf_stats_init();
          stf_get_stats(sf, &before);
          stf_request req = nullptr;
          ck.code(stf_bcast_begin(sf, MPI_INT, root, leaf, sum ? MPI_SUM : MPI_REPLACE, &req), STF_SUCCESS,
                  "bcast_begin");
          stf_get_stats(sf, &mid);
          ck.code(stf_bcast_end(sf, &req), STF_SUCCESS, "bcast_end");
          stf_get_stats(sf, &after);
          stf_device_synchronize();
          const int acts_as = model == 2 && c_runs_as_b ? 1 : model;
          const bool A = acts_as == 0, B = acts_as == 1, C = acts_as == 2;
          // Begin.
          ck.check(delta(before, mid, &stf_stats::device_syncs) == (A ? 1 : 0), "begin: %lld device syncs",
                   delta(before, mid, &stf_stats::device_syncs));
          const long long want_begin_streams =
              on_stream ? 0 : B ? remote : A ? remote && (reversed || staged) : 0;
          ck.check(delta(before, mid, &stf_stats::device_stream_syncs) == want_begin_streams,
                   "begin: %lld stream syncs, want %lld", delta(before, mid, &stf_stats::device_stream_syncs),
                   want_begin_streams);
          ck.check(delta(before, mid, &stf_stats::device_event_syncs) == 0, "begin: %lld event syncs",
                   delta(before, mid, &stf_stats::device_event_syncs));
          const long long want_packs = remote ? reversed : 0;
          ck.check(delta(before, after, &stf_stats::pack_calls) == want_packs, "%lld pack calls, want %lld",
                   delta(before, after, &stf_stats::pack_calls), want_packs);
          ck.check(delta(before, mid, &stf_stats::device_copies_d2h) == (staged && remote ? 1 : 0),
                   "begin: %lld copies d2h", delta(before, mid, &stf_stats::device_copies_d2h));
          // End.
          ck.check(delta(mid, after, &stf_stats::device_stream_syncs) == (A ? 1 : 0), "end: %lld stream syncs",
                   delta(mid, after, &stf_stats::device_stream_syncs));
          ck.check(delta(mid, after, &stf_stats::device_event_syncs) == (C && remote ? 1 : 0),
                   "end: %lld event syncs", delta(mid, after, &stf_stats::device_event_syncs));
          ck.check(delta(mid, after, &stf_stats::device_syncs) == 0, "end: %lld device syncs",
                   delta(mid, after, &stf_stats::device_syncs));
          ck.check(delta(mid, after, &stf_stats::device_copies_h2d) == (staged && remote ? 1 : 0),
                   "end: %lld copies h2d", delta(mid, after, &stf_stats::device_copies_h2d));
          // Kernels: the pack; an unpack unless every message is received in
          // place (device-aware REPLACE outside model C) or copied up into
          // place (staged REPLACE); one rank: the self scatter.
          const bool unpack = sum || (C && !staged);
          const long long want_launches = remote ? want_packs + (unpack ? 1 : 0) : 1;
          ck.check(delta(before, after, &stf_stats::device_kernel_launches) == want_launches,
                   "%lld kernel launches, want %lld", delta(before, after, &stf_stats::device_kernel_launches),
                   want_launches);
          if (check_mpi && remote) {
            ck.check(delta(before, after, &stf_stats::mpi_buffers_checked) == 2, "%lld buffers checked, want 2",
                     delta(before, after, &stf_stats::mpi_buffers_checked));
            // Device-aware: MPI gets device memory both ways (the contiguous
            // send, and the receive in place or into the device buffer).
            const long long want_dev = staged ? 0 : 2;
            ck.check(delta(before, after, &stf_stats::device_buffers_to_mpi) == want_dev,
                     "%lld device buffers handed to MPI, want %lld",
                     delta(before, after, &stf_stats::device_buffers_to_mpi), want_dev);
          }
        }
        stf_device_memcpy(got.data(), leaf, n * sizeof(int));
        for (int i = 0; i < n; ++i) {
          const int want = (iters + 1) * (1000 * ((me + 1) % size) + (reversed ? n - 1 - i : i));
          if (!ck.check(got[i] == want, "leaf %d = %d, want %d", i, got[i], want)) break;
        }
        stf_destroy(&sf);
      }
  stf_device_free(root);
  stf_device_free(leaf);
}

namespace {

// A slow kernel on a user stream writes the roots; the bcast right after
// must send what it wrote: model A waits for the whole device, model B does
// when that stream is the library stream (stf_device_set_stream). (Model B
// with another stream may send stale data; that is the user's contract.)
struct SlowFill {
  int *data;
  int value;
};
void slow_fill(int64_t b, int64_t e, void *ctx) {
  const SlowFill *f = static_cast<const SlowFill *>(ctx);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  for (int64_t i = b; i < e; ++i) f->data[i] = f->value + static_cast<int>(i);
}

}  // namespace

void ordering_tests(Checker &ck, int me, int size) {
  const int n = 256;
  int *root = nullptr, *leaf = nullptr;
  stf_device_malloc(n * sizeof(int), reinterpret_cast<void **>(&root));
  stf_device_malloc(n * sizeof(int), reinterpret_cast<void **>(&leaf));
  stf_stream user = nullptr;
  ck.code(stf_stream_create(&user), STF_SUCCESS, "stf_stream_create");
  std::vector<int> got(n);
  int round = 0;
  for (int staged = 0; staged < 2; ++staged)
    for (int model = 0; model < 2; ++model)  // A, B
      for (int reversed = 0; reversed < 2; ++reversed) {
        const std::string opts = path_options(model, staged);
        ck.context(std::string("ordering: slow producer on a user stream, ") + (reversed ? "packed " : "contiguous ") +
                   opts);
        stf_sf sf = make_sf(ck, shift_graph(me, size, n, reversed), MPI_COMM_WORLD, opts.c_str(), STF_COPY_VALUES);
        if (!sf) continue;
        ++round;
        std::vector<int> old(n, -1);
        stf_device_memcpy(root, old.data(), n * sizeof(int));
        if (model == 1) stf_device_set_stream(user);
        SlowFill fill{root, 100000 * round + 1000 * me};
        ck.code(stf_device_launch(user, n, slow_fill, &fill), STF_SUCCESS, "stf_device_launch");
        ck.code(stf_bcast(sf, MPI_INT, root, leaf, MPI_REPLACE), STF_SUCCESS, "bcast");
        stf_device_synchronize();
        if (model == 1) stf_device_set_stream(nullptr);
        stf_stream_synchronize(user);
        stf_device_memcpy(got.data(), leaf, n * sizeof(int));
        const int src = (me + 1) % size;
        for (int i = 0; i < n; ++i) {
          const int want = 100000 * round + 1000 * src + (reversed ? n - 1 - i : i);
          if (!ck.check(got[i] == want, "leaf %d = %d, want %d", i, got[i], want)) break;
        }
        stf_destroy(&sf);
      }
  stf_stream_destroy(user);
  stf_device_free(root);
  stf_device_free(leaf);
}

// Model C posts sends from end. Two bcasts in flight on one SF, ended in
// opposite orders on neighbouring ranks: the messages must still reach the
// right operation (sends leave in begin order, whatever the end order).
void model_c_end_order(Checker &ck, int me, int size, int first_path) {
  const int n = 32;
  for (int staged = first_path; staged < 2; ++staged) {
    const std::string opts = path_options(2, staged);
    ck.context("model C: two bcasts ended in rank-dependent order, " + opts);
    stf_sf sf = make_sf(ck, shift_graph(me, size, n, true), MPI_COMM_WORLD, opts.c_str(), STF_COPY_VALUES);
    if (!sf) continue;
    int *root[2], *leaf[2];
    std::vector<int> init(n);
    for (int k = 0; k < 2; ++k) {
      stf_device_malloc(n * sizeof(int), reinterpret_cast<void **>(&root[k]));
      stf_device_malloc(n * sizeof(int), reinterpret_cast<void **>(&leaf[k]));
      for (int i = 0; i < n; ++i) init[i] = 10000 * k + 100 * me + i;
      stf_device_memcpy(root[k], init.data(), n * sizeof(int));
    }
    stf_request req[2] = {nullptr, nullptr};
    for (int k = 0; k < 2; ++k)
      ck.code(stf_bcast_begin(sf, MPI_INT, root[k], leaf[k], MPI_REPLACE, &req[k]), STF_SUCCESS, "bcast_begin");
    const int first = me % 2;  // odd ranks end the second operation first
    ck.code(stf_bcast_end(sf, &req[first]), STF_SUCCESS, "bcast_end");
    ck.code(stf_bcast_end(sf, &req[1 - first]), STF_SUCCESS, "bcast_end");
    stf_device_synchronize();
    std::vector<int> got(n);
    for (int k = 0; k < 2; ++k) {
      stf_device_memcpy(got.data(), leaf[k], n * sizeof(int));
      for (int i = 0; i < n; ++i) {
        const int want = 10000 * k + 100 * ((me + 1) % size) + (n - 1 - i);
        if (!ck.check(got[i] == want, "operation %d leaf %d = %d, want %d", k, i, got[i], want)) break;
      }
      stf_device_free(root[k]);
      stf_device_free(leaf[k]);
    }
    stf_destroy(&sf);
  }
}

// --odd-ranks-on-host: two bcasts in flight, the first on device data on odd
// ranks only, the second on host data, ended second first. A node-aware
// strategy copies its steps without messages itself on host data and runs
// them on device data: its ranks must still begin their later steps in the
// same order.
void mixed_in_flight(Checker &ck, int me, int size) {
  const int n = 32;
  ck.context("two bcasts in flight, the first on device data on odd ranks only");
  stf_sf sf = make_sf(ck, shift_graph(me, size, n, true), MPI_COMM_WORLD, nullptr, STF_COPY_VALUES);
  if (!sf) return;
  std::vector<int> host_root[2], host_leaf[2];
  void *root[2], *leaf[2];
  for (int k = 0; k < 2; ++k) {
    host_root[k].resize(n);
    host_leaf[k].assign(n, -1);
    for (int i = 0; i < n; ++i) host_root[k][i] = 10000 * k + 100 * me + i;
    root[k] = host_root[k].data();
    leaf[k] = host_leaf[k].data();
  }
  const bool device = me % 2;
  if (device) {
    stf_device_malloc(n * sizeof(int), &root[0]);
    stf_device_malloc(n * sizeof(int), &leaf[0]);
    stf_device_memcpy(root[0], host_root[0].data(), n * sizeof(int));
  }
  stf_request req[2] = {nullptr, nullptr};
  for (int k = 0; k < 2; ++k)
    ck.code(stf_bcast_begin(sf, MPI_INT, root[k], leaf[k], MPI_REPLACE, &req[k]), STF_SUCCESS, "bcast_begin");
  ck.code(stf_bcast_end(sf, &req[1]), STF_SUCCESS, "bcast_end (second)");
  ck.code(stf_bcast_end(sf, &req[0]), STF_SUCCESS, "bcast_end (first)");
  stf_device_synchronize();
  if (device) {
    stf_device_memcpy(host_leaf[0].data(), leaf[0], n * sizeof(int));
    stf_device_free(root[0]);
    stf_device_free(leaf[0]);
  }
  for (int k = 0; k < 2; ++k)
    for (int i = 0; i < n; ++i) {
      const int want = 10000 * k + 100 * ((me + 1) % size) + (n - 1 - i);
      if (!ck.check(host_leaf[k][i] == want, "operation %d leaf %d = %d, want %d", k, i, host_leaf[k][i], want)) break;
    }
  stf_destroy(&sf);
}

// Every leaf of every rank adds 1 to root 0 of rank 0: the unpack at rank 0
// hits one slot from all positions of one kernel, split over the emu pool.
// trials: up to this many runs, stopping at the first wrong sum.
void atomics_test(Checker &ck, int me, int size, int trials) {
  // Doubles: their add is a load, an add and a store (an integer add to
  // memory is one instruction, which an interrupt cannot cut in two).
  const int nleaves = 1 << 18;
  LocalGraph g;
  g.nroots = 1;
  for (int i = 0; i < nleaves; ++i) g.iremote.push_back(stf_node{0, 0});
  stf_sf sf = make_sf(ck, g, MPI_COMM_WORLD, nullptr, STF_COPY_VALUES);
  void *root = nullptr, *leaf = nullptr;
  stf_device_malloc(sizeof(double), &root);
  stf_device_malloc(nleaves * sizeof(double), &leaf);
  std::vector<double> ones(nleaves, 1.0);
  stf_device_memcpy(leaf, ones.data(), nleaves * sizeof(double));
  const double want = static_cast<double>(nleaves) * size;  // exact in a double
  for (int trial = 0; trial < trials; ++trial) {
    ck.context("atomics: reduce SUM onto one root, trial " + std::to_string(trial));
    double zero = 0, got = -1;
    stf_device_memcpy(root, &zero, sizeof zero);
    ck.code(stf_reduce(sf, MPI_DOUBLE, leaf, root, MPI_SUM), STF_SUCCESS, "reduce");
    stf_device_synchronize();
    stf_device_memcpy(&got, root, sizeof got);
    int ok = me != 0 || got == want;
    if (me == 0) ck.check(ok, "root = %.0f, want %.0f", got, want);
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok) break;
  }
  stf_destroy(&sf);
  stf_device_free(root);
  stf_device_free(leaf);
}
