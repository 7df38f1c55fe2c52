// The step SFs of a node-aware strategy (steps.h) as set up on one rank:
// which steps some rank uses, which carry no message anywhere, and where
// the step between nodes may use the user's arrays in place of the
// buffers (strategy.cpp runs the operations on them).
#pragma once

#include <string>
#include <vector>

#include "nodeaware/steps.h"

namespace stf {
namespace nodeaware {

extern const char *const step_names[kSteps];

// The step SFs; a step no rank uses has none.
struct Chain {
  stf_sf sf[kSteps] = {};
  // Steps that carry no message on any rank (every step but G when each
  // node has one rank): only their self part, which the strategy runs
  // itself on host data, skipping the step's operation; over basic, whose
  // empty operations wait for no other rank, where the data is in device
  // memory on some rank and the step SF runs.
  bool self_only[kSteps] = {};
  stf_int send_units = 0, recv_units = 0;
  // Where a self-only S copies a contiguous run of this rank's roots into
  // the whole send buffer in order, that run's first root; where a
  // self-only R1 copies the whole receive buffer in order into a
  // contiguous run of leaves and R2 does nothing here, that run's first
  // leaf; else -1. G may then read or write the user's array there in
  // place of the buffer (NodeAware::choose_aliases says when): one copy
  // fewer. A rank decides alone: its G's op and unit stay the same.
  stf_int send_alias = -1, recv_alias = -1;
  // Whether L (inside the node) writes roots of this rank in a reduce;
  // whether G touches this rank's step roots (in 2step the user's roots).
  bool local_writes_roots = false, cross_touches_roots = false;
  // What the steps of an operation of 1-byte units run on after one of
  // them failed on this rank (NodeAware::begin_step), allocated then.
  std::vector<char> failed_data;
  ~Chain() {
    for (stf_sf &s : sf) stf_destroy(&s);
  }
};

// Collective: plan the steps of sf, make an SF for each and plan them
// inside the nodes; the ranks agree on which steps some rank uses (3step
// and split with -stf_validate: with the leaders' agreement, connect.h;
// else an allreduce after the planning). Unused steps are dropped, the
// used ones get their transports. Every rank takes part whatever failed
// where (earlier: this rank's failure before it, c may then be null): a
// failure up to the agreement fails every rank. One after it is this
// rank's, agreed by the SF's install_plan, but for a failure in the
// planning where some step's transport is collective to make, or the steps
// are on another communicator than sf's (its tags ran out): the ranks
// agree on that before making them.
int build_chain(stf_sf sf, NodeAwareKind kind, const std::string &node_transport, const std::string &net_transport,
                stf_int chunk_units, Chain *c, int earlier);

}  // namespace nodeaware
}  // namespace stf
