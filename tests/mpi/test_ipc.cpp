// -stf_type ipc beyond the oracle suite (test_device runs that under it):
// - -stf_ipc_slots operations of each direction in flight (bcasts and
//   reduces alternating), ended in a random order (the same on every rank),
//   twice, so that every region is used again; device and host data; each
//   result checked;
// - one more in flight is refused (STF_ERR_UNSUPPORTED) on every rank, and
//   the SF refuses later operations (STF_ERR_STATE): a refusal decided
//   locally may leave the ranks' numbering out of step;
// - units larger than -stf_ipc_unit_bytes are refused, also where a link's
//   regions, rounded to cache lines, would hold them (the SF works after);
// - peers on another (emulated) node, and a device that cannot share its
//   memory (host), are refused on every rank at set-up, with a message;
// - destroying SFs right after their last end, while the stream may still run;
//   on emu, no segment name of this process is left in /dev/shm once the SFs
//   are set up (a crash would leave it there);
// - on emu, begin and end of a bcast on device data return while the
//   library stream is held up (no host wait in stream models B and C).
// Run with STF_DEVICE=emu (CI) or cuda (scripts/gpu-run-checks).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <dirent.h>
#include <unistd.h>

#include "check.h"

using namespace stft;

namespace {

constexpr int kUnits = 8;

// Leaf i reads root i of the next rank.
stf_sf ring(Checker &ck, int me, int size, const char *options) {
  stf_sf sf = nullptr;
  ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "stf_create");
  std::vector<stf_node> remote(kUnits);
  for (int i = 0; i < kUnits; i++) remote[i] = {(me + 1) % size, i};
  ck.code(stf_set_graph(sf, kUnits, kUnits, nullptr, STF_COPY_VALUES, remote.data(), STF_COPY_VALUES), STF_SUCCESS,
          "graph");
  ck.code(stf_set_type(sf, "ipc"), STF_SUCCESS, "stf_set_type ipc");
  if (options) ck.code(stf_set_sf_options(sf, options), STF_SUCCESS, "stf_set_sf_options");
  return sf;
}

