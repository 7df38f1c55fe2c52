#include "graph/graph.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/error.h"

namespace stf {
namespace {

template <typename T>
int take_array(const T *user, stf_int n, stf_copy_mode mode, const T **out, bool *owned) {
  *owned = false;
  *out = user;
  if (!user) return STF_SUCCESS;
  if (mode == STF_OWN_POINTER) *owned = true;
  if (mode != STF_COPY_VALUES) return STF_SUCCESS;
  T *copy = static_cast<T *>(std::malloc(sizeof(T) * (n > 0 ? n : 1)));
  if (!copy) return set_error(STF_ERR_MEMORY, "cannot allocate %d graph entries", n);
  std::memcpy(copy, user, sizeof(T) * n);
  *out = copy;
  *owned = true;
  return STF_SUCCESS;
}

}  // namespace

int validate_graph(int comm_size, stf_int nroots, stf_int nleaves, const stf_int *ilocal, const stf_node *iremote) {
  if (nroots < 0) return set_error(STF_ERR_ARG, "nroots = %d is negative", nroots);
  if (nleaves < 0) return set_error(STF_ERR_ARG, "nleaves = %d is negative", nleaves);
  if (nleaves > 0 && !iremote) return set_error(STF_ERR_NULL, "iremote is NULL but nleaves = %d", nleaves);
  for (stf_int i = 0; i < nleaves; i++) {
    if (iremote[i].rank < 0 || iremote[i].rank >= comm_size)
      return set_error(STF_ERR_RANK, "leaf %d points to rank %d, outside the communicator of size %d", i,
                       iremote[i].rank, comm_size);
    if (iremote[i].index < 0)
      return set_error(STF_ERR_OFFSET, "leaf %d points to negative root offset %d", i, iremote[i].index);
  }
  if (!ilocal) return STF_SUCCESS;
  for (stf_int i = 0; i < nleaves; i++) {
    if (ilocal[i] < 0) return set_error(STF_ERR_OFFSET, "ilocal[%d] = %d is negative", i, ilocal[i]);
    // Leaf buffers have maxleaf + 1 slots, a count that must fit in stf_int.
    if (ilocal[i] == INT_MAX)
      return set_error(STF_ERR_ARG, "ilocal[%d] = INT_MAX: leaf slots must be below INT_MAX", i);
  }
  std::vector<stf_int> sorted(ilocal, ilocal + nleaves);
  std::sort(sorted.begin(), sorted.end());
  auto dup = std::adjacent_find(sorted.begin(), sorted.end());
  if (dup != sorted.end()) return set_error(STF_ERR_DUPLICATE, "leaf slot %d is listed twice in ilocal", *dup);
  return STF_SUCCESS;
}

int set_graph(Graph *g, stf_int nroots, stf_int nleaves, const stf_int *ilocal, stf_copy_mode local_mode,
              const stf_node *iremote, stf_copy_mode remote_mode) {
  STF_CHECK(take_array(ilocal, nleaves, local_mode, &g->ilocal, &g->free_ilocal));
  int rc = take_array(iremote, nleaves, remote_mode, &g->iremote, &g->free_iremote);
  if (rc) {
    clear_graph(g);
    return rc;
  }
  g->nroots = nroots;
  g->nleaves = nleaves;
  g->has_graph = true;
  if (nleaves > 0) {
    g->minleaf = g->maxleaf = g->leaf_at(0);
    for (stf_int i = 1; i < nleaves; i++) {
      g->minleaf = std::min(g->minleaf, g->leaf_at(i));
      g->maxleaf = std::max(g->maxleaf, g->leaf_at(i));
    }
  }
  return STF_SUCCESS;
}

void clear_graph(Graph *g) {
  if (g->free_ilocal) std::free(const_cast<stf_int *>(g->ilocal));
  if (g->free_iremote) std::free(const_cast<stf_node *>(g->iremote));
  *g = Graph();
}

}  // namespace stf
