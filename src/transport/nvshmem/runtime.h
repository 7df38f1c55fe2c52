// NVSHMEM in the process, for the nvshmem transport's plug-in
// (runtime.cu): its start, once per process over every rank that will use
// it, the checks before it, and the symmetric pool each SF takes its block
// from. nvshmem_putsignal.cu is the transport on top.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <string>

#include "transport/nvshmem/plugin.h"
#include "transport/slot_ring.h"

namespace stf {

extern NvshmemPluginArgs g_args;  // from libstarforest, for errors
extern bool g_finalized;          // NVSHMEM stopped (MPI_Finalize)

// STF_ERR_UNSUPPORTED with "-stf_type nvshmem: why".
int unsupported(const std::string &why);
// Agreed failure: every rank returns the lowest failing rank's reason
// (kept in *agreed where asked).
int agree(MPI_Comm comm, const std::string &reason, std::string *agreed = nullptr);

// The symmetric pool: one nvshmem_malloc at start (collective over all PEs),
// from which each SF's transport takes its block locally, so a block's
// offset differs from rank to rank: ranks tell each other where theirs
// are, and my base + a peer's offset names the peer's copy (the base is
// symmetric). So SFs on any communicator of PEs are set up and destroyed
// in any order, without a collective over all PEs.
class Pool {
 public:
  bool ready() const { return base_ != nullptr; }
  std::size_t bytes() const { return bytes_; }
  char *base() const { return base_; }
  void take(char *base, std::size_t bytes) {
    base_ = base;
    bytes_ = bytes;
    free_[0] = bytes;
  }
  // First fit, kLine-aligned; SIZE_MAX when nothing fits.
  std::size_t allocate(std::size_t n) {
    n = SlotRing::round_up(std::max<std::size_t>(n, 1));
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second < n) continue;
      const std::size_t at = it->first, left = it->second - n;
      free_.erase(it);
      if (left) free_[at + n] = left;
      return at;
    }
    return SIZE_MAX;
  }
  void release(std::size_t at, std::size_t n) {
    n = SlotRing::round_up(std::max<std::size_t>(n, 1));
    auto next = free_.emplace(at, n).first;
    if (auto after = std::next(next); after != free_.end() && at + n == after->first) {
      next->second += after->second;
      free_.erase(after);
    }
    if (next != free_.begin())
      if (auto before = std::prev(next); before->first + before->second == at) {
        before->second += next->second;
        free_.erase(next);
      }
  }

 private:
  char *base_ = nullptr;
  std::size_t bytes_ = 0;
  std::map<std::size_t, std::size_t> free_;  // offset -> bytes
};
extern Pool g_pool;

// "" where this rank has a GPU, else why not.
std::string no_gpu();
// NVSHMEM up over every rank of comm (collective over comm), then the pool.
int start_nvshmem(MPI_Comm comm, const NvshmemPluginArgs &args);
// NVSHMEM as the SF on comm needs it: started by this SF if nobody did and
// comm is all of MPI_COMM_WORLD; then every rank of comm must be a PE.
int ensure_nvshmem(MPI_Comm comm, const NvshmemPluginArgs &args);

}  // namespace stf
