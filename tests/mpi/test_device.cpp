// Device data on the emulated device: bcast, reduce and
// fetch-and-op with root and leaf data in emu device memory and in mixed
// placements, gather/scatter on the device, against the serial oracle (in
// the SF's default stream model and data path: CTest reruns this with
// STF_STREAM_MODEL and STF_DEVICE_AWARE). The stream work (the device
// counters of every stream model and data path, ordering against a slow
// kernel on a user stream, model C with ends in rank-dependent order, a
// reduce whose unpack targets repeat) is in device_streams.cpp.
//
// Runs on the device STF_DEVICE names if it is emu or cuda (a GPU), else
// selects emu itself. On cuda the device-aware path (device pointers handed
// to MPI) runs only with STF_TEST_MPI_TAKES_CUDA=1 (a CUDA-aware MPI), and
// the ordering tests, whose slow producer is a host function, do not run.
// Options: --seed N (STF_TEST_SEED), --graphs N random graphs (STF_TEST_GRAPHS),
// --atomics-only (only the duplicate-target reduce, up to 200 times),
// --all-types (the oracle suite on every integer and floating type the device
// takes, each with REPLACE, SUM, PROD, MAX and MIN),
// --no-counters (skip the counters and the kernels and waits per operation,
// which are those of transports that move the exchange's own buffers: a
// transport that lends its memory copies contiguous messages and packs per
// message; a node-aware strategy runs several steps, each with its own),
// --odd-ranks-on-host (the placements' device data on even ranks only: one
// operation's ranks with their data in different memories).
#include <cstdlib>
#include <cstring>
#include <vector>

#include "check.h"
#include "graphs.h"
#include "oracle.h"
#include "device_parts.h"
#include "runner.h"
#include "units.h"

using namespace stft;

namespace {

bool g_counters = true;  // --no-counters clears it
bool g_odd_ranks_on_host = false;  // --odd-ranks-on-host sets it
bool g_cuda = false;      // the active device is a GPU
int g_first_path = 0;     // 1: the staged path only (MPI takes no device memory)

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
  // The bytes of from (a Buffer of the same size) in place of the data.
  void restore(Checker &ck, const Buffer &from) {
    if (device_) ck.code(stf_device_memcpy(base_, from.unit(-Buffer::kGuard), bytes_), STF_SUCCESS, "memcpy h2d");
    else b_.overwrite(from);
  }
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
  bool roots(int me) const { return roots_on_device && !(g_odd_ranks_on_host && me % 2); }
  bool leaves(int me) const { return leaves_on_device && !(g_odd_ranks_on_host && me % 2); }
};
const Placement kPlacements[] = {{"roots+leaves on device", true, true},
                                 {"roots on device, leaves on host", true, false},
                                 {"roots on host, leaves on device", false, true}};

// A prepared bcast started twice, the leaves' first values restored between.
int prepared_bcast_twice(Checker &ck, stf_sf sf, const DataGen &d, Placed &pr, Placed &plf, const Buffer &leaf0) {
  stf_request req = nullptr;
  int rc = stf_bcast_init(sf, d.u->type, pr.data(), plf.data(), d.op, &req);
  for (int k = 0; k < 2 && rc == STF_SUCCESS; k++) {
    if (k) plf.restore(ck, leaf0);
    rc = stf_start(sf, &req);
    if (rc == STF_SUCCESS) rc = stf_bcast_end(sf, &req);
  }
  if (req && stf_request_free(sf, &req) != STF_SUCCESS && rc == STF_SUCCESS) rc = STF_ERR_INTERNAL;
  return rc;
}

