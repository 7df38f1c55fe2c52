#include "core/clock.h"

#include <chrono>

namespace stf {

double seconds_per_tick() {
#if defined(__x86_64__)
  // 5 ms of the counter against steady_clock: enough for 4 digits.
  static const double s = [] {
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    const std::uint64_t c0 = ticks();
    while (clock::now() - t0 < std::chrono::milliseconds(5)) {
    }
    const std::uint64_t c1 = ticks();
    const double secs = std::chrono::duration<double>(clock::now() - t0).count();
    return c1 > c0 ? secs / static_cast<double>(c1 - c0) : 1e-9;
  }();
  return s;
#else
  return 1e-9;
#endif
}

}  // namespace stf
