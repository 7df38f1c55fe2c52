#include "model/postal.h"

#include <algorithm>
#include <cmath>

namespace stf::model {

const PostalSegment &Postal::segment(double bytes) const {
  static const PostalSegment none;
  if (segments.empty()) return none;
  size_t k = 0;
  while (k + 1 < segments.size() && segments[k + 1].from_bytes <= bytes) ++k;
  return segments[k];
}

double Postal::time(double bytes) const {
  const PostalSegment &s = segment(bytes);
  return s.alpha + s.beta * bytes;
}

double Postal::time_many(double messages, double bytes_each) const {
  if (messages <= 0) return 0;
  const PostalSegment &s = segment(bytes_each);
  return time(bytes_each) + (messages - 1) * std::max(gap, s.beta * bytes_each);
}

double Postal::peak_bandwidth() const {
  double best = 0;
  for (const PostalSegment &s : segments)
    if (s.beta > 0) best = std::max(best, 1 / s.beta);
  return best;
}

Line fit_relative(const double *x, const double *y, int n) {
  // Weighted least squares with weights 1 / y^2.
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (int i = 0; i < n; ++i) {
    if (!(y[i] > 0)) continue;
    const double w = 1 / (y[i] * y[i]);
    sw += w;
    sx += w * x[i];
    sy += w * y[i];
    sxx += w * x[i] * x[i];
    sxy += w * x[i] * y[i];
  }
  Line l;
  if (sw == 0) return l;
  const double det = sw * sxx - sx * sx;
  if (det > 1e-12 * sw * sxx) {
    l.b = (sw * sxy - sx * sy) / det;
    l.a = (sy - l.b * sx) / sw;
  } else {
    l.a = sy / sw;  // one distinct x: a constant
  }
  if (l.b < 0) {
    l.b = 0;
    l.a = sy / sw;
  } else if (l.a < 0) {
    l.a = 0;
    l.b = sxx > 0 ? sxy / sxx : 0;
  }
  return l;
}

namespace {

// Whether any of the n points lies more than threshold (relative) off the line.
bool off_line(const Line &l, const double *x, const double *y, int n, double threshold) {
  for (int i = 0; i < n; ++i)
    if (std::fabs(l.a + l.b * x[i] - y[i]) > threshold * y[i]) return true;
  return false;
}

}  // namespace

Postal fit_postal(const std::vector<double> &bytes, const std::vector<double> &seconds, const PostalFitOptions &o) {
  Postal p;
  const int n = static_cast<int>(std::min(bytes.size(), seconds.size()));
  const int min_points = std::max(2, o.min_points), confirm = std::max(1, o.confirm);
  int start = 0;
  while (start < n) {
    // Grow the segment point by point while the next points fit its line.
    int end = std::min(n, start + min_points);  // points [start, end)
    Line line = fit_relative(&bytes[start], &seconds[start], end - start);
    while (end < n) {
      int off = 0;
      while (off < confirm && end + off < n) {
        const double predicted = line.a + line.b * bytes[end + off];
        if (std::fabs(predicted - seconds[end + off]) <= o.threshold * seconds[end + off]) break;
        ++off;
      }
      // Off the line for `confirm` points, with enough left for a segment of
      // their own, and still off a line refitted with them (a noisy start
      // extrapolates badly, a protocol switch fits no line): a new segment.
      if (off == confirm && n - end >= min_points &&
          off_line(fit_relative(&bytes[start], &seconds[start], end + off - start), &bytes[end], &seconds[end], off,
                   o.threshold))
        break;
      ++end;
      line = fit_relative(&bytes[start], &seconds[start], end - start);
    }
    PostalSegment s;
    s.from_bytes = start == 0 ? 0 : bytes[start];
    s.alpha = line.a;
    s.beta = line.b;
    p.segments.push_back(s);
    start = end;
  }
  return p;
}

double fit_gap(const std::vector<double> &messages, const std::vector<double> &seconds) {
  const size_t n = std::min(messages.size(), seconds.size());
  if (n < 2) return 0;
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) {
    mx += messages[i];
    my += seconds[i];
  }
  mx /= n;
  my /= n;
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxx += (messages[i] - mx) * (messages[i] - mx);
    sxy += (messages[i] - mx) * (seconds[i] - my);
  }
  return sxx > 0 ? std::max(0.0, sxy / sxx) : 0;
}

}  // namespace stf::model