// with_mem: the _mem variant with the types given; else the plain call
// detects them; prepared (not with_mem): by a prepared request, twice.
void device_bcast(Checker &ck, stf_sf sf, const DataGen &d, int me, const Placement &pl, bool with_mem,
                  bool prepared = false) {
  Buffer root = d.root_buffer(me), leaf = d.leaf_buffer(me);
  const Buffer root0 = root, leaf0 = leaf;
  Placed pr(ck, *d.u, root, pl.roots(me)), plf(ck, *d.u, leaf, pl.leaves(me));
  stf_stats before = stf_stats_init(), after = stf_stats_init();
  stf_get_stats(sf, &before);
  if (prepared) {
    if (!ck.code(prepared_bcast_twice(ck, sf, d, pr, plf, leaf0), STF_SUCCESS, "prepared bcast")) return;
  } else {
    stf_request req = nullptr;
    int rc = with_mem ? stf_bcast_begin_mem(sf, d.u->type, pr.mtype(), pr.data(), plf.mtype(), plf.data(), d.op, &req)
                      : stf_bcast_begin(sf, d.u->type, pr.data(), plf.data(), d.op, &req);
    if (!ck.code(rc, STF_SUCCESS, "bcast_begin")) return;
    if (!ck.code(stf_bcast_end(sf, &req), STF_SUCCESS, "bcast_end")) return;
  }
  ck.code(stf_device_synchronize(), STF_SUCCESS, "stf_device_synchronize");
  // All on the device, an op other than REPLACE (nothing received in
  // place): however many peers, at most one pack kernel, one unpack kernel
  // and one self-part kernel, and the host waits of the SF's stream model.
  // (With REPLACE, messages received in place make the unpack one kernel
  // per other message.)
  stf_get_stats(sf, &after);
  if (g_counters && !prepared && pl.roots(me) && pl.leaves(me) && d.op != MPI_REPLACE) {
    ck.check(after.pack_calls - before.pack_calls <= 1 && after.unpack_calls - before.unpack_calls <= 1 &&
                 after.device_kernel_launches - before.device_kernel_launches <= 3,
             "%lld packs, %lld unpacks, %lld launches: want <= 1, 1, 3", after.pack_calls - before.pack_calls,
             after.unpack_calls - before.unpack_calls, after.device_kernel_launches - before.device_kernel_launches);
    stf_stream_model model = STF_STREAM_MODEL_B;
    stf_get_stream_model(sf, &model);
    const long long streams = after.device_stream_syncs - before.device_stream_syncs,
                    devices = after.device_syncs - before.device_syncs,
                    events = after.device_event_syncs - before.device_event_syncs;
    // putsignal unpacks from memory it lends, which the end must not give
    // back before the unpack has read it: one more wait in B and C.
    const char *type = "";
    stf_get_type(sf, &type);
    const long long lends = std::strcmp(type, "putsignal") == 0 && model != STF_STREAM_MODEL_A;
    const long long max_streams = (model == STF_STREAM_MODEL_A ? 2 : model == STF_STREAM_MODEL_B ? 1 : 0) + lends;
    ck.check(streams <= max_streams && devices == (model == STF_STREAM_MODEL_A ? 1 : 0) && events <= 1,
             "model %d: %lld stream, %lld device, %lld event waits", static_cast<int>(model), streams, devices,
             events);
  }
  pr.fetch(ck);
  plf.fetch(ck);
  compare_buffers(ck, *d.u, "bcast leafdata", leaf, expect_bcast(d, me), leaf_mask(*d.g, me));
  compare_buffers(ck, *d.u, "bcast rootdata (input)", root, root0, no_mask(root));
}

