// NVSHMEM in the process: runtime.h says what; the reasons are beside
// each piece.
#include "transport/nvshmem/runtime.h"

#include <cuda_runtime.h>
#include <nvshmem_host.h>  // the host API alone, without the device headers

#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/error.h"  // STF_CHECK only

namespace stf {

NvshmemPluginArgs g_args;
bool g_finalized = false;
Pool g_pool;

namespace {

std::string g_broken;  // why NVSHMEM cannot be used here after a failed start

// Stops NVSHMEM when MPI_Finalize frees MPI_COMM_SELF's attributes (first).
int finalize_nvshmem(MPI_Comm, int, void *, void *) {
  if (!g_finalized) nvshmemx_hostlib_finalize();
  g_finalized = true;
  return MPI_SUCCESS;
}

// NVSHMEM would end the process at its first stream call (not return an
// error) where ranks of a node share a GPU in what it calls limited MPG:
// without CUDA MPS, or with MPS and the ranks' active thread percentages
// adding up to more than 100 (unless
// NVSHMEM_IGNORE_CUDA_MPS_ACTIVE_THREAD_PERCENTAGE is set). Compare the
// GPUs' UUIDs across the node and ask the driver whether contexts go
// through MPS; add up CUDA_MPS_ACTIVE_THREAD_PERCENTAGE where every sharing
// rank sets it (unset, NVSHMEM asks the MPS server: start_nvshmem checks
// NVSHMEM's own verdict after its start). Collective over comm on every
// path. "" where NVSHMEM may start, else why not.
std::string limited_mpg(MPI_Comm comm) {
  struct Gpu {
    unsigned char uuid[16];
    int known, mps;
    double percent;  // -1: unset
  } mine{};
  int dev = 0;
  cudaDeviceProp prop{};
  mine.known = cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&prop, dev) == cudaSuccess;
  if (mine.known) std::memcpy(mine.uuid, &prop.uuid, sizeof mine.uuid);
  if (!mine.known || cudaDeviceGetAttribute(&mine.mps, cudaDevAttrMpsEnabled, dev) != cudaSuccess)
    mine.mps = 0;  // a driver that does not know the attribute: no MPS
  cudaGetLastError();
  const char *pct = std::getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
  mine.percent = pct && *pct ? std::strtod(pct, nullptr) : -1;
  const char *ignore = std::getenv("NVSHMEM_IGNORE_CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
  const bool any_percent = ignore && *ignore && std::strchr("1yYtT", *ignore);
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int me = 0, size = 1;
  MPI_Comm_rank(node, &me);
  MPI_Comm_size(node, &size);
  std::vector<Gpu> all(size);
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, node);
  MPI_Comm_free(&node);
  if (!mine.known) return "cannot query the CUDA device";
  int sharing = 0;
  double percent = 0;
  bool mps = true, all_set = true;
  for (const Gpu &g : all)
    if (g.known && std::memcmp(g.uuid, mine.uuid, sizeof mine.uuid) == 0) {
      sharing++;
      percent += g.percent;
      mps &= g.mps != 0;
      all_set &= g.percent >= 0;
    }
  const std::string gpu = std::to_string(sharing) + " ranks of this node share GPU " + std::to_string(dev) + " (" +
                          prop.name + ")";
  if (sharing > 1 && !mps)
    return gpu + " and CUDA MPS is not active: NVSHMEM would end the process (start MPS with nvidia-cuda-mps-control "
                 "-d, or give each rank its own GPU)";
  if (sharing > 1 && all_set && percent > 100 && !any_percent)
    return gpu + " under MPS with active thread percentages adding up to " + std::to_string(percent) +
           " (over 100): NVSHMEM would end the process (set CUDA_MPS_ACTIVE_THREAD_PERCENTAGE to at most " +
           std::to_string(100 / sharing) + ", or NVSHMEM_IGNORE_CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=1)";
  return "";
}

// Why this process cannot start NVSHMEM now ("" if it can).
std::string cannot_start() {
  if (g_finalized) return "NVSHMEM was stopped (MPI is finalizing)";
  if (!g_broken.empty()) return g_broken;
  if (g_pool.ready() || nvshmemx_init_status() != NVSHMEM_STATUS_NOT_INITIALIZED)
    return "NVSHMEM is already started in this process (once per process; by starforest or by the application)";
  return "";
}

}  // namespace

int unsupported(const std::string &why) {
  return g_args.set_error(STF_ERR_UNSUPPORTED, "-stf_type nvshmem: %s", why.c_str());
}

