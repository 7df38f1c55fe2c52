// Cost terms of the transports that are not point-to-point messages: puts
// with a signal (window, putsignal) and (neighbourhood) collectives. Both
// are the postal model of the same messages plus what their
// synchronisation adds: per message for one-sided (the signal or flush that
// tells the target its data is there), per call for a collective.
#pragma once

#include "model/postal.h"

namespace stf::model {

struct OneSided {
  double sync = 0;  // seconds per message, beyond the postal time of its data
  bool measured = false;
  // The put-with-signal protocol alone through a node's shared memory (a
  // copy in, a signal, a copy out), one-way, as calibrate measures it: the
  // in-node messages of the putsignal transport. It prices them where it
  // was measured, or on the built-in profile, whose MPI figures are as
  // rough; a measured profile without it prices them as MPI's messages
  // plus a signal each.
  Postal heap;
};

struct Collective {
  double call = 0;  // seconds per call, beyond the postal time of its messages
  bool measured = false;
};

// m messages of b bytes in all from one rank, as puts each followed by its
// signal: postal time_many(m, b / m) + m * sync.
double put_signal_time(const Postal &p, const OneSided &o, double messages, double bytes);
// The same messages inside one collective call: call + time_many(m, b / m).
double collective_time(const Postal &p, const Collective &c, double messages, double bytes);

}  // namespace stf::model
