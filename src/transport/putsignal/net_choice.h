// How putsignal's messages reach other nodes: through an MPI RMA window (a
// put and a signal per message) or by MPI point-to-point. -stf_putsignal_net
// rma or p2p says so; auto (the default) asks whether the MPI's one-sided
// layer moves data between nodes by itself. Where it is emulated over
// messages (Open MPI's osc/pt2pt, the only component of Open MPI 4.1 that
// reaches other hosts over TCP), a put lands only when the target calls
// MPI: a begin waits in its flush for a peer that is computing, and each
// message costs a few MPI messages.
#pragma once

#include <string>

#include "transport/transport.h"

namespace stf::putsignal {

struct NetChoice {
  bool rma = false;  // messages to other nodes through the RMA window
  // A put completes only once its target calls MPI (probed, or MPICH):
  // with rma forced, begins then leave their writes to a later call.
  bool emulated = false;
  std::string why;  // for the view
};

// Collective over the SF's communicator where the SF spans nodes (whatever
// the option: the probe's answer is kept for later SFs); the same answer on
// every rank. Allocates only after its collectives: a rank that fails there
// (out of memory) returns the failure alone, for the caller's agreement.
int choose_net(const TransportContext &ctx, NetChoice *out);

}  // namespace stf::putsignal
