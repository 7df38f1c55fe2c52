#include "nodeaware_expect.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <sstream>
#include <utility>

namespace bench {

Expectation expect(const std::vector<Edge> &edges, const std::vector<int> &node_of, bool bcast, long long unit_bytes,
                   long long split_cap) {
  const int nranks = static_cast<int>(node_of.size());
  const int nnodes = nranks ? *std::max_element(node_of.begin(), node_of.end()) + 1 : 0;
  std::map<std::pair<int, int>, long long> rank_units;             // (sender, receiver) -> units
  std::map<std::pair<int, int>, long long> node_units;             // (sender node, receiver node) -> units
  std::map<std::pair<int, int>, std::set<std::pair<int, long long>>> node_roots;  // distinct roots per node pair
  std::set<std::pair<int, int>> root_to_node;                      // (root rank, leaf node), off-node
  std::set<std::pair<int, int>> rank_to_node;                      // (sender, receiver node), off-node
  for (const Edge &e : edges) {
    const int from = bcast ? e.root_rank : e.leaf_rank, to = bcast ? e.leaf_rank : e.root_rank;
    const int a = node_of[from], b = node_of[to];
    ++rank_units[{from, to}];
    if (a == b) continue;
    ++node_units[{a, b}];
    node_roots[{a, b}].insert({e.root_rank, e.root_index});
    root_to_node.insert({e.root_rank, node_of[e.leaf_rank]});
    rank_to_node.insert({from, b});
  }
  std::vector<long long> node_size(nnodes, 0);
  for (int n : node_of) ++node_size[n];
  Expectation x;
  x.split_cap = split_cap;
  x.basic.assign(nranks, RankCounts{});
  for (const auto &[pair, units] : rank_units) {
    RankCounts &c = x.basic[pair.first];
    const bool off = node_of[pair.first] != node_of[pair.second];
    (off ? c.off_msgs : c.in_msgs) += 1;
    (off ? c.off_bytes : c.in_bytes) += units * unit_bytes;
  }
  x.node_dest_nodes.assign(nnodes, 0);
  x.node_rank_nodes.assign(nnodes, 0);
  x.node_split_bound.assign(nnodes, 0);
  for (const auto &[pair, units] : node_units) {
    (void)units;
    const long long distinct = static_cast<long long>(node_roots[pair].size()) * unit_bytes;
    ++x.node_dest_nodes[pair.first];
    x.node_split_bound[pair.first] +=
        std::min((distinct + split_cap - 1) / split_cap, std::min(node_size[pair.first], node_size[pair.second]));
    x.distinct_off_bytes += distinct;
  }
  x.rank_dest_nodes.assign(nranks, 0);
  for (const auto &rn : root_to_node) {
    const int sender = bcast ? node_of[rn.first] : rn.second;
    ++x.node_rank_nodes[sender];
  }
  for (const auto &rn : rank_to_node) ++x.rank_dest_nodes[rn.first];
  return x;
}

namespace {

long long sum(const std::vector<long long> &v) { return std::accumulate(v.begin(), v.end(), 0LL); }

// "auto:3step" is held to the rules of what auto chose.
std::string chosen(const std::string &strategy) {
  return strategy.rfind("auto:", 0) == 0 ? strategy.substr(5) : strategy;
}

}  // namespace

std::string bound_text(const std::string &shown, const Expectation &e) {
  const std::string strategy = chosen(shown);
  if (strategy == "basic") {
    long long n = 0;
    for (const RankCounts &c : e.basic) n += c.off_msgs;
    return "=" + std::to_string(n);
  }
  if (strategy == "3step") return "=" + std::to_string(sum(e.node_dest_nodes));
  if (strategy == "2step") return "=" + std::to_string(sum(e.node_rank_nodes));
  if (strategy == "split") return "=" + std::to_string(sum(e.node_split_bound));
  return ">=" + std::to_string(sum(e.node_dest_nodes));
}

std::string check_counts(const std::string &shown, const Expectation &e, const std::vector<int> &node_of,
                         const std::vector<RankCounts> &per_rank) {
  const std::string strategy = chosen(shown);
  std::ostringstream out;
  std::vector<long long> node_msgs(e.node_dest_nodes.size(), 0);
  for (size_t r = 0; r < per_rank.size(); ++r) node_msgs[node_of[r]] += per_rank[r].off_msgs;
  for (size_t a = 0; a < node_msgs.size(); ++a) {
    const long long got = node_msgs[a], pairs = e.node_dest_nodes[a];
    auto finding = [&](const char *rule, long long want) {
      out << "node " << a << " sent " << got << " inter-node messages per exchange to " << pairs
          << " destination nodes; " << rule << " " << want << "\n";
    };
    if (got < pairs) finding("every communicating node pair needs at least one, so at least", pairs);
    if (strategy == "3step" && got != pairs) finding("3step sends exactly one per node pair:", pairs);
    if (strategy == "2step" && got != e.node_rank_nodes[a])
      finding("2step sends one per (root rank, leaf node) pair:", e.node_rank_nodes[a]);
    if (strategy == "split" && got != e.node_split_bound[a])
      finding("split sends min(ceil(distinct bytes/cap), ranks of the smaller node) per node pair, in all",
              e.node_split_bound[a]);
  }
  if (strategy == "basic")
    for (size_t r = 0; r < per_rank.size(); ++r) {
      const RankCounts &g = per_rank[r], &w = e.basic[r];
      if (g.off_msgs != w.off_msgs || g.in_msgs != w.in_msgs || g.off_bytes != w.off_bytes || g.in_bytes != w.in_bytes)
        out << "rank " << r << " sent " << g.off_msgs << " inter-node messages (" << g.off_bytes << " B) and "
            << g.in_msgs << " in-node (" << g.in_bytes << " B); one message per peer rank makes " << w.off_msgs
            << " (" << w.off_bytes << " B) and " << w.in_msgs << " (" << w.in_bytes << " B)\n";
    }
  return out.str();
}

}  // namespace bench
