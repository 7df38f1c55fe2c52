#include "sf/traffic.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "core/error.h"

namespace stf {

int measure_traffic(const Comm &comm, const Plan &p, const Topology &t, Traffic *out) {
  Traffic tr;
  tr.ranks = comm.size;
  tr.nodes = t.nnodes;
  // This rank: root-side messages of a bcast, by the node of their receiver.
  std::map<int, std::set<stf_int>> roots_to_node;  // other node -> distinct roots sent there
  std::map<int, long long> units_to_node;
  for (int k = 0; k < p.root.count(); k++) {
    const int peer = p.root.ranks[k];
    const stf_int n = p.root.size(k);
    if (t.same_node(peer)) {
      tr.messages_in_node++;
      tr.units_in_node += n;
      continue;
    }
    tr.messages_off_node++;
    tr.units_off_node += n;
    units_to_node[t.node_of[peer]] += n;
    auto &distinct = roots_to_node[t.node_of[peer]];
    distinct.insert(p.root.idx.begin() + p.root.offset[k], p.root.idx.begin() + p.root.offset[k + 1]);
  }
  tr.self_units = static_cast<long long>(p.self_root_idx.size());
  tr.destination_nodes = static_cast<long long>(units_to_node.size());
  for (const auto &u : units_to_node) tr.max_units_to_node = std::max(tr.max_units_to_node, u.second);

  // This node: the leader sums (destination node, distinct units) over its ranks.
  std::vector<long long> mine;  // node, distinct, then the rank's totals at the end
  for (const auto &r : roots_to_node) mine.insert(mine.end(), {r.first, static_cast<long long>(r.second.size())});
  const int n = static_cast<int>(mine.size());
  std::vector<int> counts(t.local_size), displs(t.local_size, 0);
  STF_MPI(MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, t.node_comm));
  for (int i = 1; i < t.local_size; i++) displs[i] = displs[i - 1] + counts[i - 1];
  std::vector<long long> all(t.local_rank == 0 ? displs.back() + counts.back() : 0);
  STF_MPI(MPI_Gatherv(mine.data(), n, MPI_LONG_LONG, all.data(), counts.data(), displs.data(), MPI_LONG_LONG, 0,
                      t.node_comm));
  long long node_totals[3] = {tr.units_off_node, tr.messages_off_node, tr.destination_nodes},
            node_sums[3] = {0, 0, 0};
  STF_MPI(MPI_Reduce(node_totals, node_sums, 3, MPI_LONG_LONG, MPI_SUM, 0, t.node_comm));
  if (t.local_rank == 0) {
    std::map<long long, long long> per_node;
    for (std::size_t i = 0; i + 1 < all.size(); i += 2) per_node[all[i]] += all[i + 1];
    tr.node_pairs = static_cast<long long>(per_node.size());
    for (const auto &pn : per_node) {
      tr.node_distinct_off += pn.second;
      tr.max_pair_distinct = std::max(tr.max_pair_distinct, pn.second);
    }
    tr.node_units_off = node_sums[0];
    tr.node_messages_off = node_sums[1];
    tr.node_rank_node_pairs = node_sums[2];
  }
  tr.ranks_per_node = t.local_size;

  long long v[] = {tr.ranks_per_node,   tr.messages_in_node,  tr.messages_off_node, tr.units_in_node,
                   tr.units_off_node,   tr.self_units,        tr.destination_nodes, tr.max_units_to_node,
                   tr.node_pairs,       tr.node_units_off,    tr.node_distinct_off, tr.max_pair_distinct,
                   tr.node_messages_off, tr.node_rank_node_pairs};
  STF_MPI(MPI_Allreduce(MPI_IN_PLACE, v, sizeof(v) / sizeof(v[0]), MPI_LONG_LONG, MPI_MAX, comm.comm));
  long long *f[] = {nullptr,           &tr.messages_in_node, &tr.messages_off_node, &tr.units_in_node,
                    &tr.units_off_node, &tr.self_units,       &tr.destination_nodes, &tr.max_units_to_node,
                    &tr.node_pairs,     &tr.node_units_off,   &tr.node_distinct_off, &tr.max_pair_distinct,
                    &tr.node_messages_off, &tr.node_rank_node_pairs};
  tr.ranks_per_node = static_cast<int>(v[0]);
  for (std::size_t i = 1; i < sizeof(v) / sizeof(v[0]); i++) *f[i] = v[i];
  *out = tr;
  return STF_SUCCESS;
}

}  // namespace stf
