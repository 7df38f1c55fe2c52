// Where an exchange of device data spends its time, after the latency
// breakdown of Mills et al., "Toward performance-portable PETSc for
// GPU-based exascale systems", Parallel Computing 108, 2021:
//   T = pack + stream sync + max(send, receive) + unpack,
// pack and unpack being a kernel launch plus bytes over the rate of their
// index pattern, the sync the host waiting for the packed buffer before it
// hands it to MPI, send and receive the postal time of the messages. The
// same rates describe host packing (launch = the call's overhead).
#pragma once

#include "model/postal.h"

namespace stf::model {

// How a message's slots lie in user memory (plan/index_analysis.h's kinds).
enum class Pattern { contiguous = 0, strided = 1, indexed = 2 };
constexpr int kPatterns = 3;
// "contiguous", "strided", "indexed".
const char *pattern_name(Pattern p);

struct PackRates {
  double pack[kPatterns] = {0, 0, 0};    // bytes per second, by Pattern
  double unpack[kPatterns] = {0, 0, 0};  // bytes per second (MPI_REPLACE)
  double launch = 0;                     // seconds per pack or unpack call
  bool measured = false;

  // One pack (or unpack) of b bytes; a rate of 0 means free (unknown).
  double pack_time(Pattern p, double bytes) const;
  double unpack_time(Pattern p, double bytes) const;
};

struct Device {
  PackRates rates;
  double sync = 0;  // seconds for the host to wait on an idle-ended stream
  bool measured = false;
};

// One rank's side of an exchange.
struct Exchange {
  Pattern pack_pattern = Pattern::contiguous, unpack_pattern = Pattern::contiguous;
  double send_messages = 0, send_bytes = 0;
  double recv_messages = 0, recv_bytes = 0;
};

struct DeviceTime {
  double pack = 0, sync = 0, transfer = 0, unpack = 0;
  double total() const { return pack + sync + transfer + unpack; }
};

DeviceTime device_exchange_time(const Device &d, const Postal &p, const Exchange &x);

}  // namespace stf::model
