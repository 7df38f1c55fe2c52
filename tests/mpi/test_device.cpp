// Device data on the emulated device (issue 6, first slice): bcast and
// reduce with root and leaf data in emu device memory and in mixed
// placements, against the serial oracle; the device counters of a
// contiguous bcast (no kernel) and of stream model B (one stream
// synchronisation per begin that touches device memory through MPI); a
// reduce whose unpack targets repeat (atomics needed on emu's thread pool).
//
// Runs with STF_DEVICE=emu or selects emu itself.
// Options: --seed N (STF_TEST_SEED), --graphs N random graphs (STF_TEST_GRAPHS),
// --atomics-only (only the duplicate-target reduce, up to 200 times).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "check.h"
#include "graphs.h"
#include "oracle.h"
#include "runner.h"
#include "units.h"

using namespace stft;

namespace {

// A Buffer's bytes (guards included) in device memory, or the Buffer itself.
class Placed {
 public:
  Placed(Checker &ck, const UnitSpec &u, Buffer &b, bool device) : b_(b), device_(device) {
    bytes_ = (static_cast<std::size_t>(b.size()) + 2 * Buffer::kGuard) * u.extent;
    offset_ = Buffer::kGuard * u.extent;
    if (!device_) return;
    ck.code(stf_device_malloc(bytes_, &base_), STF_SUCCESS, "stf_device_malloc");
    ck.code(stf_device_memcpy(base_, b.unit(-Buffer::kGuard), bytes_), STF_SUCCESS, "stf_device_memcpy h2d");
  }
  ~Placed() {
    if (base_) stf_device_free(base_);
  }
  void *data() { return device_ ? static_cast<char *>(base_) + offset_ : b_.data(); }
  stf_memtype mtype() const { return device_ ? STF_MEMTYPE_DEVICE : STF_MEMTYPE_HOST; }
  // Bring the device copy back into the Buffer for comparison.
  void fetch(Checker &ck) {
    if (device_) ck.code(stf_device_memcpy(b_.unit(-Buffer::kGuard), base_, bytes_), STF_SUCCESS, "memcpy d2h");
  }

