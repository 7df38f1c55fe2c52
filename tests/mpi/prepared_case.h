// Prepared operations (stf_bcast_init, stf_reduce_init, stf_start,
// stf_request_free) checked against the oracle, for the in-flight tests,
// which run under every transport and strategy.
#pragma once

#include <cstdint>
#include <string>

#include "check.h"
#include "oracle.h"

namespace stft {

// A prepared bcast and reduce started four times on the same arrays with new
// values each time, in flight together, ended by their ends or by stf_test,
// with a begun bcast between; every misuse refused without harm to the
// requests. other: another SF on the same graph. where prefixes the contexts.
void prepared_operations(Checker &ck, stf_sf sf, stf_sf other, const GlobalGraph &g, int me, const UnitSpec &ui,
                         std::uint64_t key, const std::string &where);

}  // namespace stft
