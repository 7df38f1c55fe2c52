// Vector scatter: the SF from owned vector entries to the ghost entries a
// rank asked for (or, general, from one distributed vector's entries to
// another's), and forward / reverse scatters as bcast / reduce over it.
#include <algorithm>
#include <new>
#include <vector>

#include "apps_error.h"

struct stf_vecscatter_s {
  stf_sf sf = nullptr;
  int insert_ok = -1;  // reverse INSERT: no owned entry named twice (-1: not asked yet)
};

namespace {

using stf_apps::core;

MPI_Op op_of(stf_insert_mode mode) { return mode == STF_ADD_VALUES ? MPI_SUM : MPI_REPLACE; }

int check(stf_vecscatter vs, stf_insert_mode mode) {
  if (!vs) return stf_apps::fail(STF_ERR_NULL, "the vector scatter handle is NULL");
  if (mode != STF_INSERT_VALUES && mode != STF_ADD_VALUES)
    return stf_apps::fail(STF_ERR_ARG, "unknown insert mode %d", mode);
  return STF_SUCCESS;
}

// Reverse INSERT is well defined where no owned entry is named by two ghost
// entries anywhere: the degrees say so, agreed by every rank (the first
// reverse INSERT is collective as every reverse is).
int check_insert(stf_vecscatter vs) {
  if (vs->insert_ok < 0) {
    const stf_int *degree = nullptr;
    stf_int nroots = 0;
    if (int rc = core(stf_compute_degree(vs->sf, &degree), "vecscatter_reverse_begin")) return rc;
    stf_get_graph(vs->sf, &nroots, nullptr, nullptr, nullptr);
    int most = nroots > 0 ? *std::max_element(degree, degree + nroots) : 0;
    MPI_Comm comm;
    stf_get_comm(vs->sf, &comm);
    if (MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
      return stf_apps::fail(STF_ERR_MPI, "vecscatter_reverse_begin: MPI_Allreduce failed");
    vs->insert_ok = most <= 1;
  }
  if (!vs->insert_ok)
    return stf_apps::fail(STF_ERR_ARG,
                          "reverse scatter with STF_INSERT_VALUES: some owned entry is named by several ghost "
                          "entries (which one would win is undefined); use STF_ADD_VALUES");
  return STF_SUCCESS;
}

// Every rank needs every entry (all), or rank 0 does (to zero): global 0..N-1.
int create_gathered(MPI_Comm comm, stf_int nowned, bool all, stf_vecscatter *vs) {
  if (nowned < 0) return stf_apps::fail(STF_ERR_ARG, "nowned = %d < 0", nowned);
  long long total = nowned;
  if (MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_LONG_LONG, MPI_SUM, comm) != MPI_SUCCESS)
    return stf_apps::fail(STF_ERR_MPI, "MPI_Allreduce failed");
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (total > 0x7fffffff) return stf_apps::fail(STF_ERR_ARG, "%lld entries: more than 2^31 - 1", total);
  const stf_int n = all || rank == 0 ? static_cast<stf_int>(total) : 0;
  std::vector<stf_gint> global(n);
  for (stf_int i = 0; i < n; i++) global[i] = i;
  return stf_vecscatter_create(comm, nowned, n, global.data(), vs);
}

// Every rank's code when one rank's may differ: the largest, and for the
// ranks whose own is success a message naming where it came from.
int agree(MPI_Comm comm, int rc, const char *what) {
  int worst = rc;
  if (MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
    return stf_apps::fail(STF_ERR_MPI, "%s: MPI_Allreduce failed", what);
  if (worst && !rc) return stf_apps::fail(worst, "%s: failed on another rank", what);
  return rc ? rc : worst;
}

// The general scatter's SF: each pair travels to the owner of its y entry
// (a migration SF), which then reads x[ix] there as leaf slot y-offset.
int create_general(MPI_Comm comm, stf_int nx, stf_int ny, stf_int n, const stf_gint *ix, const stf_gint *iy,
                   stf_sf *out) {
  std::vector<stf_node> yowner(n);
  if (int rc = core(stf_layout_find_owners(comm, ny, n, iy, yowner.data()), "vecscatter_create_general")) return rc;
  std::vector<int> target(n);
  std::vector<stf_int> yoffset(n);
  for (stf_int k = 0; k < n; k++) target[k] = yowner[k].rank, yoffset[k] = yowner[k].index;
  stf_sf move = nullptr, fromx = nullptr;
  stf_int nnew = 0;
  int rc = core(stf_create_migration(comm, n, target.data(), &move, &nnew), "vecscatter_create_general");
  std::vector<stf_int> slot;
  std::vector<stf_gint> xglobal;
  if (!rc) {
    slot.resize(nnew);
    xglobal.resize(nnew);
    rc = core(stf_bcast(move, MPI_INT, yoffset.data(), slot.data(), MPI_REPLACE), "vecscatter_create_general");
  }
  if (!rc) rc = core(stf_bcast(move, MPI_INT64_T, ix, xglobal.data(), MPI_REPLACE), "vecscatter_create_general");
  if (move) stf_destroy(&move);
  if (!rc) rc = core(stf_create_from_global_indices(comm, nx, nnew, xglobal.data(), &fromx), "vecscatter_create_general");
  if (rc) return rc;
  const stf_node *roots = nullptr;
  stf_get_graph(fromx, nullptr, nullptr, nullptr, &roots);
  rc = core(stf_create(comm, out), "vecscatter_create_general");
  if (!rc) rc = core(stf_set_graph(*out, nx, nnew, slot.data(), STF_COPY_VALUES, roots, STF_COPY_VALUES),
                     "vecscatter_create_general: an entry of y named by two pairs?");
  stf_destroy(&fromx);
  rc = agree(comm, rc, "vecscatter_create_general");
  if (rc && *out) stf_destroy(out);
  return rc;
}

}  // namespace

extern "C" int stf_vecscatter_create_general(MPI_Comm comm, stf_int nx, stf_int ny, stf_int n, const stf_gint *ix,
                                             const stf_gint *iy, stf_vecscatter *vs) try {
  if (!vs) return stf_apps::fail(STF_ERR_NULL, "output pointer is NULL");
  *vs = nullptr;
  // Checked on every rank before any collective, so that no rank waits.
  int rc = STF_SUCCESS;
  if (nx < 0 || ny < 0 || n < 0) rc = stf_apps::fail(STF_ERR_ARG, "vecscatter_create_general: nx = %d, ny = %d, n = %d: counts must be >= 0", nx, ny, n);
  else if (n > 0 && (!ix || !iy)) rc = stf_apps::fail(STF_ERR_NULL, "vecscatter_create_general: ix or iy is NULL with n = %d", n);
  if ((rc = agree(comm, rc, "vecscatter_create_general"))) return rc;
  stf_vecscatter v = new (std::nothrow) stf_vecscatter_s;
  if (!v) return stf_apps::fail(STF_ERR_MEMORY, "cannot allocate a vector scatter");
  if ((rc = create_general(comm, nx, ny, n, ix, iy, &v->sf))) {
    delete v;
    return rc;
  }
  *vs = v;
  return STF_SUCCESS;
} STF_APPS_CATCH

extern "C" int stf_vecscatter_create_to_all(MPI_Comm comm, stf_int nowned, stf_vecscatter *vs) try {
  return create_gathered(comm, nowned, true, vs);
} STF_APPS_CATCH

extern "C" int stf_vecscatter_create_to_zero(MPI_Comm comm, stf_int nowned, stf_vecscatter *vs) try {
  return create_gathered(comm, nowned, false, vs);
} STF_APPS_CATCH

extern "C" int stf_vecscatter_create(MPI_Comm comm, stf_int nowned, stf_int nneeded, const stf_gint *global,
                                     stf_vecscatter *vs) try {
  if (!vs) return stf_apps::fail(STF_ERR_NULL, "output pointer is NULL");
  *vs = nullptr;
  stf_vecscatter v = new (std::nothrow) stf_vecscatter_s;
  if (!v) return stf_apps::fail(STF_ERR_MEMORY, "cannot allocate a vector scatter");
  int rc = core(stf_create_from_global_indices(comm, nowned, nneeded, global, &v->sf), "vecscatter_create");
  if (rc) {
    delete v;
    return rc;
  }
  *vs = v;
  return STF_SUCCESS;
} STF_APPS_CATCH

extern "C" int stf_vecscatter_destroy(stf_vecscatter *vs) try {
  if (!vs) return stf_apps::fail(STF_ERR_NULL, "pointer to the handle is NULL");
  if (!*vs) return STF_SUCCESS;
  int rc = core(stf_destroy(&(*vs)->sf), "vecscatter_destroy");
  delete *vs;
  *vs = nullptr;
  return rc;
} STF_APPS_CATCH

extern "C" int stf_vecscatter_get_sf(stf_vecscatter vs, stf_sf *sf) try {
  if (int rc = check(vs, STF_INSERT_VALUES)) return rc;
  if (!sf) return stf_apps::fail(STF_ERR_NULL, "output SF pointer is NULL");
  *sf = vs->sf;
  return STF_SUCCESS;
} STF_APPS_CATCH

extern "C" int stf_vecscatter_forward_begin(stf_vecscatter vs, MPI_Datatype unit, const void *owned, void *ghost,
                                            stf_insert_mode mode, stf_request *req) try {
  if (int rc = check(vs, mode)) return rc;
  return core(stf_bcast_begin(vs->sf, unit, owned, ghost, op_of(mode), req), "vecscatter_forward_begin");
} STF_APPS_CATCH

extern "C" int stf_vecscatter_forward_end(stf_vecscatter vs, stf_request *req) try {
  if (int rc = check(vs, STF_INSERT_VALUES)) return rc;
  return core(stf_bcast_end(vs->sf, req), "vecscatter_forward_end");
} STF_APPS_CATCH

extern "C" int stf_vecscatter_reverse_begin(stf_vecscatter vs, MPI_Datatype unit, const void *ghost, void *owned,
                                            stf_insert_mode mode, stf_request *req) try {
  if (int rc = check(vs, mode)) return rc;
  if (mode == STF_INSERT_VALUES)
    if (int rc = check_insert(vs)) return rc;
  return core(stf_reduce_begin(vs->sf, unit, ghost, owned, op_of(mode), req), "vecscatter_reverse_begin");
} STF_APPS_CATCH

extern "C" int stf_vecscatter_reverse_end(stf_vecscatter vs, stf_request *req) try {
  if (int rc = check(vs, STF_INSERT_VALUES)) return rc;
  return core(stf_reduce_end(vs->sf, req), "vecscatter_reverse_end");
} STF_APPS_CATCH
