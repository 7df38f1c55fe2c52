// Cheap wall-clock ticks for the per-SF timings (stf_stats): the time-stamp
// counter on x86-64 (one instruction, invariant on current processors),
// else steady_clock's nanoseconds. seconds_per_tick() measures the counter
// once, against steady_clock, the first time timings are read. A build with
// -DSTF_TIMINGS=OFF reads no clock (to measure what the reads cost).
#pragma once

#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#else
#include <chrono>
#endif

namespace stf {

inline std::uint64_t ticks() {
#if defined(STF_NO_TIMINGS)
  return 0;
#elif defined(__x86_64__)
  return __rdtsc();
#else
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
#endif
}

double seconds_per_tick();

}  // namespace stf
