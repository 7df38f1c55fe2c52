// Predicted time of one exchange (a bcast or a reduce of an SF) for each
// way of routing it: `standard` (every rank sends straight to every peer)
// and the node-aware strategies of Bienz, Gropp and Olson, "Node aware
// sparse matrix-vector multiplication", J. Parallel Distrib. Comput. 130,
// 2019 (2step, 3step) and Lockhart, Bienz, Gropp and Olson, "Performance
// analysis and optimal node-aware communication for enlarged conjugate
// gradient methods", ACM Trans. Parallel Comput. 10(1), 2023 (split).
//
// Each strategy is a sequence of steps, and a step's time on the busiest
// rank is, for m messages and b bytes to ranks of one locality class,
//   latency   alpha(s)                     s = b / m, the mean message size
//   injection (m - 1) * max(0, gap - beta(s) * s)
//                                          LogGP's gap, per further message, beyond
//                                          what the bandwidth term holds of it (a rank's
//                                          messages each take max(gap, beta s));
//                                          off the node: max((m - 1) * that, (M - 1) * G),
//                                          M the messages leaving the node in that step,
//                                          G the node's gap (MaxRate::node_gap, 0 unless
//                                          a profile gives it)
//   bandwidth beta(s) * b                  off the node: max(beta(s) * b, B / R_N(s)),
//                                          B the bytes leaving the node (max-rate;
//                                          R_N per size where the profile has it)
// (zero for m = 0). Steps that run at once form a phase, and a phase pays
// once the busy step's excess over a small message's idle latency,
// busy_step - T(8), the largest of the classes it sends to
// (Postal::busy_step, measured with every rank exchanging at once; 0 where
// not measured): the "busy step" term. A strategy's time is the sum of
// its steps' times and floors, and its dominant term the largest of the five
// sums: "latency", "injection", "bandwidth", "node bandwidth" (the B / R_N
// part won) or "busy step". Phases: standard one (every message at once);
// 2step two (L with the off-node step, then the redistribution); 3step and
// split three (L with the gather, the off-node step, the redistribution).
// The node's gap separates the strategies when a node's messages are
// costly: every rank of a node sending to every other node (standard,
// 2step) puts P times more messages through the node than one message per
// node pair (3step), though the busiest rank may send as many in both.
// With P ranks per node, D destination nodes, r = unique / all bytes
// leaving the node (deduplication), Bp the most bytes between two nodes,
// M_std the rank pairs leaving the node and M_2 the (rank, node) pairs:
//   standard  on-node (m_on, b_on) + off-node (m_off, b_off; B, M_std)
//   2step     local L (m_on, b_on) + off-node (min(m_off, D), r * b_off; r * B, M_2)
//             + redistribution on the receiving node (min(P - 1, m_off), r * b_off)
//   3step     local L + gather to the node pair's sender (min(P - 1, m_off), r * b_off)
//             + off-node (ceil(D / P), g; r * B, D), g = max(Bp, r * B / P)
//             + redistribution (min(P - 1, m_off), g)
//   split(c)  as 3step with the node pairs' data in chunks of at most c bytes:
//             chunks = max(D, ceil(r * B / c)) spread over the P ranks,
//             off-node (ceil(chunks / P), g; r * B, chunks), g = max(min(Bp, c), r * B / P)
// These are estimates for ranking the strategies, not predictions to the
// microsecond: every rank is assumed as busy as the busiest one.
#pragma once

#include <string>
#include <vector>

#include "model/maxrate.h"
#include "model/postal.h"

namespace stf::model {

// What a machine's messages cost: postal models per locality class and the
// max-rate model of messages leaving a node.
struct Network {
  Postal same_node;
  Postal other_node;
  MaxRate off_node;
};

// Per-rank statistics of one exchange, each already reduced with MAX over
// the ranks (node-level ones: over the nodes). Bytes are message bytes.
struct CommStats {
  double messages_same_node = 0;  // messages a rank sends to other ranks of its node
  double bytes_same_node = 0;
  double messages_other_node = 0;  // messages a rank sends to ranks on other nodes
  double bytes_other_node = 0;
  double destination_nodes = 0;          // distinct nodes a node sends to (its own not counted)
  double max_node_pair_bytes = 0;        // most bytes from one node to one other node
  double bytes_leaving_node = 0;         // all bytes a node's ranks send off the node
  double unique_bytes_leaving_node = 0;  // the same after deduplication (each value once per destination node)
  double ranks_per_node = 1;
  // 0: unknown, taken as P times the busiest rank's count.
  double messages_leaving_node = 0;  // messages a node's ranks send off it (rank pairs)
  double rank_node_pairs = 0;        // (rank, other node) pairs of a node: its messages under 2step
};

enum class Strategy { standard, two_step, three_step, split };
// "standard", "2step", "3step", "split".
const char *strategy_name(Strategy s);

struct Cost {
  double seconds = 0;
  double latency = 0, injection = 0, bandwidth = 0, node_bandwidth = 0;  // the steps' sums
  double busy = 0;  // what the phases' busy-step floors add
  const char *dominant = "latency";
};

Cost cost_standard(const Network &net, const CommStats &st);
Cost cost_2step(const Network &net, const CommStats &st);
Cost cost_3step(const Network &net, const CommStats &st);
// chunk_bytes <= 0: no limit, the same as 3step.
Cost cost_split(const Network &net, const CommStats &st, double chunk_bytes);
// Any strategy (chunk_bytes only for split).
Cost cost_of(Strategy s, const Network &net, const CommStats &st, double chunk_bytes = 0);

struct Ranked {
  Strategy strategy;
  double chunk_bytes;  // split only
  Cost cost;
};
// Every strategy (split once per chunk size given), fastest first; ties keep
// the order standard, 2step, 3step, split.
std::vector<Ranked> rank_strategies(const Network &net, const CommStats &st,
                                    const std::vector<double> &split_chunk_bytes = {});

}  // namespace stf::model
