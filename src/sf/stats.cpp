// stf_get_stats / stf_reset_stats: the counters the ops layer keeps per SF.
#include "core/error.h"
#include "sf/sf.h"

extern "C" int stf_get_stats(stf_sf sf, stf_stats *stats) {
  STF_CHECK(stf::check_sf(sf));
  if (!stats) return stf::set_error(STF_ERR_NULL, "stf_get_stats: stats is NULL");
  *stats = sf->engine.stats;
  return STF_SUCCESS;
}

extern "C" int stf_reset_stats(stf_sf sf) {
  STF_CHECK(stf::check_sf(sf));
  sf->engine.stats = stf_stats{};
  return STF_SUCCESS;
}
