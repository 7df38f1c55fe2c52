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

#ifndef STF_HAVE_NVSHMEM

int make_nvshmem_transport(const TransportContext &, std::unique_ptr<Transport> *) {
  return set_error(STF_ERR_UNSUPPORTED,
                   "-stf_type nvshmem: this build has no NVSHMEM backend (configure with -DSTF_NVSHMEM=ON beside a "
                   "CUDA toolkit, NVSHMEM_HOME naming NVSHMEM's folder, or after scripts/install-deps.sh)");
}

#else

namespace {

// STF_NVSHMEM_PLUGIN (a path), else beside libstarforest, else the loader's path.
NvshmemMake load_plugin(std::string *why) {
  static NvshmemMake entry = nullptr;
  if (entry) return entry;
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
  auto make = reinterpret_cast<NvshmemMake>(dlsym(lib, kNvshmemPluginEntry));
  if (!abi || !make || abi() != kNvshmemPluginAbi) {
    *why = "the NVSHMEM plug-in " + path + " is not from this build of starforest";
    return nullptr;
  }
  return entry = make;
}

}  // namespace

int make_nvshmem_transport(const TransportContext &ctx, std::unique_ptr<Transport> *out) {
  std::string why, theirs;
  NvshmemMake make = ctx.earlier ? nullptr : load_plugin(&why);
  if (ctx.earlier) why = "failed before the transport's set-up (its message says why)";
  if (!make && why.empty()) why = "cannot load the NVSHMEM plug-in";
  if (const int rank = lowest_failure(ctx.comm.comm, make ? "" : why, &theirs); rank >= 0)
    return ctx.earlier ? ctx.earlier
                       : set_error(STF_ERR_UNSUPPORTED, "-stf_type nvshmem: rank %d: %s", rank, theirs.c_str());
  NvshmemPluginArgs args;
  args.set_error = set_error;
  args.slots = static_cast<int>(ctx.opts.number(nvshmem_slots_option));
  args.unit_bytes = static_cast<std::size_t>(ctx.opts.number(nvshmem_unit_bytes_option));
  return make(ctx, args, out);
}

#endif

}  // namespace stf