 private:
  Buffer &b_;
  bool device_;
  void *base_ = nullptr;
  std::size_t bytes_ = 0, offset_ = 0;
};

struct Placement {
  const char *name;
  bool roots_on_device, leaves_on_device;
};
const Placement kPlacements[] = {{"roots+leaves on device", true, true},
                                 {"roots on device, leaves on host", true, false},
                                 {"roots on host, leaves on device", false, true}};

// with_mem: the _mem variant with the types given; else the plain call detects them.
void device_bcast(Checker &ck, stf_sf sf, const DataGen &d, int me, const Placement &pl, bool with_mem) {
  Buffer root = d.root_buffer(me), leaf = d.leaf_buffer(me);
  const Buffer root0 = root;
  Placed pr(ck, *d.u, root, pl.roots_on_device), plf(ck, *d.u, leaf, pl.leaves_on_device);
  stf_stats before, after;
  stf_get_stats(sf, &before);
  stf_request req = nullptr;
  int rc = with_mem ? stf_bcast_begin_mem(sf, d.u->type, pr.mtype(), pr.data(), plf.mtype(), plf.data(), d.op, &req)
                    : stf_bcast_begin(sf, d.u->type, pr.data(), plf.data(), d.op, &req);
  if (!ck.code(rc, STF_SUCCESS, "bcast_begin")) return;
  if (!ck.code(stf_bcast_end(sf, &req), STF_SUCCESS, "bcast_end")) return;
  ck.code(stf_device_synchronize(), STF_SUCCESS, "stf_device_synchronize");
  // All on the device, an op other than REPLACE (nothing received in
  // place): however many peers, at most one pack kernel, one unpack kernel
  // and one self-part kernel, and at most one stream wait. (With REPLACE,
  // messages received in place make the unpack one kernel per other message.)
  stf_get_stats(sf, &after);
  if (pl.roots_on_device && pl.leaves_on_device && d.op != MPI_REPLACE) {
    ck.check(after.pack_calls - before.pack_calls <= 1 && after.unpack_calls - before.unpack_calls <= 1 &&
                 after.device_kernel_launches - before.device_kernel_launches <= 3,
             "%lld packs, %lld unpacks, %lld launches: want <= 1, 1, 3", after.pack_calls - before.pack_calls,
             after.unpack_calls - before.unpack_calls, after.device_kernel_launches - before.device_kernel_launches);
    ck.check(after.device_stream_syncs - before.device_stream_syncs <= 1, "%lld stream waits, want <= 1",
             after.device_stream_syncs - before.device_stream_syncs);
  }
  pr.fetch(ck);
  plf.fetch(ck);
  compare_buffers(ck, *d.u, "bcast leafdata", leaf, expect_bcast(d, me), leaf_mask(*d.g, me));
  compare_buffers(ck, *d.u, "bcast rootdata (input)", root, root0, no_mask(root));
}

void device_reduce(Checker &ck, stf_sf sf, const DataGen &d, int me, const Placement &pl, bool with_mem) {
  Buffer root = d.root_buffer(me), leaf = d.leaf_buffer(me);
  const Buffer leaf0 = leaf;
  Placed pr(ck, *d.u, root, pl.roots_on_device), plf(ck, *d.u, leaf, pl.leaves_on_device);
  stf_request req = nullptr;
  int rc = with_mem
               ? stf_reduce_begin_mem(sf, d.u->type, plf.mtype(), plf.data(), pr.mtype(), pr.data(), d.op, &req)
               : stf_reduce_begin(sf, d.u->type, plf.data(), pr.data(), d.op, &req);
  if (!ck.code(rc, STF_SUCCESS, "reduce_begin")) return;
  if (!ck.code(stf_reduce_end(sf, &req), STF_SUCCESS, "reduce_end")) return;
  ck.code(stf_device_synchronize(), STF_SUCCESS, "stf_device_synchronize");
  pr.fetch(ck);
  plf.fetch(ck);
  Buffer want = expect_reduce(d, me);
  if (d.op == MPI_REPLACE) accept_any_leaf(d, me, root, &want);
  compare_buffers(ck, *d.u, "reduce rootdata", root, want, root_mask(*d.g, me));
  compare_buffers(ck, *d.u, "reduce leafdata (input)", leaf, leaf0, no_mask(leaf));
}

// gather and scatter (REPLACE over the multi-SF) with all data on the device.
void device_gather_scatter(Checker &ck, stf_sf sf, const DataGen &d, int me) {
  const std::uint64_t blank = 31;
  Buffer leaf = d.leaf_buffer(me), multi = d.blank_multi_buffer(me, blank);
  {
    Placed pl(ck, *d.u, leaf, true), pm(ck, *d.u, multi, true);
    if (!ck.code(stf_gather(sf, d.u->type, pl.data(), pm.data()), STF_SUCCESS, "gather")) return;
    stf_device_synchronize();
    pm.fetch(ck);
  }
  compare_buffers(ck, *d.u, "gather multirootdata", multi, expect_gather(d, me, blank), all_mask(multi.size()));
  Buffer roots = d.multi_buffer(me), out = d.leaf_buffer(me);
  {
    Placed pm(ck, *d.u, roots, true), pl(ck, *d.u, out, true);
    if (!ck.code(stf_scatter(sf, d.u->type, pm.data(), pl.data()), STF_SUCCESS, "scatter")) return;
    stf_device_synchronize();
    pl.fetch(ck);
  }
  compare_buffers(ck, *d.u, "scatter leafdata", out, expect_scatter(d, me), leaf_mask(*d.g, me));
}

bool has_op(const UnitSpec &u, MPI_Op op) {
  for (MPI_Op o : u.ops)
    if (o == op) return true;
  return false;
}

void oracle_suite(Checker &ck, int me, std::uint64_t seed, int nrandom) {
  std::vector<UnitSpec> all = make_units();
  std::vector<const UnitSpec *> units;
  for (const UnitSpec &u : all)
    if (u.name == "MPI_INT" || u.name == "MPI_DOUBLE" || u.name == "contiguous(3,MPI_DOUBLE)") units.push_back(&u);
  const MPI_Op ops[] = {MPI_REPLACE, MPI_SUM, MPI_MAX};
  std::vector<NamedGraph> graphs = standard_graphs(seed, nrandom, MPI_COMM_WORLD);
  for (std::size_t gi = 0; gi < graphs.size(); ++gi) {
    const GlobalGraph G = gather_graph(graphs[gi].local, MPI_COMM_WORLD);
    for (int opt = 0; opt < 2; ++opt) {  // index analysis on (direct messages) and off (all packed)
      stf_sf sf = make_sf(ck, graphs[gi].local, MPI_COMM_WORLD, opt ? "-stf_pack_opt 0" : nullptr, STF_COPY_VALUES);
      if (!sf) continue;
      int variant = 0;
      for (const UnitSpec *u : units)
        for (MPI_Op op : ops) {
          if (!has_op(*u, op)) continue;
          for (const Placement &pl : kPlacements) {
            const bool with_mem = (variant++ % 2) == 1;
            const DataGen d{&G, u, op, hash_key(seed, gi, variant)};
            ck.context(graphs[gi].name + (opt ? " pack_opt 0 " : " ") + u->name + " " + op_name(op) + " " +
                       pl.name + (with_mem ? " (_mem)" : " (detected)"));
            device_bcast(ck, sf, d, me, pl, with_mem);
            device_reduce(ck, sf, d, me, pl, with_mem);
          }
          if (op == MPI_REPLACE) {
            ck.context(graphs[gi].name + (opt ? " pack_opt 0 " : " ") + u->name + " gather/scatter on device");
            device_gather_scatter(ck, sf, DataGen{&G, u, op, hash_key(seed, gi, 99)}, me);
          }
        }
      stf_destroy(&sf);
    }
  }
  free_units(all);
}

// Leaf i of rank p reads root i (or n-1-i when reversed) of rank p+1: with
// more than one rank every message is contiguous (or, reversed, needs packing).
LocalGraph shift_graph(int me, int size, int n, bool reversed) {
  LocalGraph g;
  g.nroots = n;
  for (int i = 0; i < n; ++i) g.iremote.push_back(stf_node{(me + 1) % size, reversed ? n - 1 - i : i});
  return g;
}

void counter_tests(Checker &ck, int me, int size) {
  const int n = 64;
  void *root = nullptr, *leaf = nullptr;
  stf_device_malloc(n * sizeof(int), &root);
  stf_device_malloc(n * sizeof(int), &leaf);
  std::vector<int> init(n);
  for (int i = 0; i < n; ++i) init[i] = 1000 * me + i;
  stf_device_memcpy(root, init.data(), n * sizeof(int));

  // Contiguous REPLACE bcast: messages go straight from and to device memory.
  ck.context("counters: contiguous REPLACE bcast");
  stf_sf sf = make_sf(ck, shift_graph(me, size, n, false), MPI_COMM_WORLD, nullptr, STF_COPY_VALUES);
  stf_stats st;
  for (int it = 0; it < 3; ++it) {
    ck.code(stf_bcast(sf, MPI_INT, root, leaf, MPI_REPLACE), STF_SUCCESS, "bcast");
    stf_device_synchronize();
  }
  stf_get_stats(sf, &st);
  // One rank: the shift is the self part, one scatter kernel per bcast.
  // Several: no kernel, and one stream wait per begin (MPI reads the roots
  // straight from device memory, which the stream may still be writing).
  ck.check(st.pack_calls == 0 && st.unpack_calls == 0, "pack %lld unpack %lld, want 0", st.pack_calls,
           st.unpack_calls);
  ck.check(st.device_kernel_launches == (size == 1 ? 3 : 0), "kernel launches %lld, want %d",
           st.device_kernel_launches, size == 1 ? 3 : 0);
  ck.check(st.device_stream_syncs == (size == 1 ? 0 : 3) && st.device_syncs == 0, "syncs %lld/%lld, want %d/0",
           st.device_stream_syncs, st.device_syncs, size == 1 ? 0 : 3);
  std::vector<int> got(n);
  stf_device_memcpy(got.data(), leaf, n * sizeof(int));
  for (int i = 0; i < n; ++i)
    if (!ck.check(got[i] == 1000 * ((me + 1) % size) + i, "leaf %d = %d", i, got[i])) break;
  stf_destroy(&sf);

  // Model B: a reversed shift packs every message; one launch and exactly
  // one stream synchronisation per begin, none in end (REPLACE into
  // contiguous leaves: received in place, nothing to unpack).
  // Then the same with MPI_SUM: one pack launch in begin, one unpack launch
  // in end, still one synchronisation per begin and none in end.
  ck.context("counters: model B, packed bcast");
  sf = make_sf(ck, shift_graph(me, size, n, true), MPI_COMM_WORLD, nullptr, STF_COPY_VALUES);
  const int iters = 4;
  for (int it = 0; it < 2 * iters; ++it) {
    const bool sum = it >= iters;
    if (sum) ck.context("counters: model B, packed bcast with MPI_SUM");
    stf_stats before, mid, after;
    stf_get_stats(sf, &before);
    stf_request req = nullptr;
    ck.code(stf_bcast_begin(sf, MPI_INT, root, leaf, sum ? MPI_SUM : MPI_REPLACE, &req), STF_SUCCESS, "bcast_begin");
    stf_get_stats(sf, &mid);
    ck.code(stf_bcast_end(sf, &req), STF_SUCCESS, "bcast_end");
    stf_get_stats(sf, &after);
    stf_device_synchronize();
    const long long want_sync = size > 1 ? 1 : 0;  // one rank: no remote sends, a self scatter only
    ck.check(mid.device_stream_syncs - before.device_stream_syncs == want_sync, "begin: %lld stream syncs, want %lld",
             mid.device_stream_syncs - before.device_stream_syncs, want_sync);
    ck.check(after.device_stream_syncs == mid.device_stream_syncs, "end: %lld stream syncs, want 0",
             after.device_stream_syncs - mid.device_stream_syncs);
    const long long want_launches = sum && size > 1 ? 2 : 1;  // pack (+ unpack); one rank: one scatter
    ck.check(after.device_kernel_launches - before.device_kernel_launches == want_launches,
             "%lld launches, want %lld", after.device_kernel_launches - before.device_kernel_launches, want_launches);
    ck.check(after.device_syncs == 0, "device syncs %lld", after.device_syncs);
  }
  // REPLACE set the leaves, then iters SUMs added the same roots again.
  stf_device_memcpy(got.data(), leaf, n * sizeof(int));
  for (int i = 0; i < n; ++i)
    if (!ck.check(got[i] == (iters + 1) * (1000 * ((me + 1) % size) + (n - 1 - i)), "leaf %d = %d", i, got[i]))
      break;
  stf_destroy(&sf);
  stf_device_free(root);
  stf_device_free(leaf);
}

// Every leaf of every rank adds 1 to root 0 of rank 0: the unpack at rank 0
// hits one slot from all positions of one kernel, split over the emu pool.
// trials: up to this many runs, stopping at the first wrong sum.
void atomics_test(Checker &ck, int me, int size, int trials) {
  const int nleaves = 1 << 16;
  LocalGraph g;
  g.nroots = 1;
  for (int i = 0; i < nleaves; ++i) g.iremote.push_back(stf_node{0, 0});
  stf_sf sf = make_sf(ck, g, MPI_COMM_WORLD, nullptr, STF_COPY_VALUES);
  void *root = nullptr, *leaf = nullptr;
  stf_device_malloc(sizeof(long long), &root);
  stf_device_malloc(nleaves * sizeof(long long), &leaf);
  std::vector<long long> ones(nleaves, 1);
  stf_device_memcpy(leaf, ones.data(), nleaves * sizeof(long long));
  for (int trial = 0; trial < trials; ++trial) {
    ck.context("atomics: reduce SUM onto one root, trial " + std::to_string(trial));
    long long zero = 0, got = -1;
    stf_device_memcpy(root, &zero, sizeof zero);
    ck.code(stf_reduce(sf, MPI_LONG_LONG, leaf, root, MPI_SUM), STF_SUCCESS, "reduce");
    stf_device_synchronize();
    stf_device_memcpy(&got, root, sizeof got);
    int ok = me != 0 || got == static_cast<long long>(nleaves) * size;
    if (me == 0) ck.check(ok, "root = %lld, want %lld", got, static_cast<long long>(nleaves) * size);
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok) break;
  }
  stf_destroy(&sf);
  stf_device_free(root);
  stf_device_free(leaf);
}

