// The transports: one row each. Options (-stf_type and each transport's own
// options), the options help, stf_set_type, stf_view and creation all read
// this table, so a new transport is its own file plus one row here.
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
  // Collective over the SF's communicator (a transport may create
  // communicators or windows at set-up).
  int (*create)(const TransportContext &ctx, std::unique_ptr<Transport> *out);
  std::vector<const OptionSpec *> options;  // options of its own (kept in Options::extra)
  // A node-aware strategy (2step, 3step, split): bcast and reduce run as
  // steps over SFs of their own (src/nodeaware/); create makes the SF's own
  // transport, which carries the other operations.
  bool node_aware = false;
};

const std::vector<TransportKind> &transport_kinds();
// -stf_type, whose values are the table's names.
const OptionSpec &transport_option();
// Whether -stf_type `name` is a node-aware strategy.
bool is_node_aware(const std::string &name);
// The transport named by ctx.opts.type, wrapped with the basic fallback for
// what it cannot do. Collective.
int create_transport(const TransportContext &ctx, std::unique_ptr<Transport> *out);

// One per file.
int make_basic_transport(const TransportContext &ctx, std::unique_ptr<Transport> *out);
int make_neighbor_transport(const TransportContext &ctx, std::unique_ptr<Transport> *out);
int make_window_transport(const TransportContext &ctx, std::unique_ptr<Transport> *out);
int make_collective_transport(const TransportContext &ctx, std::unique_ptr<Transport> *out);
int make_putsignal_transport(const TransportContext &ctx, std::unique_ptr<Transport> *out);
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
// putsignal.cpp: regions per peer, bytes per unit a region holds, timeout,
// and how messages reach other nodes.
extern const OptionSpec putsignal_slots_option, putsignal_unit_bytes_option, putsignal_timeout_option,
    putsignal_net_option;
// Whether putsignal reaches other nodes through MPI RMA, a signal per
// message (-stf_putsignal_net rma), or by point-to-point (p2p).
bool putsignal_rma_between_nodes(const Options &o);
// nvshmem.cpp: regions per peer, bytes per unit a region holds.
extern const OptionSpec nvshmem_slots_option, nvshmem_unit_bytes_option;
// The node-aware strategies' options (read by src/nodeaware/): split's cap on
// the bytes of one message between nodes, and the transports of the steps
// inside a node and between nodes.
extern const OptionSpec split_bytes_option, node_transport_option, net_transport_option;

}  // namespace stf
