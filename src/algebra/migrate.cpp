// Migration: every point names its new rank. Each rank tells each target
// the indices of its points going there, ascending, by the set-up's own
// discovery (NBX by default: no rank learns more than its own peers); a
// rank's arrivals are then numbered by (source rank, source index), its own
// points among them in their rank's place, and each arrival is a leaf
// reading its point at the source. Both ends then know every message, so
// the plan is written down directly, as for patterns: set-up discovers
// nothing again.
#include <limits>
#include <memory>
#include <vector>

#include "algebra/algebra.h"
#include "core/error.h"
#include "plan/discovery.h"
#include "plan/plan.h"

using namespace stf;

extern "C" int stf_create_migration(MPI_Comm comm, stf_int npoints, const int *target, stf_sf *out, stf_int *nnew) try {
  const char *what = "stf_create_migration";
  if (!out) return set_error(STF_ERR_NULL, "%s: output pointer is NULL", what);
  *out = nullptr;
  if (comm == MPI_COMM_NULL) return set_error(STF_ERR_ARG, "%s: communicator is MPI_COMM_NULL", what);
  int size = 1, rank = 0, rc = STF_SUCCESS;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  if (npoints < 0) rc = set_error(STF_ERR_ARG, "%s: npoints = %d is negative", what, npoints);
  else if (npoints > 0 && !target) rc = set_error(STF_ERR_NULL, "%s: target is NULL but npoints = %d", what, npoints);
  for (stf_int i = 0; i < npoints && !rc; i++)
    if (target[i] < 0 || target[i] >= size)
      rc = set_error(STF_ERR_ARG, "%s: point %d on rank %d targets rank %d, outside the communicator of size %d",
                     what, i, rank, target[i], size);
  STF_CHECK(agree(comm, rc));

  // Counting sort of my points by target: per other rank, its indices. The
  // local steps turn an exception into a code that the ranks then agree on:
  // one rank out of memory must not leave the others in a collective.
  std::vector<stf_int> first, by_target;
  Messages going;
  try {
    first.assign(size + 1, 0);
    for (stf_int i = 0; i < npoints; i++) first[target[i] + 1]++;
    for (int p = 0; p < size; p++) first[p + 1] += first[p];
    by_target.resize(npoints);
    std::vector<stf_int> next(first.begin(), first.end() - 1);
    for (stf_int i = 0; i < npoints; i++) by_target[next[target[i]]++] = i;
    for (int p = 0; p < size; p++) {
      if (p == rank || first[p] == first[p + 1]) continue;
      going.add(p, by_target.begin() + first[p], by_target.begin() + first[p + 1]);
    }
  } catch (...) {
    rc = exception_error();
  }
  STF_CHECK(agree(comm, rc));

  STF_CHECK(stf_create(comm, out));
  stf_sf sf = *out;
  Messages coming;  // per source rank (ascending), the indices of its points that come here
  try {
    rc = discover(*sf, sf->opts.twosided, going, &coming);
  } catch (...) {
    rc = exception_error();
  }
  rc = agree(sf->comm, rc);
  // Leaves in (source rank, source index) order, my own points in my place.
  auto plan = std::make_unique<Plan>();
  std::vector<stf_node> from;
  int local = STF_SUCCESS;
  if (!rc) try {
      plan->root = going;
      const std::size_t arriving = coming.idx.size() + (first[rank + 1] - first[rank]);
      if (arriving > static_cast<std::size_t>(std::numeric_limits<stf_int>::max()))
        local = set_error(STF_ERR_ARG, "%s: %zu points arrive on rank %d, more than stf_int holds", what, arriving,
                          rank);
      from.reserve(local ? 0 : arriving);
      const auto mine = [&] {
        for (stf_int k = first[rank]; k < first[rank + 1]; k++) {
          plan->self_leaf_idx.push_back(static_cast<stf_int>(from.size()));
          plan->self_root_idx.push_back(by_target[k]);
          from.push_back({rank, by_target[k]});
        }
      };
      bool mine_done = false;
      for (int k = 0; k < coming.count() && !local; k++) {
        if (!mine_done && coming.ranks[k] > rank) mine(), mine_done = true;
        plan->leaf.ranks.push_back(coming.ranks[k]);
        for (stf_int j = coming.offset[k]; j < coming.offset[k + 1]; j++) {
          plan->leaf.idx.push_back(static_cast<stf_int>(from.size()));
          from.push_back({coming.ranks[k], coming.idx[j]});
        }
        plan->leaf.offset.push_back(static_cast<stf_int>(plan->leaf.idx.size()));
      }
      if (!mine_done && !local) mine();
    } catch (...) {
      local = exception_error();
    }
  const auto nfrom = static_cast<stf_int>(from.size());
  if (!rc)
    rc = agree(sf->comm, local ? local
                               : stf_set_graph(sf, npoints, nfrom, nullptr, STF_COPY_VALUES, from.data(),
                                               STF_COPY_VALUES));
  if (!rc) rc = finish_plan(*sf, *sf, sf->opts, plan.get());
  if (!rc) rc = install_plan(sf, std::move(plan));
  if (rc) {
    stf_destroy(out);
    return rc;
  }
  if (nnew) *nnew = nfrom;
  return STF_SUCCESS;
} STF_API_CATCH
