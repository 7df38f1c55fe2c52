// The message roofline of Ding, Haseeb, Groves and Williams, "Evaluating the
// performance of one-sided communication on CPUs and GPUs", SC'23 Workshops
// (P3HPC), 2023: the bandwidth an operation can sustain, as a function of
// its message size and the number of messages it sends per synchronisation,
// is bounded by the peak bandwidth and by the latency diagonal
//   bw <= min(peak, messages_per_sync * bytes_per_message / latency).
// Sending more messages between synchronisations lifts the diagonal.
#pragma once

#include "model/postal.h"

namespace stf::model {

struct Roofline {
  double peak = 0;     // bytes per second
  double latency = 0;  // seconds per synchronisation
};

// Peak = the postal model's best 1 / beta, latency = its alpha at 0 bytes.
Roofline roofline_of(const Postal &p);

struct RooflinePoint {
  double bound = 0;                // bytes per second the roofline allows
  double achieved = 0;             // bytes per second measured (0 without a time)
  double fraction = 0;             // achieved / bound
  const char *regime = "latency";  // which roof binds: "latency" or "bandwidth"
};

// An operation sending `messages_per_sync` messages of `bytes_per_message`
// between synchronisations, which took `seconds` per synchronisation
// (<= 0: no measurement, only the bound).
RooflinePoint roofline_point(const Roofline &r, double messages_per_sync, double bytes_per_message, double seconds = 0);

}  // namespace stf::model
