// Composition and inversion: the new graphs are found by moving root
// identities (rank, offset) over the input SFs with ordinary operations.
#include <algorithm>
#include <vector>

#include "algebra/algebra.h"
#include "core/error.h"

namespace stf {
namespace {

// Identities of sf's roots, as a root buffer: root r of this rank is (rank, r).
std::vector<stf_node> root_identities(stf_sf sf) {
  std::vector<stf_node> id(sf->nroots);
  for (stf_int r = 0; r < sf->nroots; r++) id[r] = {sf->rank, r};
  return id;
}

}  // namespace
}  // namespace stf

using namespace stf;

extern "C" int stf_compose(stf_sf a, stf_sf b, stf_sf *out) try {
  const char *what = "stf_compose";
  STF_CHECK(check_pair(a, b, out, what));
  int rc = check_same_comm(a, b, what);
  if (!rc && leaf_space(a) > b->nroots)
    rc = set_error(STF_ERR_ARG, "%s: A has leaf slot %d on rank %d but B has only %d roots there", what,
                   a->maxleaf, a->rank, b->nroots);
  STF_CHECK(agree(a->comm, rc));
  STF_CHECK(set_up(a));
  STF_CHECK(set_up(b));
  // A's roots reach B's roots (A's leaves), then B's leaves.
  std::vector<stf_node> mid(b->nroots, kNoNode), end(leaf_space(b), kNoNode);
  std::vector<stf_node> id = root_identities(a);
  STF_CHECK(stf_bcast(a, STF_MPI_NODE, id.data(), mid.data(), MPI_REPLACE));
  STF_CHECK(stf_bcast(b, STF_MPI_NODE, mid.data(), end.data(), MPI_REPLACE));
  return sf_from_slots(a, a->nroots, end, out);
} STF_API_CATCH

extern "C" int stf_compose_inverse(stf_sf a, stf_sf b, stf_sf *out) try {
  const char *what = "stf_compose_inverse";
  STF_CHECK(check_pair(a, b, out, what));
  STF_CHECK(agree(a->comm, check_same_comm(a, b, what)));
  STF_CHECK(set_up(a));
  STF_CHECK(set_up(b));
  STF_CHECK(check_degree_at_most_one(b, what, "B"));
  // A's roots reach the shared leaf slots, then go up B to B's roots; each
  // root of B has at most one leaf, so REPLACE is deterministic.
  std::vector<stf_node> slots(std::max(leaf_space(a), leaf_space(b)), kNoNode), at(b->nroots, kNoNode);
  std::vector<stf_node> id = root_identities(a);
  STF_CHECK(stf_bcast(a, STF_MPI_NODE, id.data(), slots.data(), MPI_REPLACE));
  STF_CHECK(stf_reduce(b, STF_MPI_NODE, slots.data(), at.data(), MPI_REPLACE));
  return sf_from_slots(a, a->nroots, at, out);
} STF_API_CATCH

extern "C" int stf_create_inverse(stf_sf sf, stf_sf *out) try {
  const char *what = "stf_create_inverse";
  STF_CHECK(check_one(sf, out, what));
  STF_CHECK(set_up(sf));
  STF_CHECK(check_degree_at_most_one(sf, what, "the SF"));
  // Every leaf tells its root who it is; the leaf space becomes the root space.
  std::vector<stf_node> leaf_id(leaf_space(sf), kNoNode), at(sf->nroots, kNoNode);
  for (stf_int i = 0; i < sf->nleaves; i++) leaf_id[sf->leaf_at(i)] = {sf->rank, sf->leaf_at(i)};
  STF_CHECK(stf_reduce(sf, STF_MPI_NODE, leaf_id.data(), at.data(), MPI_REPLACE));
  return sf_from_slots(sf, leaf_space(sf), at, out);
} STF_API_CATCH
