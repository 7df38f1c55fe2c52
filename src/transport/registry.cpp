#include "transport/registry.h"

#include <string>

#include "core/error.h"

namespace stf {
namespace {

const char *const collective_help =
    "one nonblocking collective on the user's arrays for SFs with that pattern, recognised at set-up (other SFs "
    "and operations: basic)";

#ifdef STF_HAVE_NVSHMEM
const char *const nvshmem_help = "putsignal's protocol on device data through NVSHMEM (GPUs; a plug-in)";
#else
const char *const nvshmem_help = "putsignal's protocol on device data through NVSHMEM (not in this build)";
#endif

}  // namespace

const std::vector<TransportKind> &transport_kinds() {
  static const std::vector<TransportKind> kinds = {
      {"basic", "point-to-point, one message per peer and direction", {}, make_basic_transport, {}, false},
      {"neighbor", "MPI-3 neighbourhood collectives on distributed-graph communicators",
       {true, false}, make_neighbor_transport, {}},
      {"window", "MPI-3 one-sided puts into windows (see -stf_window_sync)", {true, false}, make_window_transport,
       {&window_sync_option}},
      {"collective", "the collective that fits (allgather, alltoall, gather), else basic", {false, false},
       make_collective_transport, {}},
      {"allgatherv", collective_help, {false, false}, make_collective_transport, {}},
      {"allgather", collective_help, {false, false}, make_collective_transport, {}},
      {"gatherv", collective_help, {false, false}, make_collective_transport, {}},
      {"gather", collective_help, {false, false}, make_collective_transport, {}},
      {"alltoall", collective_help, {false, false}, make_collective_transport, {}},
      {"putsignal", "one-sided put with signal: a shared-memory heap inside a node, MPI RMA between nodes "
       "(see -stf_putsignal_net)",
       {true, false, false}, make_putsignal_transport,
       {&putsignal_slots_option, &putsignal_unit_bytes_option, &putsignal_timeout_option, &putsignal_net_option}},
      {"ipc", "putsignal's protocol in a node's device memory (CUDA IPC, emu), signals on the library stream",
       {true, false, false}, make_ipc_transport, {&ipc_slots_option, &ipc_unit_bytes_option}},
      {"nvshmem", nvshmem_help, {true, false, false}, make_nvshmem_transport,
       {&nvshmem_slots_option, &nvshmem_unit_bytes_option, &nvshmem_pool_option}},
  };
  return kinds;
}

const TransportKind *find_transport(const std::string &name) {
  for (const TransportKind &k : transport_kinds())
    if (name == k.name) return &k;
  return nullptr;
}

int prepare_agreed(const TransportContext &ctx, const std::function<void()> &prepare, int failed) {
  int rc = ctx.earlier ? ctx.earlier : failed;
  if (!rc) try {
      prepare();
    } catch (...) {
      rc = exception_error();
    }
  return ctx.opts.validate ? agree(ctx.comm.comm, rc) : rc;
}

#if defined(STF_SMPI)
// What SimGrid 3.32's SMPI lacks for a transport (docs/design/simulation.md),
// or nullptr.
const char *smpi_lacks(const std::string &name) {
  if (name == "neighbor") return "which has no distributed-graph communicators";
  if (name == "putsignal") return "which has no MPI_Win_sync";
  if (name == "window") return "whose MPI_Put fails in our oracle suite";
  return nullptr;
}
#endif

bool transport_runs_here(const std::string &name) {
#if defined(STF_SMPI)
  return smpi_lacks(name) == nullptr;
#else
  (void)name;
  return true;
#endif
}

int create_transport(const TransportContext &ctx, const TransportKind &kind, std::unique_ptr<Transport> *out) {
#if defined(STF_SMPI)
  // The same answer on every rank, before any collective.
  if (const char *why = smpi_lacks(kind.name))
    return set_error(STF_ERR_UNSUPPORTED, "%s transport: not under SimGrid's SMPI, %s", kind.name, why);
#endif
  // The fallback first: nothing may fail once the transport is made (its
  // destructor may be collective). A rank where it fails still takes part
  // in the transport's first agreement (ctx.earlier).
  std::unique_ptr<Transport> wrapper;
  TransportContext with = ctx;
  if (!(kind.can.messages && kind.can.legs_from_end && kind.can.fetch)) try {
      std::unique_ptr<Transport> basic;
      with.earlier = make_basic_transport(ctx, &basic);
      if (!with.earlier) wrapper = make_fallback(kind.can, std::move(basic));
    } catch (...) {
      with.earlier = exception_error();
    }
  std::unique_ptr<Transport> t;
  STF_CHECK(kind.create(with, &t));
  if (with.earlier) return with.earlier;  // a kind whose set-up is not collective made it all the same
  if (!wrapper) {
    *out = std::move(t);
    return STF_SUCCESS;
  }
  adopt_primary(wrapper.get(), std::move(t));
  *out = std::move(wrapper);
  return STF_SUCCESS;
}

}  // namespace stf
