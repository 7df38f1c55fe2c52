// Vector scatter: the SF from owned vector entries to the ghost entries a
// rank asked for, and forward / reverse scatters as bcast / reduce over it.
#include <new>

#include "apps_error.h"

struct stf_vecscatter_s {
  stf_sf sf = nullptr;
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

}  // namespace

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
  if (mode != STF_ADD_VALUES)
    return stf_apps::fail(STF_ERR_ARG, "reverse scatter supports STF_ADD_VALUES only");
  return core(stf_reduce_begin(vs->sf, unit, ghost, owned, MPI_SUM, req), "vecscatter_reverse_begin");
} STF_APPS_CATCH

extern "C" int stf_vecscatter_reverse_end(stf_vecscatter vs, stf_request *req) try {
  if (int rc = check(vs, STF_INSERT_VALUES)) return rc;
  return core(stf_reduce_end(vs->sf, req), "vecscatter_reverse_end");
} STF_APPS_CATCH
