// The steps of a node-aware bcast, as graphs on this rank (a reduce runs
// them backwards). After Bienz, Gropp and Olson, "Node aware sparse
// matrix-vector multiplication", J. Parallel Distrib. Comput. 130, 2019
// (2-step and 3-step), and Lockhart, Bienz, Gropp and Olson, "Performance
// analysis and optimal node-aware communication for enlarged conjugate
// gradient methods", ACM Trans. Parallel Comput. 10(1), 2023 (split).
//
// A root value needed on another node travels once to that node (the key
// (owner rank, offset) is exact): into a receive buffer slot of one rank of
// the destination node (its aggregator for that value), from which the
// leaves of that node read it. 3step first gathers the values one node sends
// to another into a send buffer on one rank of the source node, so that one
// message crosses per pair of nodes; 2step sends from the owner itself, to
// the destination rank of its own local rank (modulo the node's size).
// split cuts a node pair's values into chunks of at most chunk_units, each
// with its own sender and receiver, but into no more chunks than either node
// has ranks (above that volume the chunks grow past the cap: every rank of
// the smaller node then carries an equal share).
//
// Who handles what (both sides decide alone, by the node's leader): the
// chunks a node receives (3step, split) are given to its ranks node pair by
// node pair, largest pair first, a pair's chunks to as many different ranks,
// those with the fewest units so far (lowest local rank on ties); the
// source node's leader, which knows the same keys from its ranks' plans,
// gives the chunks other nodes read to its ranks by the same rule. So every
// chunk is one message, and a rank receives at most one chunk from each
// node.
#pragma once

#include <vector>

#include "sf/sf.h"

namespace stf {

enum class NodeAwareKind { two_step, three_step, split };

namespace nodeaware {
enum Step { L, S, G, R1, R2, kSteps };  // StepGraphs' steps, in order
}  // namespace nodeaware

// One step's graph on this rank, as stf_set_graph takes it.
struct StepGraph {
  stf_int nroots = 0;
  std::vector<stf_int> leaves;  // leaf slots; empty: 0 .. roots.size() - 1
  std::vector<stf_node> roots;  // per leaf
  bool empty() const { return roots.empty(); }
  // Its use on `rank`: 0 no edge, 1 its own roots only, 2 messages.
  int use(int rank) const {
    for (const stf_node &r : roots)
      if (r.rank != rank) return 2;
    return empty() ? 0 : 1;
  }
};

struct StepGraphs {
  StepGraph local;    // L: user roots -> user leaves on the same node
  StepGraph gather;   // S (3step, split): user roots -> this rank's send buffer
  StepGraph cross;    // G: send buffers (2step: user roots) -> receive buffers on other nodes
  StepGraph first;    // R: receive buffer -> user leaves, one leaf per receive slot
  StepGraph rest;     //   and the other leaves (a reduce combines them after `first`)
  stf_int send_units = 0, recv_units = 0;  // this rank's send and receive buffers
  // G's root side (plan.h), known from the planning: per receiving rank
  // (ascending), the roots it reads here in its leaf order. G is the only
  // step between nodes, so the others' plans need no discovery across them.
  Messages cross_root{{}, {}, {}};  // allocating nothing until planned (a failure must not throw)
  // 3step and split with -stf_validate: per step, its largest use on any
  // rank (StepGraph::use), agreed with the leaders' agreement (connect.h);
  // use_agreed where every rank has it. 2step leaves it to the caller.
  int use[nodeaware::kSteps] = {};
  bool use_agreed = false;
  // Given by the caller: 1 where a step SF is on another communicator than
  // the SF's (its tags ran out); agreed with the uses.
  int apart = 0;
};

// Collective over sf's communicator (set up: plan and topology exist).
// chunk_units: split's most units in one message between nodes. out: a
// fresh StepGraphs, but for apart. earlier: this rank's failure before it.
// A rank that fails takes part in every collective all the same; a failure
// the ranks agreed on comes back on every rank, one after the last
// collective on that rank alone (the caller sees that the ranks agree on
// it).
int plan_node_aware(stf_sf sf, NodeAwareKind kind, stf_int chunk_units, StepGraphs *out,
                    int earlier = STF_SUCCESS);

}  // namespace stf
