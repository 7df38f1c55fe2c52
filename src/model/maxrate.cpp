#include "model/maxrate.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace stf::model {

double MaxRate::transfer(double node_bytes, double rank_bytes) const {
  const double by_node = node_rate > 0 ? node_bytes / node_rate : 0;
  const double by_rank = pair_rate > 0 ? rank_bytes / pair_rate : 0;
  return std::max(by_node, by_rank);
}

double MaxRate::node_rate_for(double bytes) const {
  if (by_size.empty()) return node_rate;
  size_t i = 0;
  while (i + 1 < by_size.size() && by_size[i + 1].from_bytes <= bytes) ++i;
  return by_size[i].node_rate;
}

double MaxRate::time(double active, double bytes) const { return alpha + transfer(active * bytes, bytes); }

MaxRate fit_maxrate(const std::vector<MaxRateSample> &samples, double alpha) {
  MaxRate m;
  m.alpha = alpha;
  // Seconds per byte per pair count: the median over sizes, robust to one
  // noisy size.
  std::map<int, std::vector<double>> per_pairs;
  for (const MaxRateSample &s : samples)
    if (s.bytes > 0 && s.seconds > alpha && s.pairs > 0) per_pairs[s.pairs].push_back((s.seconds - alpha) / s.bytes);
  std::vector<double> p, c;
  for (auto &e : per_pairs) {
    std::vector<double> &v = e.second;
    std::sort(v.begin(), v.end());
    p.push_back(e.first);
    c.push_back(v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]));
  }
  const int n = static_cast<int>(p.size());
  if (n == 0) return m;
  m.pairs_measured = static_cast<int>(p.back());
  // Counts [0, k) on the flat branch, [k, n) on the rising one.
  double best_err = INFINITY;
  for (int k = 1; k <= n; ++k) {
    double flat = 0;  // mean of c over the flat branch in relative terms: 1/R_b
    double sw = 0;
    for (int i = 0; i < k; ++i) {
      flat += 1 / c[i];
      sw += 1 / (c[i] * c[i]);
    }
    flat /= sw;
    double spp = 0, spc = 0;  // c = p * inv_rn, relative least squares
    for (int i = k; i < n; ++i) {
      spp += p[i] * p[i] / (c[i] * c[i]);
      spc += p[i] / c[i];
    }
    const double inv_rn = k < n ? spc / spp : 0;
    double err = 0;
    for (int i = 0; i < n; ++i) {
      // Each branch where it was fitted: a node whose shared resource
      // gives several pairs less than one pair gets (R_N < R_b) is fitted
      // as measured, not forced through max() at one pair.
      const double model = i < k ? flat : p[i] * inv_rn;
      err += (model - c[i]) * (model - c[i]) / (c[i] * c[i]);
    }
    if (err < best_err) {
      best_err = err;
      m.pair_rate = 1 / flat;
      m.node_rate = inv_rn > 0 ? 1 / inv_rn : p.back() * m.pair_rate;
    }
  }
  m.measured = true;
  return m;
}

MaxRate fit_maxrate_by_size(const std::vector<MaxRateSample> &samples, const Postal &other_node) {
  const double alpha = other_node.segments.empty() ? 0 : other_node.segments.front().alpha;
  MaxRate m = fit_maxrate(samples, alpha);
  if (!m.measured) return m;
  const size_t n = other_node.segments.size();
  for (size_t i = 0; i < n; ++i) {
    const PostalSegment &seg = other_node.segments[i];
    const double to = i + 1 < n ? other_node.segments[i + 1].from_bytes : INFINITY;
    std::vector<MaxRateSample> in;
    for (const MaxRateSample &s : samples)
      if (s.bytes >= seg.from_bytes && s.bytes < to) in.push_back(s);
    const MaxRate f = fit_maxrate(in, seg.alpha);
    if (f.measured && f.node_rate > 0) m.by_size.push_back({seg.from_bytes, f.node_rate});
  }
  // One segment measured says nothing about the others' sizes.
  if (m.by_size.size() < 2) m.by_size.clear();
  return m;
}

}  // namespace stf::model
