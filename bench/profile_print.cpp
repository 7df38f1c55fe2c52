#include "profile_print.h"

#include <cmath>
#include <cstdio>

namespace bench {

void print_postal(const char *name, const stf::model::Postal &p) {
  std::printf("%s: %s, gap %.3f us, busy step %.3f us\n", name, p.measured ? "measured" : "built-in (not measured)",
              1e6 * p.gap, 1e6 * p.busy_step);
  for (const stf::model::PostalSegment &s : p.segments)
    std::printf("  from %9.0f B: alpha %8.3f us, 1/beta %8.3f GB/s\n", s.from_bytes, 1e6 * s.alpha,
                s.beta > 0 ? 1e-9 / s.beta : INFINITY);
}

void print_maxrate(const stf::model::MaxRate &mr) {
  std::printf("max-rate: %s, alpha %.3f us, R_N %.3f GB/s, R_b %.3f GB/s (up to %d pairs)\n",
              mr.measured ? "measured" : "built-in", 1e6 * mr.alpha, 1e-9 * mr.node_rate, 1e-9 * mr.pair_rate,
              mr.pairs_measured);
  for (const stf::model::NodeRateSegment &seg : mr.by_size)
    std::printf("  R_N from %.0f bytes: %.3f GB/s\n", seg.from_bytes, 1e-9 * seg.node_rate);
}

}  // namespace bench
