// putsignal's route to other nodes under -stf_putsignal_net auto
// (net_choice.h). The probe: rank 0 puts a word into the window of the
// first rank of another node and flushes, while that rank reads its own
// window memory without calling MPI. A one-sided layer that moves the data
// itself (RDMA, shared memory) shows the word within microseconds; an
// emulated one only once the target calls MPI, so the target gives up after
// kPatience and then calls MPI, which completes the flush. The answer is
// kept per process: every later SF asks the others (one allreduce) instead
// of probing again. Nothing here allocates before or between collectives.
#include "transport/putsignal/net_choice.h"

#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>

#include "core/error.h"
#include "transport/registry.h"

namespace stf::putsignal {
namespace {
#if !defined(MPICH_VERSION)

constexpr std::uint64_t kProbeWord = 0x5046e7a11c0ffee5ULL;
// Long enough for the origin to be scheduled on a machine with more ranks
// than cores; a one-sided layer that is slower than this is no better than
// point-to-point anyway.
constexpr auto kPatience = std::chrono::milliseconds(50);

// -1: not probed by this process; 0: emulated or unavailable; 1: one-sided.
std::atomic<int> probed{-1};

// Whether a put reached a target outside MPI; false, with the reason, also
// where MPI cannot make a window across the nodes.
int probe(const Comm &comm, const Topology &topo, bool *reached, const char **why) {
  const int origin = topo.node_ranks[topo.node_offset[0]];
  const int target = topo.node_ranks[topo.node_offset[1]];
  std::uint64_t *word = nullptr;
  MPI_Win win = MPI_WIN_NULL;
  const int made = MPI_Win_allocate(sizeof *word, sizeof *word, MPI_INFO_NULL, comm.comm, &word, &win);
  int ok = made == MPI_SUCCESS;
  STF_MPI(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm.comm));
  if (!ok) {
    if (win != MPI_WIN_NULL) MPI_Win_free(&win);
    *reached = false;
    *why = "MPI could not make an RMA window across the nodes";
    return STF_SUCCESS;
  }
  STF_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
  __atomic_store_n(word, 0, __ATOMIC_RELEASE);
  STF_MPI(MPI_Win_sync(win));
  STF_MPI(MPI_Barrier(comm.comm));  // the target's zero comes before the put
  int seen = 0;
  if (comm.rank == origin) {
    STF_MPI(MPI_Put(&kProbeWord, 1, MPI_UINT64_T, target, 0, 1, MPI_UINT64_T, win));
    STF_MPI(MPI_Win_flush(target, win));
  } else if (comm.rank == target) {
    const auto until = std::chrono::steady_clock::now() + kPatience;
    while (!(seen = __atomic_load_n(word, __ATOMIC_ACQUIRE) == kProbeWord) && std::chrono::steady_clock::now() < until)
      sched_yield();  // the origin may need this core
  }
  STF_MPI(MPI_Win_unlock_all(win));
  STF_MPI(MPI_Bcast(&seen, 1, MPI_INT, target, comm.comm));
  STF_MPI(MPI_Win_free(&win));
  *reached = seen;
  *why = seen ? "a put reached a rank of another node while it was outside MPI"
              : "a put to a rank of another node waited for it to call MPI: the RMA is emulated over messages";
  return STF_SUCCESS;
}

// Whether a put reaches a rank of another node outside MPI: the
// process's earlier answer if every rank has one, else the probe's.
int one_sided(const TransportContext &ctx, bool *yes, const char **why) {
  int known = probed.load();
  STF_MPI(MPI_Allreduce(MPI_IN_PLACE, &known, 1, MPI_INT, MPI_MIN, ctx.comm.comm));
  if (known >= 0) {
    *yes = known == 1;
    *why = known ? "one-sided between nodes (probed before)" : "RMA between nodes emulated or unavailable (probed before)";
    return STF_SUCCESS;
  }
  STF_CHECK(probe(ctx.comm, ctx.topology, yes, why));
  probed.store(*yes ? 1 : 0);
  return STF_SUCCESS;
}

#endif
}  // namespace

int choose_net(const TransportContext &ctx, NetChoice *out) {
  const bool one_node = ctx.topology.nnodes == 1;
#if !defined(MPICH_VERSION)
  // Whatever the option says: reading it allocates, which may fail on one
  // rank, and no rank may then miss the others' collectives.
  bool yes = false;
  const char *why = "";
  if (!one_node) STF_CHECK(one_sided(ctx, &yes, &why));
#endif
  try {
    const std::string mode = ctx.opts.text(putsignal_net_option);
#if defined(MPICH_VERSION)  // not probed: its 4.0.2's flush waited for the target (mpi-notes.md)
    const bool yes = false;
    const char *why = mode == "rma" ? "MPICH: begins leave RMA writes to the end"
                                    : "built with MPICH, whose 4.0.2 stalled in RMA between hosts";
#endif
    if (one_node || mode == "p2p")
      *out = {false, false, one_node ? "one node" : "-stf_putsignal_net p2p"};
    else if (mode == "rma")
      *out = {true, !yes, std::string("-stf_putsignal_net rma; ") + why};
    else
      *out = {yes, !yes, std::string("auto: ") + why};
  } catch (...) {
    return exception_error();
  }
  return STF_SUCCESS;
}

}  // namespace stf::putsignal
