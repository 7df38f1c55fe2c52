#include "model/roofline.h"

#include <algorithm>
#include <cmath>

namespace stf::model {

Roofline roofline_of(const Postal &p) {
  Roofline r;
  r.peak = p.peak_bandwidth();
  r.latency = p.segments.empty() ? 0 : p.time(0);
  return r;
}

RooflinePoint roofline_point(const Roofline &r, double messages_per_sync, double bytes_per_message, double seconds) {
  RooflinePoint pt;
  const double bytes = messages_per_sync * bytes_per_message;
  const double diagonal = r.latency > 0 ? bytes / r.latency : INFINITY;
  const double peak = r.peak > 0 ? r.peak : INFINITY;
  pt.bound = std::min(peak, diagonal);
  pt.regime = diagonal < peak ? "latency" : "bandwidth";
  if (seconds > 0) {
    pt.achieved = bytes / seconds;
    pt.fraction = std::isfinite(pt.bound) && pt.bound > 0 ? pt.achieved / pt.bound : 0;
  }
  return pt;
}

}  // namespace stf::model
