// stf_get_stats / stf_reset_stats: the counters the ops layer keeps per SF,
// copied up to the size the caller's struct has (the ABI rule in the header).
#include <algorithm>
#include <cstddef>
#include <cstring>

#include "core/error.h"
#include "sf/sf.h"

namespace {
// The struct of version 0.1: the size field and 15 counters. Never shrinks.
constexpr std::size_t kFirstSize = offsetof(stf_stats, device_buffers_to_mpi) + sizeof(long long);
}  // namespace

extern "C" int stf_get_stats(stf_sf sf, stf_stats *stats) try {
  STF_CHECK(stf::check_sf(sf));
  if (!stats) return stf::set_error(STF_ERR_NULL, "stf_get_stats: stats is NULL");
  if (stats->size < kFirstSize)
    return stf::set_error(STF_ERR_ARG,
                          "stf_get_stats: stats->size is %zu, at least %zu expected (set it to sizeof(stf_stats), "
                          "e.g. stf_stats s = stf_stats_init())",
                          stats->size, kFirstSize);
  stf_stats mine = sf->engine.stats;
  if (sf->strategy) sf->strategy->add_stats(&mine);
  mine.size = std::min(stats->size, sizeof(stf_stats));
  std::memcpy(stats, &mine, mine.size);
  return STF_SUCCESS;
} STF_API_CATCH

extern "C" int stf_reset_stats(stf_sf sf) try {
  STF_CHECK(stf::check_sf(sf));
  sf->engine.stats = stf_stats{};
  if (sf->strategy) sf->strategy->reset_stats();
  return STF_SUCCESS;
} STF_API_CATCH
