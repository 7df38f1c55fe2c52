#include "model/gpu.h"

#include <algorithm>

namespace stf::model {

const char *pattern_name(Pattern p) {
  switch (p) {
    case Pattern::contiguous: return "contiguous";
    case Pattern::strided: return "strided";
    case Pattern::indexed: return "indexed";
  }
  return "?";
}

namespace {

double kernel_time(double launch, double rate, double bytes) {
  if (bytes <= 0) return 0;
  return launch + (rate > 0 ? bytes / rate : 0);
}

}  // namespace

double PackRates::pack_time(Pattern p, double bytes) const {
  return kernel_time(launch, pack[static_cast<int>(p)], bytes);
}

double PackRates::unpack_time(Pattern p, double bytes) const {
  return kernel_time(launch, unpack[static_cast<int>(p)], bytes);
}

DeviceTime device_exchange_time(const Device &d, const Postal &p, const Exchange &x) {
  DeviceTime t;
  t.pack = d.rates.pack_time(x.pack_pattern, x.send_bytes);
  t.sync = x.send_bytes > 0 ? d.sync : 0;
  const double send = x.send_messages > 0 ? p.time_many(x.send_messages, x.send_bytes / x.send_messages) : 0;
  const double recv = x.recv_messages > 0 ? p.time_many(x.recv_messages, x.recv_bytes / x.recv_messages) : 0;
  t.transfer = std::max(send, recv);
  t.unpack = d.rates.unpack_time(x.unpack_pattern, x.recv_bytes);
  return t;
}

}  // namespace stf::model
