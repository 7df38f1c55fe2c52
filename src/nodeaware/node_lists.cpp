// The node-aware planning's shared pieces (node_lists.h).
#include "nodeaware/node_lists.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "core/comm.h"
#include "core/error.h"

namespace stf {
namespace nodeaware {

int agree_in_node(const Topology &t, bool validate, int rc) {
  return validate ? agree(t.node_comm, rc, t.node_ranks.data() + t.node_offset[t.node]) : rc;
}

int gather_lists(const Topology &t, bool validate, const std::vector<stf_int> &mine, Lists *all, int earlier) {
  const MPI_Comm comm = t.node_comm;
  const int size = t.local_size, rank = t.local_rank;
  int rc = earlier;
  std::vector<int> counts, displs;
  std::vector<stf_int> flat;
  if (!rc && rank == 0) try {
      counts.assign(size, 0);
      displs.assign(size, 0);
    } catch (...) {
      rc = exception_error();
    }
  STF_CHECK(agree_in_node(t, validate, rc));
  const int n = static_cast<int>(mine.size());
  STF_MPI(MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm));
  if (rank == 0) try {
      for (int p = 1; p < size; p++) displs[p] = displs[p - 1] + counts[p - 1];
      flat.resize(displs.back() + counts.back());
    } catch (...) {
      rc = exception_error();
    }
  STF_CHECK(agree_in_node(t, validate, rc));
  STF_MPI(MPI_Gatherv(mine.data(), n, MPI_INT, flat.data(), counts.data(), displs.data(), MPI_INT, 0, comm));
  try {
    all->assign(rank == 0 ? size : 0, {});
    for (int p = 0; p < static_cast<int>(all->size()); p++)
      (*all)[p].assign(flat.begin() + displs[p], flat.begin() + displs[p] + counts[p]);
  } catch (...) {
    return exception_error();
  }
  return STF_SUCCESS;
}

int scatter_lists(const Topology &t, bool validate, const Lists &all, std::vector<stf_int> *mine, int earlier) {
  const MPI_Comm comm = t.node_comm;
  const int rank = t.local_rank;
  int rc = earlier;
  std::vector<int> counts, displs;
  std::vector<stf_int> flat;
  if (!rc && rank == 0) try {
      for (const auto &l : all) {
        displs.push_back(static_cast<int>(flat.size()));
        counts.push_back(static_cast<int>(l.size()));
        flat.insert(flat.end(), l.begin(), l.end());
      }
    } catch (...) {
      rc = exception_error();
    }
  STF_CHECK(agree_in_node(t, validate, rc));
  int n = 0;
  STF_MPI(MPI_Scatter(counts.data(), 1, MPI_INT, &n, 1, MPI_INT, 0, comm));
  try {
    mine->assign(n, 0);
  } catch (...) {
    rc = exception_error();
  }
  STF_CHECK(agree_in_node(t, validate, rc));
  STF_MPI(MPI_Scatterv(flat.data(), counts.data(), displs.data(), MPI_INT, mine->data(), n, MPI_INT, 0, comm));
  return STF_SUCCESS;
}

std::vector<Placed> balance(const std::vector<stf_int> &sizes, const std::vector<int> &group, int ways) {
  std::map<int, std::vector<int>> items;  // group -> its items
  std::map<int, stf_int> total;
  std::vector<int> groups;  // in order of first appearance
  for (std::size_t i = 0; i < sizes.size(); i++) {
    if (items.find(group[i]) == items.end()) groups.push_back(group[i]);
    items[group[i]].push_back(static_cast<int>(i));
    total[group[i]] += sizes[i];
  }
  std::stable_sort(groups.begin(), groups.end(), [&](int a, int b) { return total[a] > total[b]; });
  std::vector<stf_int> load(ways, 0);
  std::vector<Placed> out(sizes.size());
  for (int g : groups) {
    std::vector<int> &its = items[g];
    std::stable_sort(its.begin(), its.end(), [&](int a, int b) { return sizes[a] > sizes[b]; });
    std::vector<int> ranks(ways);
    std::iota(ranks.begin(), ranks.end(), 0);
    std::stable_sort(ranks.begin(), ranks.end(), [&](int a, int b) { return load[a] < load[b]; });
    for (std::size_t k = 0; k < its.size(); k++) {
      const int w = ranks[k % ways];
      out[its[k]] = {w, load[w]};
      load[w] += sizes[its[k]];
    }
  }
  return out;
}

stf_int pair_chunks(stf_int n, stf_int chunk_units, int ranks_a, int ranks_b) {
  const stf_int ranks = std::min(ranks_a, ranks_b);
  return chunk_units > 0 ? std::min<stf_int>((n + chunk_units - 1) / chunk_units, ranks) : 1;
}

std::vector<Wanted> parse_group(const std::vector<stf_int> &group) {
  std::vector<Wanted> out;
  for (std::size_t i = 0; i + 1 < group.size(); i += 2 + 2 * group[i + 1])
    out.push_back({group[i], group[i + 1], i + 2});
  return out;
}

}  // namespace nodeaware
}  // namespace stf
