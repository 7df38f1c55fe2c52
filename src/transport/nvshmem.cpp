// -stf_type nvshmem: the put-with-signal protocol on GPU memory through
// NVSHMEM. The transport itself is a plug-in (nvshmem/nvshmem_putsignal.cu,
// built as libstarforest_nvshmem.so where CMake finds NVSHMEM) that this
// file loads on first use. Why a plug-in: NVSHMEM usually comes from a pip
// wheel in some site-packages folder; linked into libstarforest it would
// have to be on every user's loader path, GPU or not. Loaded on demand, a
// missing plug-in or NVSHMEM is just STF_ERR_UNSUPPORTED for the SFs that
// asked for it. Builds without NVSHMEM keep the row (the name is known
// everywhere) and answer STF_ERR_UNSUPPORTED.
#include <cstdlib>
#include <string>

#include "core/error.h"
#include "core/options.h"
#include "transport/registry.h"

#ifdef STF_HAVE_NVSHMEM
#include <dlfcn.h>

#include "transport/nvshmem/plugin.h"
#endif

namespace stf {

const OptionSpec nvshmem_slots_option = {
    "stf_nvshmem_slots", "STF_NVSHMEM_SLOTS", "1|2|4|8|16|32|64",
    "nvshmem transport: regions per peer and direction, i.e. operations of a direction in flight (default 4)", "4",
    nullptr, 1, 64};
const OptionSpec nvshmem_unit_bytes_option = {
    "stf_nvshmem_unit_bytes", "STF_NVSHMEM_UNIT_BYTES", "1..65536",
    "nvshmem transport: bytes per unit a region holds; larger units are STF_ERR_UNSUPPORTED (default 64)", "64",
    nullptr, 1, 65536};
const OptionSpec nvshmem_pool_option = {
    "stf_nvshmem_pool_mib", "STF_NVSHMEM_POOL_MIB", "1..65536",
    "nvshmem transport: MiB of symmetric GPU memory taken when NVSHMEM starts, shared by every nvshmem SF's "
    "regions (default 256)", "256", nullptr, 1, 65536};

#ifndef STF_HAVE_NVSHMEM

int make_nvshmem_transport(const TransportContext &, std::unique_ptr<Transport> *) {
  return set_error(STF_ERR_UNSUPPORTED,
                   "-stf_type nvshmem: this build has no NVSHMEM backend (configure with -DSTF_NVSHMEM=ON beside a "
                   "CUDA toolkit, NVSHMEM_HOME naming NVSHMEM's folder, or after scripts/install-deps.sh)");
}

}  // namespace stf

extern "C" int stf_nvshmem_init(MPI_Comm) {
  return stf::set_error(STF_ERR_UNSUPPORTED, "stf_nvshmem_init: this build has no NVSHMEM backend");
}

#else

namespace {

struct Plugin {
  NvshmemMake make = nullptr;
  NvshmemStart start = nullptr;
};

// STF_NVSHMEM_PLUGIN (a path), else beside libstarforest, else the loader's path.
const Plugin *load_plugin(std::string *why) {
  static Plugin entry;
  if (entry.make) return &entry;
  const char *name = "libstarforest_nvshmem.so";
  std::string path;
  if (const char *env = std::getenv("STF_NVSHMEM_PLUGIN")) {
    path = env;
  } else {
    Dl_info self{};
    if (dladdr(reinterpret_cast<void *>(&load_plugin), &self) && self.dli_fname) {
      path = self.dli_fname;
      path = path.substr(0, path.find_last_of('/') + 1) + name;
    }
  }
  void *lib = path.empty() ? nullptr : dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib && !std::getenv("STF_NVSHMEM_PLUGIN")) lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    *why = std::string("cannot load the NVSHMEM plug-in: ") + (e ? e : name);
    return nullptr;
  }
  using Abi = int (*)();
  auto abi = reinterpret_cast<Abi>(dlsym(lib, "stf_nvshmem_plugin_abi"));
  Plugin found{reinterpret_cast<NvshmemMake>(dlsym(lib, kNvshmemPluginEntry)),
               reinterpret_cast<NvshmemStart>(dlsym(lib, kNvshmemStartEntry))};
  if (!abi || !found.make || !found.start || abi() != kNvshmemPluginAbi) {
    *why = "the NVSHMEM plug-in " + path + " is not from this build of starforest";
    return nullptr;
  }
  entry = found;
  return &entry;
}

// Every rank loads the plug-in or all fail with the lowest failing rank's reason.
int load_agreed(MPI_Comm comm, const char *what, int earlier, const Plugin **out) {
  std::string why, theirs;
  const Plugin *p = earlier ? nullptr : load_plugin(&why);
  if (earlier) why = "failed before the transport's set-up (its message says why)";
  if (const int rank = lowest_failure(comm, p ? "" : why, &theirs); rank >= 0)
    return earlier ? earlier : set_error(STF_ERR_UNSUPPORTED, "%s: rank %d: %s", what, rank, theirs.c_str());
  *out = p;
  return STF_SUCCESS;
}

NvshmemPluginArgs plugin_args(long slots, long unit_bytes, long pool_mib) {
  NvshmemPluginArgs args;
  args.set_error = set_error;
  args.slots = static_cast<int>(slots);
  args.unit_bytes = static_cast<std::size_t>(unit_bytes);
  args.pool_bytes = static_cast<std::size_t>(pool_mib) << 20;
  return args;
}

}  // namespace

int make_nvshmem_transport(const TransportContext &ctx, std::unique_ptr<Transport> *out) {
  const Plugin *p = nullptr;
  STF_CHECK(load_agreed(ctx.comm.comm, "-stf_type nvshmem", ctx.earlier, &p));
  return p->make(ctx,
                 plugin_args(ctx.opts.number(nvshmem_slots_option), ctx.opts.number(nvshmem_unit_bytes_option),
                             ctx.opts.number(nvshmem_pool_option)),
                 out);
}

}  // namespace stf

extern "C" int stf_nvshmem_init(MPI_Comm comm) try {
  using namespace stf;
  int inter = 0;
  if (comm == MPI_COMM_NULL) return set_error(STF_ERR_ARG, "stf_nvshmem_init: MPI_COMM_NULL");
  if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
    return set_error(STF_ERR_ARG, "stf_nvshmem_init: an intercommunicator (give an intracommunicator)");
  const Plugin *p = nullptr;
  STF_CHECK(load_agreed(comm, "stf_nvshmem_init", STF_SUCCESS, &p));
  // The pool is symmetric: every rank must ask for the same size.
  long pool = 0;
  const int bad = parse_number(nvshmem_pool_option, process_setting(nvshmem_pool_option), &pool);
  long mine[2] = {bad ? -1 : pool, bad ? 1 : -pool}, all[2] = {0, 0};  // min and -max
  MPI_Allreduce(mine, all, 2, MPI_LONG, MPI_MIN, comm);
  if (bad) return bad;
  if (all[0] < 0 || all[0] != -all[1])
    return set_error(STF_ERR_OPTION, "stf_nvshmem_init: -stf_nvshmem_pool_mib differs between ranks (%ld here)", pool);
  NvshmemPluginArgs args;  // slots and unit bytes: not used by the start
  args.set_error = set_error;
  args.pool_bytes = static_cast<std::size_t>(pool) << 20;
  return p->start(comm, args);
}
STF_API_CATCH

#endif