void api_tests(Checker &ck) {
  ck.context("device API");
  const char *name = nullptr;
  ck.code(stf_device_get_name(&name), STF_SUCCESS, "stf_device_get_name");
  ck.check(name && std::strcmp(name, "emu") == 0, "active device %s, want emu", name ? name : "(null)");
  void *p = nullptr;
  ck.code(stf_device_malloc(100, &p), STF_SUCCESS, "stf_device_malloc");
  int host = 0;
  stf_memtype t = STF_MEMTYPE_HOST;
  ck.code(stf_get_memtype(p, &t), STF_SUCCESS, "stf_get_memtype");
  ck.check(t == STF_MEMTYPE_DEVICE, "device block reported as host");
  stf_get_memtype(static_cast<char *>(p) + 99, &t);
  ck.check(t == STF_MEMTYPE_DEVICE, "interior of a device block reported as host");
  stf_get_memtype(&host, &t);
  ck.check(t == STF_MEMTYPE_HOST, "stack variable reported as device");
  ck.code(stf_device_select("host"), STF_ERR_STATE, "stf_device_select with live device memory");
  ck.code(stf_device_select("gpu9"), STF_ERR_OPTION, "stf_device_select unknown");
  ck.code(stf_set_options("-stf_device nope"), STF_ERR_OPTION, "-stf_device nope");
  stf_device_free(p);
  // fetch-and-op on device data is refused, on every rank alike.
  void *d = nullptr;
  stf_device_malloc(sizeof(int), &d);
  int leaf = 0, upd = 0;
  LocalGraph g;
  g.nroots = 1;
  g.iremote.push_back(stf_node{0, 0});
  stf_sf one = make_sf(ck, g, MPI_COMM_SELF, nullptr, STF_COPY_VALUES);
  ck.code(stf_fetch_and_op(one, MPI_INT, d, &leaf, &upd, MPI_SUM), STF_ERR_UNSUPPORTED, "fetch_and_op on device");
  ck.code(stf_bcast_begin_mem(one, MPI_INT, static_cast<stf_memtype>(7), d, STF_MEMTYPE_HOST, &leaf, MPI_REPLACE,
                              nullptr),
          STF_ERR_ARG, "bad memtype");
  ck.code(stf_bcast(one, MPI_INT, d, &leaf, MPI_BAND), STF_ERR_UNSUPPORTED, "MPI_BAND on device data");
  stf_destroy(&one);
  stf_device_free(d);
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Checker ck("test_device", argc, argv, 20261122);
  const std::uint64_t seed = ck.seed();
  const int nrandom = static_cast<int>(parse_long(argc, argv, "--graphs", "STF_TEST_GRAPHS", 4));
  const char *name = nullptr;
  if (stf_device_get_name(&name) || std::strcmp(name, "emu") != 0) ck.code(stf_device_select("emu"), 0, "select emu");

  // --atomics-only: the duplicate-target reduce alone, up to 200 times (run
  // with STF_TEST_NO_ATOMICS=1 to see it fail).
  bool atomics_only = false;
  for (int i = 1; i < argc; ++i) atomics_only |= std::strcmp(argv[i], "--atomics-only") == 0;
  if (atomics_only) {
    atomics_test(ck, me, size, 200);
  } else {
    api_tests(ck);
    counter_tests(ck, me, size);
    atomics_test(ck, me, size, 10);
    oracle_suite(ck, me, seed, nrandom);
  }

  int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
