// The max-rate model of Gropp, Olson and Samfass, "Modeling MPI
// communication performance on SMP nodes: is it time to retire the ping pong
// test", EuroMPI 2016: when `active` ranks of a node each send a message of
// s bytes off the node at once, a message takes
//   T = alpha + max(active * s / node_rate, s / pair_rate),
// one rank being limited by its own injection rate (pair_rate, R_b) and the
// node by its network interface (node_rate, R_N). For large messages.
#pragma once

#include <vector>

#include "model/postal.h"

namespace stf::model {

// R_N for messages from from_bytes up (to the next entry's from_bytes).
struct NodeRateSegment {
  double from_bytes = 0;
  double node_rate = 0;
};

struct MaxRate {
  double alpha = 0;        // seconds
  double node_rate = 0;    // R_N, bytes per second leaving a node
  double pair_rate = 0;    // R_b, bytes per second of one sending rank
  // Seconds between two messages leaving the node, whichever ranks send
  // them: the message-count counterpart of R_N (a node's network interface
  // and, on an oversubscribed machine, its shared cores handle its
  // messages one after another). 0 (the default; calibrate does not
  // measure it): no such bound, only each rank's own gap.
  double node_gap = 0;
  int pairs_measured = 0;  // the most concurrent pairs the fit saw
  bool measured = false;
  // R_N per message size, where it was fitted per protocol segment: a
  // network (or a simulated one) may move a node's messages of one
  // protocol several times faster than another's. Sorted by from_bytes;
  // empty: node_rate for every size.
  std::vector<NodeRateSegment> by_size;

  // R_N for messages of this size: the by_size entry that holds it (the
  // first one below its start), else node_rate.
  double node_rate_for(double bytes) const;

  // One of `active` concurrent messages of s bytes.
  double time(double active, double bytes) const;
  // The bandwidth term alone, max(node_bytes / R_N, rank_bytes / R_b).
  double transfer(double node_bytes, double rank_bytes) const;
};

// One multi-pair measurement: `pairs` pairs exchanging `bytes` at once,
// one-way time per message.
struct MaxRateSample {
  int pairs = 1;
  double bytes = 0;
  double seconds = 0;
};

// Fits R_b and R_N (alpha given, e.g. the postal model's small-message
// latency): each sample gives an effective time per byte c = (T - alpha) / s
// (median over sizes per pair count); the pair counts split into the lower
// ones, on the flat R_b branch (c = 1 / R_b), and the higher ones, on the
// rising R_N branch (c = pairs / R_N), where the split leaves the smallest
// relative error. When no count saturates the node, R_N comes out as the
// largest count times R_b: the most the data shows. R_N may come out below
// R_b (several pairs together slower than one, as on an oversubscribed
// machine); time() then holds one pair to R_N as well.
MaxRate fit_maxrate(const std::vector<MaxRateSample> &samples, double alpha);

// fit_maxrate over all samples (alpha: the first segment's), and R_N again
// per segment of the off-node postal model over the samples whose size
// falls in it (alpha: that segment's), as by_size: calibrate's node-pongs
// span several protocols.
MaxRate fit_maxrate_by_size(const std::vector<MaxRateSample> &samples, const Postal &other_node);

}  // namespace stf::model
