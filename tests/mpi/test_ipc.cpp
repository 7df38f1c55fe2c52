// -stf_type ipc beyond the oracle suite (test_device runs that under it):
// - up to -stf_ipc_slots operations of a direction in flight, device data,
//   ended in a random order (the same on every rank), bcasts and reduces
//   alternating, each checked;
// - one more in flight is refused (STF_ERR_UNSUPPORTED), on every rank, and
//   the SF goes on working;
// - host data through the same regions;
// - units larger than -stf_ipc_unit_bytes are refused (the SF works after);
// - peers on another (emulated) node, and a device that cannot share its
//   memory (host), are refused on every rank at set-up, with a message;
// - destroying SFs in rank-dependent order while the stream may still run;
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
// a shuffled order; every result checked.
void in_flight(Checker &ck, int me, int size, int count, bool device) {
  ck.context(std::to_string(count) + " operations in flight on " + (device ? "device" : "host") + " data");
  stf_sf sf = ring(ck, me, size, "-stf_ipc_slots 8");
  const int prev = (me + size - 1) % size, next = (me + 1) % size;
  Arrays a(count, device);
  std::vector<stf_request> req(count, nullptr);
  for (int k = 0; k < count; k++) {
    std::vector<int> root(kUnits), leaf(kUnits);
    for (int i = 0; i < kUnits; i++) root[i] = 100 * me + 10 * k + i, leaf[i] = 1000 * me + k + i;
    a.put(a.root[k], root);
    a.put(a.leaf[k], leaf);
    const int rc = k % 2 ? stf_reduce_begin(sf, MPI_INT, a.leaf[k], a.root[k], MPI_SUM, &req[k])
                         : stf_bcast_begin(sf, MPI_INT, a.root[k], a.leaf[k], MPI_REPLACE, &req[k]);
    ck.code(rc, STF_SUCCESS, "begin");
  }
  std::vector<int> order(count);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(count));  // the same on every rank
  for (int k : order)
    ck.code(k % 2 ? stf_reduce_end(sf, &req[k]) : stf_bcast_end(sf, &req[k]), STF_SUCCESS, "end");
  for (int k = 0; k < count; k++) {
    // bcast: my leaves hold the next rank's roots; reduce: my roots gain the previous rank's leaves.
    const std::vector<int> got = a.get(k % 2 ? a.root[k] : a.leaf[k]);
    for (int i = 0; i < kUnits; i++) {
      const int want = k % 2 ? 100 * me + 10 * k + i + 1000 * prev + k + i : 100 * next + 10 * k + i;
      if (!ck.check(got[i] == want, "operation %d unit %d: %d, want %d", k, i, got[i], want)) break;
    }
  }
  stf_destroy(&sf);
}

// The ninth bcast in flight with 8 slots is refused on every rank; the SF works after.
void one_too_many(Checker &ck, int me, int size) {
  ck.context("one operation more than the slots");
  stf_sf sf = ring(ck, me, size, "-stf_ipc_slots 8");
  Arrays a(9, true);
  std::vector<stf_request> req(9, nullptr);
  for (int k = 0; k < 8; k++)
    ck.code(stf_bcast_begin(sf, MPI_INT, a.root[k], a.leaf[k], MPI_REPLACE, &req[k]), STF_SUCCESS, "begin");
  const int rc = stf_bcast_begin(sf, MPI_INT, a.root[8], a.leaf[8], MPI_REPLACE, &req[8]);
  const std::string msg = stf_last_error_message();
  ck.check(everyone(rc == STF_ERR_UNSUPPORTED), "some rank did not refuse the ninth (here %d)", rc);
  ck.check(msg.find("-stf_ipc_slots") != std::string::npos, "message '%s' lacks the option", msg.c_str());
  for (int k = 0; k < 8; k++) ck.code(stf_bcast_end(sf, &req[k]), STF_SUCCESS, "end");
  std::vector<int> root(kUnits, me);
  a.put(a.root[8], root);
  ck.code(stf_bcast_begin(sf, MPI_INT, a.root[8], a.leaf[8], MPI_REPLACE, &req[8]), STF_SUCCESS, "begin after");
  ck.code(stf_bcast_end(sf, &req[8]), STF_SUCCESS, "end after");
  ck.check(a.get(a.leaf[8])[kUnits - 1] == (me + 1) % size, "bcast after the refusal");
  stf_destroy(&sf);
}

// Units of 64 B against regions sized for 4 B units (8 units: 32 B, a
// cache line of 64 B after rounding, less than 512 B).
void too_large_units(Checker &ck, int me, int size) {
  ck.context("units larger than the regions'");
  stf_sf sf = ring(ck, me, size, "-stf_ipc_unit_bytes 4");
  MPI_Datatype big;
  MPI_Type_contiguous(16, MPI_INT, &big);
  MPI_Type_commit(&big);
  void *root = nullptr, *leaf = nullptr;
  stf_device_malloc(kUnits * 64, &root);
  stf_device_malloc(kUnits * 64, &leaf);
  stf_request req = nullptr;
  const int rc = stf_bcast_begin(sf, big, root, leaf, MPI_REPLACE, &req);
  ck.code(rc, STF_ERR_UNSUPPORTED, "bcast of 64 B units with -stf_ipc_unit_bytes 4");
  ck.check(std::string(stf_last_error_message()).find("-stf_ipc_unit_bytes") != std::string::npos, "message: %s",
           stf_last_error_message());
  if (rc == STF_SUCCESS) stf_bcast_end(sf, &req);
  ck.code(stf_bcast_begin(sf, MPI_INT, root, leaf, MPI_REPLACE, &req), STF_SUCCESS, "then ints");
  ck.code(stf_bcast_end(sf, &req), STF_SUCCESS, "end");
  stf_destroy(&sf);
  stf_device_free(root);
  stf_device_free(leaf);
  MPI_Type_free(&big);
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

// SFs destroyed in rank-dependent order right after their last end, whose
// stream work may still run.
void destroy_orders(Checker &ck, int me, int size) {
  ck.context("destroyed in rank-dependent order");
  stf_sf sf[3];
  Arrays a(3, true);
  for (stf_sf &s : sf) s = ring(ck, me, size, nullptr);
  for (int k = 0; k < 3; k++) {
    stf_request req = nullptr;
    ck.code(stf_bcast_begin(sf[k], MPI_INT, a.root[k], a.leaf[k], MPI_REPLACE, &req), STF_SUCCESS, "begin");
    ck.code(stf_bcast_end(sf[k], &req), STF_SUCCESS, "end");
  }
  for (int k = 0; k < 3; k++) stf_destroy(&sf[(k + me) % 3]);
  ck.check(everyone(true), "a rank did not return from the destroys");
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  {
    Checker ck("test_ipc", argc, argv, 1);
    for (int count : {1, 5, 8}) in_flight(ck, me, size, count, true);
    in_flight(ck, me, size, 8, false);
    one_too_many(ck, me, size);
    if (size > 1) too_large_units(ck, me, size);  // one rank has no messages
    destroy_orders(ck, me, size);
    const char *dev = std::getenv("STF_DEVICE");
    if (dev && std::string(dev) == "emu") no_host_wait(ck, me, size);  // host functions as kernels
    if (size > 1) refused(ck, me, size, "peers on another node", "-stf_ranks_per_node 1", "on another node");
    ck.code(stf_device_select("host"), STF_SUCCESS, "stf_device_select host");
    refused(ck, me, size, "the host device", nullptr, "has no memory other processes can map");
    const int rc = ck.finish();
    MPI_Finalize();
    return rc;
  }
}