bool everyone(bool mine) {
  int all = 0, m = mine;
  MPI_Allreduce(&m, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

// Arrays of kUnits ints on the device (or on the host), one per operation.
struct Arrays {
  bool device;
  std::vector<void *> root, leaf;
  Arrays(int count, bool dev) : device(dev), root(count), leaf(count) {
    for (int k = 0; k < count; k++)
      for (void **p : {&root[k], &leaf[k]}) {
        if (device) stf_device_malloc(kUnits * sizeof(int), p);
        else *p = std::calloc(kUnits, sizeof(int));
      }
  }
  ~Arrays() {
    for (std::vector<void *> *v : {&root, &leaf})
      for (void *p : *v) device ? (void)stf_device_free(p) : std::free(p);
  }
  void put(void *dst, const std::vector<int> &v) {
    if (device) stf_device_memcpy(dst, v.data(), kUnits * sizeof(int));
    else std::copy(v.begin(), v.end(), static_cast<int *>(dst));
  }
  std::vector<int> get(const void *src) {
    std::vector<int> v(kUnits);
    if (device) stf_device_memcpy(v.data(), src, kUnits * sizeof(int));
    else std::copy_n(static_cast<const int *>(src), kUnits, v.begin());
    return v;
  }
};

// `count` operations in flight (even k: bcast, odd k: reduce SUM), ended in
// a shuffled order, in two rounds; every result checked.
void in_flight(Checker &ck, int me, int size, int count, bool device) {
  ck.context(std::to_string(count) + " operations in flight on " + (device ? "device" : "host") + " data");
  stf_sf sf = ring(ck, me, size, "-stf_ipc_slots 4");
  const int prev = (me + size - 1) % size, next = (me + 1) % size;
  Arrays a(count, device);
  std::vector<stf_request> req(count, nullptr);
  for (int round = 0; round < 2; round++) {
    const int salt = 100 * round;
    for (int k = 0; k < count; k++) {
      std::vector<int> root(kUnits), leaf(kUnits);
      for (int i = 0; i < kUnits; i++) root[i] = 100 * me + 10 * k + i + salt, leaf[i] = 1000 * me + k + i;
      a.put(a.root[k], root);
      a.put(a.leaf[k], leaf);
      const int rc = k % 2 ? stf_reduce_begin(sf, MPI_INT, a.leaf[k], a.root[k], MPI_SUM, &req[k])
                           : stf_bcast_begin(sf, MPI_INT, a.root[k], a.leaf[k], MPI_REPLACE, &req[k]);
      ck.code(rc, STF_SUCCESS, "begin");
    }
    std::vector<int> order(count);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937(count + round));  // the same on every rank
    for (int k : order)
      ck.code(k % 2 ? stf_reduce_end(sf, &req[k]) : stf_bcast_end(sf, &req[k]), STF_SUCCESS, "end");
    for (int k = 0; k < count; k++) {
      // bcast: my leaves hold the next rank's roots; reduce: my roots gain the previous rank's leaves.
      const std::vector<int> got = a.get(k % 2 ? a.root[k] : a.leaf[k]);
      for (int i = 0; i < kUnits; i++) {
        const int want = k % 2 ? 100 * me + 10 * k + i + salt + 1000 * prev + k + i : 100 * next + 10 * k + i + salt;
        if (!ck.check(got[i] == want, "round %d operation %d unit %d: %d, want %d", round, k, i, got[i], want)) break;
      }
    }
  }
  stf_destroy(&sf);
}

// The ninth bcast in flight with 8 slots is refused on every rank; the
// eight end; the SF then refuses new operations on every rank.
void one_too_many(Checker &ck, int me, int size) {
  ck.context("one operation more than the slots");
  stf_sf sf = ring(ck, me, size, "-stf_ipc_slots 8");
  Arrays a(9, true);
  std::vector<stf_request> req(9, nullptr);
  for (int k = 0; k < 8; k++) {
    a.put(a.root[k], std::vector<int>(kUnits, 100 * k + me));
    ck.code(stf_bcast_begin(sf, MPI_INT, a.root[k], a.leaf[k], MPI_REPLACE, &req[k]), STF_SUCCESS, "begin");
  }
  const int rc = stf_bcast_begin(sf, MPI_INT, a.root[8], a.leaf[8], MPI_REPLACE, &req[8]);
  const std::string msg = stf_last_error_message();
  ck.check(everyone(rc == STF_ERR_UNSUPPORTED), "some rank did not refuse the ninth (here %d)", rc);
  ck.check(msg.find("-stf_ipc_slots") != std::string::npos, "message '%s' lacks the option", msg.c_str());
  for (int k = 0; k < 8; k++) ck.code(stf_bcast_end(sf, &req[k]), STF_SUCCESS, "end");
  for (int k = 0; k < 8; k++) {
    const int got = a.get(a.leaf[k])[0], want = 100 * k + (me + 1) % size;
    if (!ck.check(got == want, "bcast %d before the refusal: leaf %d, want %d", k, got, want)) break;
  }
  const int after = stf_bcast_begin(sf, MPI_INT, a.root[8], a.leaf[8], MPI_REPLACE, &req[8]);
  ck.check(everyone(after == STF_ERR_STATE), "a begin after the refusal: %d here, want STF_ERR_STATE", after);
  stf_destroy(&sf);
}

// Doubles against regions of 4 B per unit: refused, although each link's
// regions (8 units of 4 B, rounded up to a 64 B cache line) would hold 8
// doubles; ranks whose links round differently must not disagree.
void too_large_units(Checker &ck, int me, int size) {
  ck.context("units larger than the regions'");
  stf_sf sf = ring(ck, me, size, "-stf_ipc_unit_bytes 4");
  void *root = nullptr, *leaf = nullptr;
  stf_device_malloc(kUnits * sizeof(double), &root);
  stf_device_malloc(kUnits * sizeof(double), &leaf);
  stf_request req = nullptr;
  const int rc = stf_bcast_begin(sf, MPI_DOUBLE, root, leaf, MPI_REPLACE, &req);
  ck.check(everyone(rc == STF_ERR_UNSUPPORTED), "bcast of doubles with -stf_ipc_unit_bytes 4: %d here", rc);
  ck.check(std::string(stf_last_error_message()).find("-stf_ipc_unit_bytes") != std::string::npos, "message: %s",
           stf_last_error_message());
  if (rc == STF_SUCCESS) stf_bcast_end(sf, &req);
  ck.code(stf_bcast_begin(sf, MPI_INT, root, leaf, MPI_REPLACE, &req), STF_SUCCESS, "then ints");
  ck.code(stf_bcast_end(sf, &req), STF_SUCCESS, "end");
  stf_destroy(&sf);
  stf_device_free(root);
  stf_device_free(leaf);
}

void sleep_kernel(int64_t, int64_t, void *) { usleep(300 * 1000); }

// No host wait for device data: with the library stream held up by a
// kernel of 0.3 s (emu runs host functions), a bcast's begin and end
// return at once in models B and C; the data is right once the stream ran.
void no_host_wait(Checker &ck, int me, int size) {
  for (const char *model : {"B", "C"}) {
    ck.context(std::string("begin and end while the stream is busy, model ") + model);
    const std::string opts = std::string("-stf_stream_model ") + model;
    stf_sf sf = ring(ck, me, size, opts.c_str());
    Arrays a(1, true);
    a.put(a.root[0], std::vector<int>(kUnits, me));
    stf_request req = nullptr;
    ck.code(stf_bcast_begin(sf, MPI_INT, a.root[0], a.leaf[0], MPI_REPLACE, &req), STF_SUCCESS, "warm-up begin");
    ck.code(stf_bcast_end(sf, &req), STF_SUCCESS, "warm-up end");
    stf_device_synchronize();
    a.put(a.root[0], std::vector<int>(kUnits, 10 + me));
    ck.code(stf_device_launch(nullptr, 1, sleep_kernel, nullptr), STF_SUCCESS, "stf_device_launch");
    const double t0 = MPI_Wtime();
    ck.code(stf_bcast_begin(sf, MPI_INT, a.root[0], a.leaf[0], MPI_REPLACE, &req), STF_SUCCESS, "begin");
    ck.code(stf_bcast_end(sf, &req), STF_SUCCESS, "end");
    const double took = MPI_Wtime() - t0;
    ck.check(took < 0.15, "begin + end took %.3f s behind a 0.3 s kernel: the host waited", took);
    stf_device_synchronize();
    ck.check(a.get(a.leaf[0])[0] == 10 + (me + 1) % size, "leaf %d after the stream ran", a.get(a.leaf[0])[0]);
    stf_destroy(&sf);
  }
}

// Set-up refused on every rank with a message holding `want`.
void refused(Checker &ck, int me, int size, const char *what, const char *options, const char *want) {
  ck.context(what);
  stf_sf sf = ring(ck, me, size, options);
  const int rc = stf_setup(sf);
  const std::string msg = stf_last_error_message();
  ck.check(everyone(rc == STF_ERR_UNSUPPORTED), "some rank set up (here %d)", rc);
  ck.check(msg.find(want) != std::string::npos, "message '%s' lacks '%s'", msg.c_str(), want);
  stf_destroy(&sf);
}

// The emulated device's shared segments of this process still named in /dev/shm.
int names_left() {
  const std::string mine = "stf-emu-" + std::to_string(getpid()) + "-";
  int n = 0;
  if (DIR *d = opendir("/dev/shm")) {
    while (const dirent *e = readdir(d)) n += std::string(e->d_name).rfind(mine, 0) == 0;
    closedir(d);
  }
  return n;
}

// SFs destroyed right after their last end, whose stream work may still
// run (in the same order on every rank: stf_destroy is collective).
void destroy_soon(Checker &ck, int me, int size, bool emu) {
  ck.context("destroyed right after the last end");
  stf_sf sf[3];
  Arrays a(3, true);
  for (stf_sf &s : sf) s = ring(ck, me, size, nullptr);
  for (int k = 0; k < 3; k++) {
    a.put(a.root[k], std::vector<int>(kUnits, 10 * k + me));
    stf_request req = nullptr;
    ck.code(stf_bcast_begin(sf[k], MPI_INT, a.root[k], a.leaf[k], MPI_REPLACE, &req), STF_SUCCESS, "begin");
    ck.code(stf_bcast_end(sf[k], &req), STF_SUCCESS, "end");
  }
  const int left = emu ? names_left() : 0;
  ck.check(left == 0, "%d shared segment names left in /dev/shm after set-up", left);
  for (int k = 2; k >= 0; k--) stf_destroy(&sf[k]);
  for (int k = 0; k < 3; k++)
    ck.check(a.get(a.leaf[k])[0] == 10 * k + (me + 1) % size, "SF %d: leaf %d", k, a.get(a.leaf[k])[0]);
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  {
    Checker ck("test_ipc", argc, argv, 1);
    // First: a broken SF (one_too_many) keeps its device memory, and the device cannot change after it.
    const std::string dev = std::getenv("STF_DEVICE") ? std::getenv("STF_DEVICE") : "host";
    ck.code(stf_device_select("host"), STF_SUCCESS, "stf_device_select host");
    refused(ck, me, size, "the host device", nullptr, "has no memory other processes can map");
    ck.code(stf_device_select(dev.c_str()), STF_SUCCESS, "stf_device_select back");
    for (int count : {1, 5, 8}) in_flight(ck, me, size, count, true);  // 8: 4 of each direction
    in_flight(ck, me, size, 8, false);
    too_large_units(ck, me, size);
    destroy_soon(ck, me, size, dev == "emu");
    if (dev == "emu") no_host_wait(ck, me, size);  // host functions as kernels
    if (size > 1) refused(ck, me, size, "peers on another node", "-stf_ranks_per_node 1", "on another node");
    one_too_many(ck, me, size);  // last: it leaves a broken SF's memory behind
    const int rc = ck.finish();
    MPI_Finalize();
    return rc;
  }
}
