// 3step and split between nodes: who sends and who receives each chunk of
// values one node reads from another (the cross step), and which roots each
// sender gathers first (the gather step).
#pragma once

#include <map>
#include <vector>

#include "nodeaware/node_lists.h"
#include "nodeaware/steps.h"

namespace stf {
namespace nodeaware {

// Collective over sf's communicator. group: this rank's chunks as its
// node's leader gave them (parse_group). On a leader: read_by, per local
// rank, the roots other nodes read there ((node, count, offsets...) per
// reading node, from the rank's plan), and receivers, per node this node
// reads from, the receiving rank of each of that pair's chunks (in chunk
// order). Fills out's gather and cross steps, cross_root and send_units.
// earlier: this rank's failure before it; every rank agrees (with
// -stf_validate) before the leaders exchange anything, and a failure after
// that is the rank's own (or its node's). That agreement also gives every
// rank each step's largest use (out->use, given for L and R on entry).
int connect_nodes(stf_sf sf, stf_int chunk_units, const std::vector<stf_int> &group, const Lists &read_by,
                  const std::map<int, std::vector<stf_int>> &receivers, StepGraphs *out, int earlier);

}  // namespace nodeaware
}  // namespace stf
