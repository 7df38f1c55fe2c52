// What each node-aware strategy may send between nodes on one SF graph,
// worked out from the graph and the node of every rank alone, so that
// bench/nodeaware can hold the library's message counters to the
// strategies' definitions:
//   basic  one message per communicating rank pair (exact, per rank);
//   3step  one inter-node message per communicating node pair (exact);
//   2step  one per (root rank, node of its leaves) pair (exact): a bcast
//          sends it from the root's rank to one rank of the leaves' node,
//          a reduce the other way;
//   split  per node pair, min(ceil(distinct bytes / cap), ranks of the
//          smaller node) (exact): each chunk is one message, and a pair is
//          cut into no more chunks than either node has ranks.
// Every strategy needs at least one inter-node message per communicating
// node pair. Checks are made per sending node, so they hold whichever rank
// of a node sends.
#pragma once

#include <string>
#include <vector>

namespace bench {

// One leaf on another rank than its root: who holds it, whose root it reads.
struct Edge {
  int leaf_rank, root_rank;
  long long root_index;
};

// One rank's counters for one exchange.
struct RankCounts {
  long long off_msgs = 0, off_bytes = 0, in_msgs = 0, in_bytes = 0;
};

// The numbers one direction's definitions give (bcast: roots send to
// leaves; reduce: leaves send to roots).
struct Expectation {
  std::vector<RankCounts> basic;            // per rank, exact
  std::vector<long long> rank_dest_nodes;   // per rank: other nodes it has data for
  std::vector<long long> node_dest_nodes;   // per node: nodes it sends to (3step, exact)
  std::vector<long long> node_rank_nodes;   // per node: its (root rank, leaf node) pairs it sends (2step, exact)
  std::vector<long long> node_split_bound;  // per node: chunks it sends, over its destination nodes (split, exact)
  long long distinct_off_bytes = 0;         // distinct roots per node pair, in bytes: what a node must receive
  long long split_cap = 0;                  // split's cap on one inter-node message, bytes
};

Expectation expect(const std::vector<Edge> &edges, const std::vector<int> &node_of, bool bcast, long long unit_bytes,
                   long long split_cap);

// Total over ranks of the inter-node messages a strategy must (=) or may
// (<=) send, for tables: "=12", "<=20".
std::string bound_text(const std::string &strategy, const Expectation &e);

// Empty when per_rank agrees with the strategy's definition, else what
// does not, one line per finding.
std::string check_counts(const std::string &strategy, const Expectation &e, const std::vector<int> &node_of,
                         const std::vector<RankCounts> &per_rank);

}  // namespace bench
