// What an SF's bcast sends, summarised for the cost models (stf_explain and
// -stf_type auto): per rank and per node, reduced with MAX over the
// communicator so that every rank holds the same numbers and makes the same
// choice. Units, not bytes: the unit size is the caller's. A reduce sends
// the same messages the other way.
#pragma once

#include "sf/sf.h"

namespace stf {

struct Traffic {
  int ranks = 1, nodes = 1, ranks_per_node = 1;  // largest node
  // One rank (the busiest in each figure):
  long long messages_in_node = 0, messages_off_node = 0;  // to other ranks
  long long units_in_node = 0, units_off_node = 0;
  long long self_units = 0;         // edges whose root is on the rank
  long long destination_nodes = 0;  // other nodes it sends to
  long long max_units_to_node = 0;  // the most it sends to one other node
  // One node (the busiest):
  long long node_pairs = 0;             // other nodes it sends to
  long long node_units_off = 0;         // units leaving it (one per edge)
  long long node_distinct_off = 0;      // ... counting a root once per destination node
  long long max_pair_distinct = 0;      // the most distinct units it sends to one node
  long long node_messages_off = 0;      // messages leaving it (one per rank pair)
  long long node_rank_node_pairs = 0;   // (rank, other node) pairs: its messages leaving it under 2step
};

// Collective over comm (an SF's, with its plan and node topology). earlier:
// this rank's failure before it; every rank fails where one did (the
// largest code), after taking part in every collective.
int measure_traffic(const Comm &comm, const Plan &plan, const Topology &topology, Traffic *out,
                    int earlier = STF_SUCCESS);

}  // namespace stf
