// Helpers shared by the graph algebra constructions (see algebra.h).
#include <algorithm>

#include "algebra/algebra.h"
#include "core/error.h"
#include "sf/lifetime.h"

namespace stf {

int check_input(stf_sf sf, const char *what) {
  if (!sf) return set_error(STF_ERR_NULL, "%s: an input SF is NULL", what);
  if (!sf_object_alive(sf)) return set_error(STF_ERR_STATE, "%s: an input SF was destroyed", what);
  if (!sf->has_graph) return set_error(STF_ERR_STATE, "%s: an input SF has no graph", what);
  return STF_SUCCESS;
}

int check_same_comm(stf_sf a, stf_sf b, const char *what) {
  int result = MPI_UNEQUAL;
  STF_MPI(MPI_Comm_compare(a->comm, b->comm, &result));
  if (result != MPI_IDENT && result != MPI_CONGRUENT)
    return set_error(STF_ERR_ARG, "%s: the SFs live on different communicators", what);
  return STF_SUCCESS;
}

int check_one(stf_sf sf, stf_sf *out, const char *what) {
  if (!out) return set_error(STF_ERR_NULL, "%s: output pointer is NULL", what);
  *out = nullptr;
  return check_input(sf, what);
}

int check_pair(stf_sf a, stf_sf b, stf_sf *out, const char *what) {
  STF_CHECK(check_one(a, out, what));
  return check_input(b, what);
}

int set_up(stf_sf sf) { return ensure_setup(sf, true); }

int new_sf(MPI_Comm comm, const Options &opts, stf_int nroots, stf_int nleaves, const stf_int *ilocal,
           const stf_node *iremote, stf_sf *out) {
  STF_CHECK(stf_create(comm, out));
  (*out)->opts = opts;
  int rc = agree((*out)->comm, stf_set_graph(*out, nroots, nleaves, ilocal, STF_COPY_VALUES, iremote,
                                             STF_COPY_VALUES));
  if (rc) stf_destroy(out);
  return rc;
}

int sf_from_slots(stf_sf like, stf_int nroots, const std::vector<stf_node> &at, stf_sf *out) {
  std::vector<stf_int> ilocal;
  std::vector<stf_node> iremote;
  for (stf_int s = 0; s < static_cast<stf_int>(at.size()); s++)
    if (at[s].rank >= 0) {
      ilocal.push_back(s);
      iremote.push_back(at[s]);
    }
  return new_sf(like->comm, like->opts, nroots, static_cast<stf_int>(iremote.size()), ilocal.data(),
                iremote.data(), out);
}

int check_degree_at_most_one(stf_sf sf, const char *what, const char *which) {
  const stf_int *degree = nullptr;
  STF_CHECK(stf_compute_degree(sf, &degree));
  int rc = STF_SUCCESS;
  for (stf_int r = 0; r < sf->nroots && !rc; r++)
    if (degree[r] > 1)
      rc = set_error(STF_ERR_ARG, "%s: root %d of %s on rank %d has %d leaves; at most one is required", what, r,
                     which, sf->rank, degree[r]);
  return agree(sf->comm, rc);
}

int layout_starts(MPI_Comm comm, stf_int nlocal, std::vector<long long> *start) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  long long mine = nlocal;
  start->assign(size + 1, 0);
  STF_MPI(MPI_Allgather(&mine, 1, MPI_LONG_LONG, start->data() + 1, 1, MPI_LONG_LONG, comm));
  for (int p = 0; p < size; p++) (*start)[p + 1] += (*start)[p];
  return STF_SUCCESS;
}

int find_owners(const std::vector<long long> &start, stf_int n, const stf_gint *global, stf_node *owners,
                const char *what) {
  for (stf_int i = 0; i < n; i++) {
    if (global[i] < 0 || global[i] >= start.back())
      return set_error(STF_ERR_ARG, "%s: global index %lld (entry %d) is outside the layout's %lld entries", what,
                       static_cast<long long>(global[i]), i, start.back());
    // The owner is the last rank whose range starts at or before the index
    // (ranks owning nothing have empty ranges and are skipped this way).
    int p = static_cast<int>(std::upper_bound(start.begin(), start.end(), global[i]) - start.begin()) - 1;
    owners[i] = {p, static_cast<stf_int>(global[i] - start[p])};
  }
  return STF_SUCCESS;
}

}  // namespace stf