void device_reduce(Checker &ck, stf_sf sf, const DataGen &d, int me, const Placement &pl, bool with_mem) {
  Buffer root = d.root_buffer(me), leaf = d.leaf_buffer(me);
  const Buffer leaf0 = leaf;
  Placed pr(ck, *d.u, root, pl.roots(me)), plf(ck, *d.u, leaf, pl.leaves(me));
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

// fetch-and-op with root data, and leaf data with leafupdate, placed as pl says.
void device_fetch(Checker &ck, stf_sf sf, const DataGen &d, int me, const Placement &pl) {
  const std::uint64_t update_tag = 77;
  Buffer root = d.root_buffer(me), leaf = d.leaf_buffer(me), update = d.blank_leaf_buffer(me, update_tag);
  const Buffer leaf0 = leaf;
  Buffer want_root = root, want_update = update;
  expect_fetch(d, me, update_tag, &want_root, &want_update);
  {
    Placed pr(ck, *d.u, root, pl.roots(me)), plf(ck, *d.u, leaf, pl.leaves(me)),
        pu(ck, *d.u, update, pl.leaves(me));
    stf_request req = nullptr;
    if (!ck.code(stf_fetch_and_op_begin(sf, d.u->type, pr.data(), plf.data(), pu.data(), d.op, &req), STF_SUCCESS,
                 "fetch_and_op_begin"))
      return;
    if (!ck.code(stf_fetch_and_op_end(sf, &req), STF_SUCCESS, "fetch_and_op_end")) return;
    ck.code(stf_device_synchronize(), STF_SUCCESS, "stf_device_synchronize");
    pr.fetch(ck);
    plf.fetch(ck);
    pu.fetch(ck);
  }
  compare_buffers(ck, *d.u, "fetch_and_op rootdata", root, want_root, root_mask(*d.g, me));
  compare_buffers(ck, *d.u, "fetch_and_op leafupdate", update, want_update, leaf_mask(*d.g, me));
  compare_buffers(ck, *d.u, "fetch_and_op leafdata (input)", leaf, leaf0, no_mask(leaf));
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

// all_types: every builtin integer and floating type the device takes,
// each with every op the device takes (its reduce atomics differ per type
// and op on a GPU), and contiguous(3,MPI_DOUBLE); else three units and
// three ops.
void oracle_suite(Checker &ck, int me, std::uint64_t seed, int nrandom, bool all_types) {
  std::vector<UnitSpec> all = make_units(), arithmetic = make_arithmetic_units();
  std::vector<const UnitSpec *> units;
  for (const UnitSpec &u : all)
    if ((!all_types && (u.name == "MPI_INT" || u.name == "MPI_DOUBLE")) || u.name == "contiguous(3,MPI_DOUBLE)")
      units.push_back(&u);
  if (all_types)
    for (const UnitSpec &u : arithmetic) units.push_back(&u);
  std::vector<MPI_Op> ops = {MPI_REPLACE, MPI_SUM, MPI_MAX};
  if (all_types) ops.insert(ops.end(), {MPI_PROD, MPI_MIN});
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
            const bool with_mem = variant % 2 == 1, prepared = variant++ % 4 == 2;
            const DataGen d{&G, u, op, hash_key(seed, gi, variant)};
            ck.context(graphs[gi].name + (opt ? " pack_opt 0 " : " ") + u->name + " " + op_name(op) + " " +
                       pl.name + (with_mem ? " (_mem)" : prepared ? " (prepared)" : " (detected)"));
            device_bcast(ck, sf, d, me, pl, with_mem, prepared);
            device_reduce(ck, sf, d, me, pl, with_mem);
            if (op != MPI_REPLACE) device_fetch(ck, sf, d, me, pl);
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


void api_tests(Checker &ck) {
  ck.context("device API");
  const char *name = nullptr;
  ck.code(stf_device_get_name(&name), STF_SUCCESS, "stf_device_get_name");
  ck.check(name && (std::strcmp(name, "emu") == 0 || std::strcmp(name, "cuda") == 0), "active device %s, want emu or cuda",
           name ? name : "(null)");
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
  // One leaf adding 5 to a device root: fetch-and-op on device data.
  int *d = nullptr;
  stf_device_malloc(sizeof(int), reinterpret_cast<void **>(&d));
  int leaf = 5, upd = -1, start = 10, now = 0;
  stf_device_memcpy(d, &start, sizeof start);
  LocalGraph g;
  g.nroots = 1;
  g.iremote.push_back(stf_node{0, 0});
  stf_sf one = make_sf(ck, g, MPI_COMM_SELF, nullptr, STF_COPY_VALUES);
  ck.code(stf_fetch_and_op(one, MPI_INT, d, &leaf, &upd, MPI_SUM), STF_SUCCESS, "fetch_and_op on device");
  stf_device_synchronize();
  stf_device_memcpy(&now, d, sizeof now);
  ck.check(upd == 10 && now == 15, "fetch_and_op on a device root: old %d (want 10), root %d (want 15)", upd, now);
  stf_request req = nullptr;
  ck.code(stf_bcast_begin_mem(one, MPI_INT, static_cast<stf_memtype>(7), d, STF_MEMTYPE_HOST, &leaf, MPI_REPLACE, &req),
          STF_ERR_ARG, "bad memtype");
  ck.check(req == nullptr, "a refused begin left a request");
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
  // A GPU's backend when STF_DEVICE=cuda made it active, else emu.
  if (stf_device_get_name(&name) || (std::strcmp(name, "emu") != 0 && std::strcmp(name, "cuda") != 0))
    ck.code(stf_device_select("emu"), 0, "select emu");
  g_cuda = stf_device_get_name(&name) == STF_SUCCESS && std::strcmp(name, "cuda") == 0;
  // nvshmem: the suite's SFs on MPI_COMM_SELF come first, so NVSHMEM
  // starts here over every rank (stf_nvshmem_init).
  const char *type = std::getenv("STF_TYPE");
  if (g_cuda && type && std::strcmp(type, "nvshmem") == 0)
    ck.code(stf_nvshmem_init(MPI_COMM_WORLD), STF_SUCCESS, "stf_nvshmem_init");
  const char *takes_cuda = std::getenv("STF_TEST_MPI_TAKES_CUDA");
  g_first_path = g_cuda && !(takes_cuda && std::strcmp(takes_cuda, "1") == 0) ? 1 : 0;

  // --atomics-only: the duplicate-target reduce alone, up to 200 times (run
  // with STF_TEST_NO_ATOMICS=1 to see it fail).
  bool atomics_only = false, counters = true, all_types = false;
  for (int i = 1; i < argc; ++i) {
    atomics_only |= std::strcmp(argv[i], "--atomics-only") == 0;
    all_types |= std::strcmp(argv[i], "--all-types") == 0;
    counters &= std::strcmp(argv[i], "--no-counters") != 0;
    g_odd_ranks_on_host |= std::strcmp(argv[i], "--odd-ranks-on-host") == 0;
  }
  if (atomics_only) {
    atomics_test(ck, me, size, 200);
  } else {
    api_tests(ck);
    g_counters = counters;
    if (counters) counter_tests(ck, me, size, g_first_path);
    if (!g_cuda) ordering_tests(ck, me, size);
    model_c_end_order(ck, me, size, g_first_path);
    if (g_odd_ranks_on_host) mixed_in_flight(ck, me, size);
    atomics_test(ck, me, size, 10);
    oracle_suite(ck, me, seed, nrandom, all_types);
  }

  int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
