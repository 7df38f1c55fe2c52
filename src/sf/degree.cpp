// Root degrees and the multi-SF (one root slot per leaf), both derived from
// the plan: after set-up every root already knows who points at it.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <vector>

#include "core/error.h"
#include "ops/request.h"
#include "sf/sf.h"

namespace stf {
namespace {

int compute_degree(stf_sf sf) {
  STF_CHECK(ensure_setup(sf));
  if (sf->degree_known) return STF_SUCCESS;
  sf->degree.assign(sf->nroots, 0);
  for (stf_int r : sf->plan->root.idx) sf->degree[r]++;
  for (stf_int r : sf->plan->self_root_idx) sf->degree[r]++;
  sf->degree_known = true;
  return STF_SUCCESS;
}

// Slots of a root are handed out by a fetch-and-add on a counter starting at
// the root's first slot; fetch-and-op applies leaves in (rank, slot) order,
// which is exactly the documented slot order.
// The scratch arrays are gone before the multi-SF is set up, and its graph
// takes the remote array without a copy, so that the peak is the two SFs.
int build_multi(stf_sf sf, stf_sf *multi) {
  STF_CHECK(compute_degree(sf));
  stf_int nslots = 0;
  std::unique_ptr<stf_node, decltype(&std::free)> remote(
      static_cast<stf_node *>(std::malloc(std::max<stf_int>(sf->nleaves, 1) * sizeof(stf_node))), &std::free);
  if (!remote) return set_error(STF_ERR_MEMORY, "stf_get_multi_sf: cannot allocate %d leaves", sf->nleaves);
  {
    std::vector<stf_int> counter(sf->nroots);
    for (stf_int r = 0; r < sf->nroots; r++) {
      counter[r] = nslots;
      nslots += sf->degree[r];
    }
    std::vector<stf_int> ones(sf->maxleaf + 1, 1), slot(sf->maxleaf + 1, -1);
    STF_CHECK(stf_fetch_and_op(sf, MPI_INT, counter.data(), ones.data(), slot.data(), MPI_SUM));
    for (stf_int i = 0; i < sf->nleaves; i++) remote.get()[i] = {sf->iremote[i].rank, slot[sf->leaf_at(i)]};
  }
  STF_CHECK(stf_create(sf->comm, multi));
  (*multi)->opts = sf->opts;
  (*multi)->opts.view = false;  // part of its SF, not a view of its own
  int rc = stf_set_graph(*multi, nslots, sf->nleaves, sf->ilocal, STF_COPY_VALUES, remote.release(), STF_OWN_POINTER);
  if (rc == STF_SUCCESS) rc = stf_setup(*multi);
  if (rc) stf_destroy(multi);
  else (*multi)->owned_by_parent = true;
  return rc;
}

}  // namespace
}  // namespace stf

extern "C" int stf_compute_degree_begin(stf_sf sf, stf_request *req) try {
  if (!req) return stf::set_error(STF_ERR_NULL, "compute_degree_begin: request pointer is NULL");
  *req = nullptr;  // a failed begin leaves no request
  STF_CHECK(stf::check_sf(sf));
  STF_CHECK(stf::compute_degree(sf));
  stf_request r = nullptr;
  STF_CHECK(stf::acquire_request(sf->engine, sf->engine, stf::OpKind::degree, 0, &r));
  *req = stf::handle_of(r);
  return STF_SUCCESS;
} STF_API_CATCH

extern "C" int stf_compute_degree_end(stf_sf sf, stf_request *req, const stf_int **degree) try {
  stf_request r = nullptr;
  STF_CHECK(stf::check_sf(sf));
  STF_CHECK(stf::take_request(sf->engine, req, stf::OpKind::degree, &r));
  stf::release_request(r);
  *req = nullptr;
  if (degree) *degree = sf->degree.data();
  return STF_SUCCESS;
} STF_API_CATCH

extern "C" int stf_compute_degree(stf_sf sf, const stf_int **degree) try {
  stf_request r = nullptr;
  STF_CHECK(stf_compute_degree_begin(sf, &r));
  return stf_compute_degree_end(sf, &r, degree);
} STF_API_CATCH

extern "C" int stf_get_multi_sf(stf_sf sf, stf_sf *multi) try {
  STF_CHECK(stf::check_sf(sf));
  if (!multi) return stf::set_error(STF_ERR_NULL, "output pointer for the multi-SF is NULL");
  if (!sf->multi) STF_CHECK(stf::build_multi(sf, &sf->multi));
  *multi = sf->multi;
  return STF_SUCCESS;
} STF_API_CATCH
