// The postal model of one message, T(n) = alpha + beta * n (seconds, n in
// bytes), piecewise over size ranges: MPI switches protocols (eager,
// rendezvous, ...) at sizes it does not tell, so the breakpoints are found
// from measurements, as netgauge fits LogGP parameters: Hoefler, Lichei and
// Rehm, "Low-overhead LogGP parameter assessment for modern interconnection
// networks", IPDPS 2007. A rank sending many messages also pays a gap per
// message (LogGP's g): k messages of n bytes to one or several peers take
// T(n) + (k - 1) * max(gap, beta * n).
#pragma once

#include <vector>

namespace stf::model {

// From from_bytes (inclusive) up to the next segment's from_bytes.
struct PostalSegment {
  double from_bytes = 0;
  double alpha = 0;  // seconds
  double beta = 0;   // seconds per byte
};

struct Postal {
  std::vector<PostalSegment> segments;  // sorted by from_bytes; the first starts at 0
  double gap = 0;                       // seconds per further message of a rank
  // Seconds of one exchange step with every rank busy at once (each sends
  // a small message to a rank of this class and receives one), back to
  // back, the slowest rank's: the least a step of an exchange takes where
  // ranks share cores or a network stack, which a ping-pong between two
  // otherwise idle ranks does not see. 0: not measured, no such floor.
  double busy_step = 0;
  bool measured = false;  // false: built-in or copied values

  // The segment that holds n bytes (the first one for n below its start).
  const PostalSegment &segment(double bytes) const;
  // One message of n bytes.
  double time(double bytes) const;
  // k messages of n bytes each, sent by one rank back to back.
  double time_many(double messages, double bytes_each) const;
  // The largest 1 / beta over the segments (bytes per second).
  double peak_bandwidth() const;
};

struct PostalFitOptions {
  double threshold = 0.15;  // relative error that marks a point as off the current line
  int confirm = 2;          // consecutive points off the line that start a new segment
  int min_points = 3;       // points a segment gets before it may end
};

// Fits segments to (bytes, seconds) samples, sorted by bytes (at least 2;
// repeated sizes are fine). Each segment is the line minimising the
// relative error over its points; a new one starts where `confirm`
// consecutive next points lie more than `threshold` off the current line,
// and one of them still does when the line is refitted with them (a single
// outlier, or a line extrapolated from a few noisy points, does not start a
// segment). gap is left 0.
Postal fit_postal(const std::vector<double> &bytes, const std::vector<double> &seconds,
                  const PostalFitOptions &options = {});

// The per-message gap from round trips of k small messages one way and one
// reply: the slope of time over k (least squares), never negative.
double fit_gap(const std::vector<double> &messages, const std::vector<double> &seconds);

// A line a + b * x minimising sum(((a + b x - y) / y)^2), the relative
// error, so that small times weigh as much as large ones. b >= 0 and
// a >= 0 are enforced by refitting with the offending one at 0.
struct Line {
  double a = 0, b = 0;
};
Line fit_relative(const double *x, const double *y, int n);

}  // namespace stf::model