// Agreed failure: every rank returns the lowest failing rank's reason
// (kept in *agreed where asked).
int agree(MPI_Comm comm, const std::string &reason, std::string *agreed) {
  std::string theirs;
  const int rank = lowest_failure(comm, reason, &theirs);
  if (rank < 0) return STF_SUCCESS;
  const std::string text = "rank " + std::to_string(rank) + ": " + theirs;
  if (agreed) *agreed = text;
  return unsupported(text);
}

std::string no_gpu() {
  int gpus = 0;
  const cudaError_t e = cudaGetDeviceCount(&gpus);
  if (e == cudaSuccess && gpus > 0) return "";
  cudaGetLastError();
  return std::string("no CUDA device (cudaGetDeviceCount: ") + (e ? cudaGetErrorString(e) : "0 devices") + ")";
}

// NVSHMEM up over every rank of comm (collective over comm, every call of
// which every rank makes), then the pool. A start that fails after NVSHMEM
// has begun leaves it unusable in this process (g_broken says why).
int start_nvshmem(MPI_Comm comm, const NvshmemPluginArgs &args) {
  STF_CHECK(agree(comm, cannot_start()));
  STF_CHECK(agree(comm, limited_mpg(comm)));
  static MPI_Comm boot = MPI_COMM_NULL;  // NVSHMEM's bootstrap may keep the pointer
  MPI_Comm_dup(comm, &boot);
  nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
  std::string why;
  // Not nvshmemx_init_attr: it exits the process when NVSHMEM fails. And
  // NVSHMEM may return 0 with a start it could not finish, or in limited
  // MPG mode: its status says which.
  if (nvshmemx_set_attr_mpi_comm_args(&boot, &attr) != 0 ||
      nvshmemx_hostlib_init_attr(NVSHMEMX_INIT_WITH_MPI_COMM, &attr) != 0) {
    why = "the NVSHMEM runtime could not be initialised (NVSHMEM_DEBUG=INFO says why)";
  } else {
    int key = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalize_nvshmem, &key, nullptr);
    MPI_Comm_set_attr(MPI_COMM_SELF, key, nullptr);
    const int status = nvshmemx_init_status();
    if (status == NVSHMEM_STATUS_LIMITED_MPG)
      why = "NVSHMEM started in its limited multi-process-per-GPU mode, where it ends the process at its first "
            "stream call (the ranks sharing a GPU need CUDA MPS with active thread percentages adding up to at "
            "most 100)";
    else if (status != NVSHMEM_STATUS_IS_INITIALIZED && status != NVSHMEM_STATUS_FULL_MPG)
      why = "the NVSHMEM runtime did not finish its start (status " + std::to_string(status) +
            "; NVSHMEM_DEBUG=INFO says why)";
  }
  if (const int rc = agree(comm, why, &g_broken)) {
    g_broken = "NVSHMEM cannot be used in this process after a failed start (" + g_broken + ")";
    return rc;  // boot stays: NVSHMEM may have kept it
  }
  char *base = static_cast<char *>(nvshmem_malloc(args.pool_bytes));  // collective over all PEs: comm
  if (base && (cudaMemset(base, 0, args.pool_bytes) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess)) {
    cudaGetLastError();
    base = nullptr;
  }
  if (const int rc = agree(comm, base ? "" : "nvshmem_malloc of the pool (" + std::to_string(args.pool_bytes >> 20) +
                                                 " MiB, -stf_nvshmem_pool_mib) failed")) {
    g_broken = "NVSHMEM started, but its pool could not be allocated (-stf_nvshmem_pool_mib " +
               std::to_string(args.pool_bytes >> 20) + "): nvshmem cannot be used in this process";
    return rc;
  }
  g_pool.take(base, args.pool_bytes);
  return STF_SUCCESS;
}

// NVSHMEM as the SF on comm needs it: started by this SF if nobody did and
// comm is all of MPI_COMM_WORLD; then every rank of comm must be a PE.
int ensure_nvshmem(MPI_Comm comm, const NvshmemPluginArgs &args) {
  int whole = MPI_UNEQUAL;
  MPI_Comm_compare(comm, MPI_COMM_WORLD, &whole);
  const int started = g_pool.ready() ? 1 : 0;
  int counts[2] = {started, 1 - started}, sums[2] = {0, 0};  // ranks started, ranks not
  MPI_Allreduce(counts, sums, 2, MPI_INT, MPI_SUM, comm);
  if (!sums[0] && (whole == MPI_IDENT || whole == MPI_CONGRUENT)) return start_nvshmem(comm, args);
  if (!sums[1]) return STF_SUCCESS;
  return agree(comm, started ? ""
                             : "this rank is not an NVSHMEM PE: NVSHMEM starts with the first nvshmem SF over all of "
                               "MPI_COMM_WORLD, or with stf_nvshmem_init(comm) over every rank that will use it");
}

}  // namespace stf
