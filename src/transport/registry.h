// The transports: one row each. The SF layer's method table (sf/methods.h:
// the values of -stf_type) points into it; the options help, stf_view and
// creation read it, so a new transport is its own file plus one row here.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "transport/transport.h"

namespace stf {

// What a transport can move itself; the rest goes through basic
// (fallback.cpp), and its describe() says which.
struct Abilities {
  bool messages = true;        // the ops layer's packed messages (false: whole operations only)
  bool legs_from_end = true;   // legs posted from end in any order (fetch-and-op returns)
  bool fetch = true;           // fetch-and-op's legs (contributions and returns)
};

struct TransportKind {
  const char *name;
  const char *help;  // one line for the options help
  Abilities can;
  // Collective over the SF's communicator where collective_setup (a
  // transport may create communicators or windows at set-up).
  int (*create)(const TransportContext &ctx, std::unique_ptr<Transport> *out);
  std::vector<const OptionSpec *> options;  // options of its own (kept in Options::extra)
  // false where create makes nothing collective: a rank may fail before it
  // alone, as the others make theirs (a strategy's steps need no agreement).
  bool collective_setup = true;
};

const std::vector<TransportKind> &transport_kinds();
// The row named `name`, or nullptr.
const TransportKind *find_transport(const std::string &name);
// Whether this build can run transport `name` at all (a build for SimGrid's
// SMPI lacks some: create_transport refuses them).
bool transport_runs_here(const std::string &name);
// Transport `kind`, wrapped with the basic fallback for what it cannot do.
// Collective.
int create_transport(const TransportContext &ctx, const TransportKind &kind, std::unique_ptr<Transport> *out);

// One per file.
int make_basic_transport(const TransportContext &ctx, std::unique_ptr<Transport> *out);
int make_neighbor_transport(const TransportContext &ctx, std::unique_ptr<Transport> *out);
int make_window_transport(const TransportContext &ctx, std::unique_ptr<Transport> *out);
int make_collective_transport(const TransportContext &ctx, std::unique_ptr<Transport> *out);
int make_putsignal_transport(const TransportContext &ctx, std::unique_ptr<Transport> *out);
// ipc.cpp: putsignal's protocol in device memory mapped between a node's processes.
int make_ipc_transport(const TransportContext &ctx, std::unique_ptr<Transport> *out);
// nvshmem.cpp: loads the NVSHMEM plug-in (STF_ERR_UNSUPPORTED in builds without it).
int make_nvshmem_transport(const TransportContext &ctx, std::unique_ptr<Transport> *out);
// fallback.cpp: a wrapper that sends what `can` says to the transport it is
// given later (adopt_primary, which allocates nothing), the rest to basic.
// Made first, because a transport with a collective set-up must not be
// destroyed on one rank alone when an allocation after it fails.
std::unique_ptr<Transport> make_fallback(Abilities can, std::unique_ptr<Transport> basic);
void adopt_primary(Transport *fallback, std::unique_ptr<Transport> primary);
// window.cpp: -stf_window_sync.
extern const OptionSpec window_sync_option;
// putsignal/options.cpp: regions per peer, bytes per unit a region holds, timeout,
// and how messages reach other nodes.
extern const OptionSpec putsignal_slots_option, putsignal_unit_bytes_option, putsignal_timeout_option,
    putsignal_net_option;
// Whether putsignal must reach other nodes through MPI RMA, a signal per
// message (-stf_putsignal_net rma); under auto it does only where the MPI's
// RMA is one-sided, which the set-up probes (putsignal/net_choice.h).
bool putsignal_rma_forced(const Options &o);
// ipc.cpp, nvshmem.cpp: regions per peer, bytes per unit a region holds.
extern const OptionSpec ipc_slots_option, ipc_unit_bytes_option;
extern const OptionSpec nvshmem_slots_option, nvshmem_unit_bytes_option, nvshmem_pool_option;

}  // namespace stf
