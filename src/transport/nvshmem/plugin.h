// Between libstarforest and its NVSHMEM plug-in (libstarforest_nvshmem.so,
// nvshmem_putsignal.cu), which libstarforest loads with dlopen when an SF
// chooses -stf_type nvshmem, so that the library itself never depends on
// NVSHMEM or its location. Both sides are built from one source tree with
// one compiler: the plug-in shares the transport headers (their inline
// parts only: it is linked with --no-undefined and needs nothing of
// libstarforest) and gets what it needs of the library through
// NvshmemPluginArgs.
#pragma once

#include <mpi.h>

#include <cstdio>
#include <memory>
#include <string>

#include "transport/transport.h"

namespace stf {

// Bumped whenever this header or transport.h changes what crosses the line.
constexpr int kNvshmemPluginAbi = 2;
constexpr const char *kNvshmemPluginEntry = "stf_nvshmem_make_transport";
constexpr const char *kNvshmemStartEntry = "stf_nvshmem_start";

struct NvshmemPluginArgs {
  int abi = kNvshmemPluginAbi;
  int (*set_error)(int code, const char *fmt, ...) = nullptr;  // core/error.h's
  int slots = 4;            // -stf_nvshmem_slots
  std::size_t unit_bytes = 64;  // -stf_nvshmem_unit_bytes
  std::size_t pool_bytes = std::size_t(256) << 20;  // -stf_nvshmem_pool_mib: the symmetric pool, taken at start
};

// The entry point: collective over ctx.comm; STF_ERR_UNSUPPORTED (agreed by
// every rank) where this machine cannot run the transport.
using NvshmemMake = int (*)(const TransportContext &ctx, const NvshmemPluginArgs &args,
                            std::unique_ptr<Transport> *out);
// stf_nvshmem_init: NVSHMEM up over comm (collective over it), once per
// process; agreed over comm.
using NvshmemStart = int (*)(MPI_Comm comm, const NvshmemPluginArgs &args);

// Creation is collective, and a rank may fail alone (no GPU, no plug-in):
// every rank learns whether all succeeded and, if not, the lowest failing
// rank's reason ("" for ok). Returns the lowest failing rank, or -1.
inline int lowest_failure(MPI_Comm comm, const std::string &reason, std::string *theirs) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int mine = reason.empty() ? size : rank, lowest = size;
  MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, comm);
  if (lowest == size) return -1;
  char text[512] = {};
  if (rank == lowest) std::snprintf(text, sizeof text, "%s", reason.c_str());
  MPI_Bcast(text, sizeof text, MPI_CHAR, lowest, comm);
  *theirs = text;
  return lowest;
}

}  // namespace stf
