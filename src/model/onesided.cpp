#include "model/onesided.h"

namespace stf::model {

double put_signal_time(const Postal &p, const OneSided &o, double messages, double bytes) {
  if (messages <= 0) return 0;
  return p.time_many(messages, bytes / messages) + messages * o.sync;
}

double collective_time(const Postal &p, const Collective &c, double messages, double bytes) {
  // A call with nothing to send still synchronises.
  return c.call + (messages > 0 ? p.time_many(messages, bytes / messages) : 0);
}

}  // namespace stf::model
