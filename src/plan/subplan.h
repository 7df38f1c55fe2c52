// Plans derived from another SF's plan, without discovery: a sub-SF's edges
// are a subset of its parent's, so its messages are the parent's, filtered.
#pragma once

#include <vector>

#include "plan/plan.h"

namespace stf {

// Which side knows the selection of edges.
enum class Keep { roots, leaves };

// Collective over the sub-SF's communicator (its subplan tag carries the
// messages). keep flags the parent's roots (nroots entries) or leaf slots
// (maxleaf + 1 entries) whose edges stay; the other end of each edge learns
// the verdict from one message along the parent's plan. Fills sub's
// messages and self part (finish_plan is left to the caller, once the
// sub-SF has its graph) and kept_leaf: per leaf slot, whether its edge stays.
int derive_subplan(const Comm &sub_comm, const Graph &parent, const Plan &parent_plan, Keep side,
                   const std::vector<char> &keep, Plan *sub, std::vector<char> *kept_leaf);

}  // namespace stf
