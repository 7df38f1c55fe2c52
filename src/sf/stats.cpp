// stf_get_stats / stf_reset_stats: the counters the ops layer keeps per SF,
// copied up to the size the caller's struct has (the ABI rule in the header).
#include <algorithm>
#include <cstdio>
#include <cstddef>
#include <cstring>

#include "core/clock.h"
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
  const double tick = stf::seconds_per_tick();
  for (int k = 0; k < STF_OP_KINDS; k++) {
    mine.begin_seconds[k] = tick * sf->engine.timing[k].begin;
    mine.end_seconds[k] = tick * sf->engine.timing[k].end;
    mine.wait_seconds[k] = tick * sf->engine.timing[k].wait;
  }
  if (sf->strategy) sf->strategy->add_stats(&mine);
  mine.size = std::min(stats->size, sizeof(stf_stats));
  std::memcpy(stats, &mine, mine.size);
  return STF_SUCCESS;
} STF_API_CATCH

extern "C" int stf_reset_stats(stf_sf sf) try {
  STF_CHECK(stf::check_sf(sf));
  sf->engine.stats = stf_stats{};
  for (auto &t : sf->engine.timing) t = stf::Engine::Timing();
  if (sf->strategy) sf->strategy->reset_stats();
  return STF_SUCCESS;
} STF_API_CATCH

namespace stf {

// -stf_log_view: per operation kind, the time per operation in begin, end
// and waiting, as min/avg/max over ranks. Collective (called by stf_destroy).
void log_view(stf_sf sf) {
  stf_stats s = stf_stats_init();
  if (stf_get_stats(sf, &s) != STF_SUCCESS) return;
  const char *names[STF_OP_KINDS] = {"bcast", "reduce", "fetch_and_op", "gather", "scatter"};
  // Per kind: operations, then begin, end and wait microseconds per operation.
  double mine[STF_OP_KINDS][4], lo[STF_OP_KINDS][4], hi[STF_OP_KINDS][4], sum[STF_OP_KINDS][4];
  for (int k = 0; k < STF_OP_KINDS; k++) {
    const double n = static_cast<double>(s.operations[k]), per = n > 0 ? 1e6 / n : 0;
    mine[k][0] = n;
    mine[k][1] = per * s.begin_seconds[k];
    mine[k][2] = per * s.end_seconds[k];
    mine[k][3] = per * s.wait_seconds[k];
  }
  const int n = STF_OP_KINDS * 4;
  if (MPI_Reduce(mine, lo, n, MPI_DOUBLE, MPI_MIN, 0, sf->comm) || MPI_Reduce(mine, hi, n, MPI_DOUBLE, MPI_MAX, 0, sf->comm) ||
      MPI_Reduce(mine, sum, n, MPI_DOUBLE, MPI_SUM, 0, sf->comm) || sf->rank != 0)
    return;
  std::printf("starforest log_view: SF on %d rank(s), transport %s; microseconds per operation, min/avg/max over ranks\n"
              "%-13s %10s  %33s  %33s  %33s\n",
              sf->size, sf->opts.type.c_str(), "operation", "count", "begin", "end (and stf_test)", "waiting");
  for (int k = 0; k < STF_OP_KINDS; k++) {
    if (hi[k][0] == 0) continue;
    std::printf("%-13s %10.0f", names[k], hi[k][0]);
    for (int f = 1; f < 4; f++)
      std::printf("  %9.2f / %9.2f / %9.2f", lo[k][f], sum[k][f] / sf->size, hi[k][f]);  // up to 1e6 us aligned
    std::printf("\n");
  }
  std::fflush(stdout);
}

}  // namespace stf
