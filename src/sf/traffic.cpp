#include "sf/traffic.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "core/error.h"

namespace stf {

namespace {

// This rank's part: its root-side messages of a bcast, by the node of
// their receiver, and (mine) the distinct roots it sends to each other node.
void count_mine(const Plan &p, const Topology &t, Traffic *tr, std::vector<long long> *mine) {
  std::map<int, std::set<stf_int>> roots_to_node;  // other node -> distinct roots sent there
  std::map<int, long long> units_to_node;
  for (int k = 0; k < p.root.count(); k++) {
    const int peer = p.root.ranks[k];
    const stf_int n = p.root.size(k);
    if (t.same_node(peer)) {
      tr->messages_in_node++;
      tr->units_in_node += n;
      continue;
    }
    tr->messages_off_node++;
    tr->units_off_node += n;
    units_to_node[t.node_of[peer]] += n;
    auto &distinct = roots_to_node[t.node_of[peer]];
    distinct.insert(p.root.idx.begin() + p.root.offset[k], p.root.idx.begin() + p.root.offset[k + 1]);
  }
  tr->self_units = static_cast<long long>(p.self_root_idx.size());
  tr->destination_nodes = static_cast<long long>(units_to_node.size());
  for (const auto &u : units_to_node) tr->max_units_to_node = std::max(tr->max_units_to_node, u.second);
  for (const auto &r : roots_to_node) mine->insert(mine->end(), {r.first, static_cast<long long>(r.second.size())});
}

// The node leader's part, from its ranks' (node, distinct) pairs.
void count_node(const std::vector<long long> &all, Traffic *tr) {
  std::map<long long, long long> per_node;
  for (std::size_t i = 0; i + 1 < all.size(); i += 2) per_node[all[i]] += all[i + 1];
  tr->node_pairs = static_cast<long long>(per_node.size());
  for (const auto &pn : per_node) {
    tr->node_distinct_off += pn.second;
    tr->max_pair_distinct = std::max(tr->max_pair_distinct, pn.second);
  }
}

}  // namespace

// A rank that fails (out of memory, or before: earlier) takes part in every
// collective all the same, and the last one tells every rank.
int measure_traffic(const Comm &comm, const Plan &p, const Topology &t, Traffic *out, int earlier) {
  Traffic tr;
  tr.ranks = comm.size;
  tr.nodes = t.nnodes;
  int rc = earlier;
  std::vector<long long> mine;  // (node, distinct) pairs
  std::vector<int> counts, displs;
  if (!rc) try {
      count_mine(p, t, &tr, &mine);
      counts.assign(t.local_size, 0);
      displs.assign(t.local_size, 0);
    } catch (...) {
      rc = exception_error();
    }
  // This node: the leader sums (destination node, distinct units) over its
  // ranks. The node agrees first, and skips the gathers where one failed.
  int node_rc = agree(t.node_comm, rc);
  std::vector<long long> all;
  if (!node_rc) {
    const int n = static_cast<int>(mine.size());
    STF_MPI(MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, t.node_comm));
    for (int i = 1; i < t.local_size; i++) displs[i] = displs[i - 1] + counts[i - 1];
    if (t.local_rank == 0) try {
        all.resize(displs.back() + counts.back());
      } catch (...) {
        rc = exception_error();
      }
    node_rc = agree(t.node_comm, rc);
    if (!node_rc)
      STF_MPI(MPI_Gatherv(mine.data(), n, MPI_LONG_LONG, all.data(), counts.data(), displs.data(), MPI_LONG_LONG, 0,
                          t.node_comm));
  }
  long long node_totals[3] = {tr.units_off_node, tr.messages_off_node, tr.destination_nodes},
            node_sums[3] = {0, 0, 0};
  if (!node_rc) STF_MPI(MPI_Reduce(node_totals, node_sums, 3, MPI_LONG_LONG, MPI_SUM, 0, t.node_comm));
  if (t.local_rank == 0 && !node_rc) {
    try {
      count_node(all, &tr);
    } catch (...) {
      rc = exception_error();
    }
    tr.node_units_off = node_sums[0];
    tr.node_messages_off = node_sums[1];
    tr.node_rank_node_pairs = node_sums[2];
  }
  tr.ranks_per_node = t.local_size;

  // Every rank the same numbers (the largest), and the largest error code.
  long long v[] = {tr.ranks_per_node,   tr.messages_in_node,  tr.messages_off_node, tr.units_in_node,
                   tr.units_off_node,   tr.self_units,        tr.destination_nodes, tr.max_units_to_node,
                   tr.node_pairs,       tr.node_units_off,    tr.node_distinct_off, tr.max_pair_distinct,
                   tr.node_messages_off, tr.node_rank_node_pairs, rc ? rc : node_rc,
                   rc ? comm.size - comm.rank : 0};  // the lowest rank that failed
  constexpr int nv = sizeof(v) / sizeof(v[0]);
  STF_MPI(MPI_Allreduce(MPI_IN_PLACE, v, nv, MPI_LONG_LONG, MPI_MAX, comm.comm));
  if (rc) return rc;
  if (v[nv - 2])
    return set_error(static_cast<int>(v[nv - 2]), "set-up: rank %lld failed measuring the SF's traffic (its message "
                     "says why)", v[nv - 1] ? comm.size - v[nv - 1] : -1LL);
  long long *f[] = {nullptr,           &tr.messages_in_node, &tr.messages_off_node, &tr.units_in_node,
                    &tr.units_off_node, &tr.self_units,       &tr.destination_nodes, &tr.max_units_to_node,
                    &tr.node_pairs,     &tr.node_units_off,   &tr.node_distinct_off, &tr.max_pair_distinct,
                    &tr.node_messages_off, &tr.node_rank_node_pairs};
  tr.ranks_per_node = static_cast<int>(v[0]);
  for (std::size_t i = 1; i < sizeof(f) / sizeof(f[0]); i++) *f[i] = v[i];
  *out = tr;
  return STF_SUCCESS;
}

}  // namespace stf
