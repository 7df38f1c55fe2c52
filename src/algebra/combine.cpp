// Combining SFs: concatenation, merge, strided copies. Leaves keep their
// roots' ranks except where the root space itself is renumbered globally.
#include <algorithm>
#include <climits>
#include <vector>

#include "algebra/algebra.h"
#include "core/error.h"

namespace stf {
namespace {

// New index of every leaf's root (per leaf slot of sfs[i]) under root_mode.
// LOCAL: the owner's offset of sfs[i] in its stack travels over sfs[i].
// GLOBAL: every rank knows every layout (O(size) each, like MPI_Allgatherv).
int renumber_roots(int n, const stf_sf sfs[], stf_concat_roots mode, std::vector<std::vector<stf_node>> *roots,
                   stf_int *nroots) {
  stf_sf first = sfs[0];
  std::vector<long long> result_start, start;
  stf_int mine = 0;
  for (int i = 0; i < n; i++) mine += sfs[i]->nroots;  // checked against overflow by the caller
  *nroots = mode == STF_CONCAT_ROOTS_SHARED ? first->nroots : mine;
  if (mode == STF_CONCAT_ROOTS_GLOBAL) STF_CHECK(agree(first->comm, layout_starts(first->comm, mine, &result_start)));
  long long before = 0;  // STF_CONCAT_ROOTS_LOCAL: my stack offset; GLOBAL: global roots of sfs[0..i)
  for (int i = 0; i < n; i++) {
    stf_sf sf = sfs[i];
    std::vector<stf_node> &at = (*roots)[i];
    at.assign(leaf_space(sf), kNoNode);
    for (stf_int l = 0; l < sf->nleaves; l++) at[sf->leaf_at(l)] = sf->iremote[l];
    if (mode == STF_CONCAT_ROOTS_LOCAL) {
      STF_CHECK(set_up(sf));
      std::vector<stf_int> offset(sf->nroots, static_cast<stf_int>(before)), got(leaf_space(sf));
      STF_CHECK(stf_bcast(sf, MPI_INT, offset.data(), got.data(), MPI_REPLACE));
      for (stf_int l = 0; l < sf->nleaves; l++) at[sf->leaf_at(l)].index += got[sf->leaf_at(l)];
      before += sf->nroots;
    } else if (mode == STF_CONCAT_ROOTS_GLOBAL) {
      STF_CHECK(layout_starts(sf->comm, sf->nroots, &start));
      std::vector<stf_gint> global(sf->nleaves);
      for (stf_int l = 0; l < sf->nleaves; l++) global[l] = before + start[sf->iremote[l].rank] + sf->iremote[l].index;
      std::vector<stf_node> owner(sf->nleaves);
      STF_CHECK(find_owners(result_start, sf->nleaves, global.data(), owner.data(), "stf_concatenate"));
      for (stf_int l = 0; l < sf->nleaves; l++) at[sf->leaf_at(l)] = owner[l];
      before += start.back();
    }
  }
  return STF_SUCCESS;
}

int check_concatenate(int n, const stf_sf sfs[], const stf_int leaf_offsets[], stf_concat_roots mode,
                      stf_sf *out) {
  const char *what = "stf_concatenate";
  if (!out) return set_error(STF_ERR_NULL, "%s: output pointer is NULL", what);
  *out = nullptr;
  if (n < 1) return set_error(STF_ERR_ARG, "%s: n = %d; at least one SF is needed", what, n);
  if (!sfs) return set_error(STF_ERR_NULL, "%s: the SF array is NULL", what);
  for (int i = 0; i < n; i++) STF_CHECK(check_input(sfs[i], what));
  int rc = STF_SUCCESS;
  long long total = 0;
  for (int i = 0; i < n && !rc; i++) {
    total += sfs[i]->nroots;
    rc = check_same_comm(sfs[0], sfs[i], what);
    if (!rc && mode == STF_CONCAT_ROOTS_SHARED && sfs[i]->nroots != sfs[0]->nroots)
      rc = set_error(STF_ERR_ARG, "%s: shared roots, but SF %d has %d roots on rank %d and SF 0 has %d", what, i,
                     sfs[i]->nroots, sfs[0]->rank, sfs[0]->nroots);
    if (!rc && leaf_offsets && leaf_offsets[i] < 0)
      rc = set_error(STF_ERR_ARG, "%s: leaf_offsets[%d] = %d is negative", what, i, leaf_offsets[i]);
  }
  // The leaf slots of the result, checked before they are narrowed to
  // stf_int (a slot that overflowed was reported as negative).
  long long offset = 0;
  for (int i = 0; i < n && !rc; i++) {
    if (leaf_offsets) offset = leaf_offsets[i];
    const long long last = offset + leaf_space(sfs[i]) - 1;
    if (leaf_space(sfs[i]) > 0 && last > INT_MAX - 1)
      rc = set_error(STF_ERR_ARG, "%s: SF %d's leaves at offset %lld reach slot %lld on rank %d, above the largest "
                     "leaf slot (INT_MAX - 1)", what, i, offset, last, sfs[0]->rank);
    offset += leaf_space(sfs[i]);
  }
  if (!rc && mode != STF_CONCAT_ROOTS_LOCAL && mode != STF_CONCAT_ROOTS_SHARED && mode != STF_CONCAT_ROOTS_GLOBAL)
    rc = set_error(STF_ERR_ARG, "%s: unknown root mode %d", what, static_cast<int>(mode));
  if (!rc && total > INT_MAX) rc = set_error(STF_ERR_ARG, "%s: %lld roots on rank %d in all", what, total, sfs[0]->rank);
  return agree(sfs[0]->comm, rc);
}

}  // namespace
}  // namespace stf

using namespace stf;

extern "C" int stf_concatenate(int n, const stf_sf sfs[], const stf_int leaf_offsets[], stf_concat_roots root_mode,
                               stf_sf *out) try {
  STF_CHECK(check_concatenate(n, sfs, leaf_offsets, root_mode, out));
  std::vector<std::vector<stf_node>> roots(n);
  stf_int nroots = 0;
  STF_CHECK(renumber_roots(n, sfs, root_mode, &roots, &nroots));
  std::vector<stf_int> ilocal;
  std::vector<stf_node> iremote;
  long long offset = 0;
  for (int i = 0; i < n; i++) {
    if (leaf_offsets) offset = leaf_offsets[i];
    for (stf_int s = 0; s < leaf_space(sfs[i]); s++)
      if (roots[i][s].rank >= 0) {
        ilocal.push_back(static_cast<stf_int>(offset + s));
        iremote.push_back(roots[i][s]);
      }
    offset += leaf_space(sfs[i]);
  }
  return new_sf(sfs[0]->comm, sfs[0]->opts, nroots, static_cast<stf_int>(iremote.size()), ilocal.data(),
                iremote.data(), out);
} STF_API_CATCH

extern "C" int stf_merge(stf_sf a, stf_sf b, stf_sf *c) try {
  const char *what = "stf_merge";
  STF_CHECK(check_pair(a, b, c, what));
  int rc = check_same_comm(a, b, what);
  if (!rc && a->nroots != b->nroots)
    rc = set_error(STF_ERR_ARG, "%s: A has %d roots on rank %d but B has %d", what, a->nroots, a->rank, b->nroots);
  STF_CHECK(agree(a->comm, rc));
  std::vector<stf_node> at(std::max(leaf_space(a), leaf_space(b)), kNoNode);
  for (stf_int i = 0; i < a->nleaves; i++) at[a->leaf_at(i)] = a->iremote[i];
  for (stf_int i = 0; i < b->nleaves; i++) at[b->leaf_at(i)] = b->iremote[i];  // B wins
  return sf_from_slots(a, a->nroots, at, c);
} STF_API_CATCH

extern "C" int stf_create_strided(stf_sf sf, stf_int bs, stf_int ldr, stf_int ldl, stf_sf *out) try {
  const char *what = "stf_create_strided";
  STF_CHECK(check_one(sf, out, what));
  if (ldr < 0) ldr = sf->nroots;
  if (ldl < 0) ldl = leaf_space(sf);
  int rc = STF_SUCCESS;
  if (bs < 1) rc = set_error(STF_ERR_ARG, "%s: bs = %d; at least one copy is needed", what, bs);
  else if (ldr < sf->nroots)
    rc = set_error(STF_ERR_ARG, "%s: ldr = %d on rank %d is less than nroots = %d", what, ldr, sf->rank, sf->nroots);
  else if (ldl < leaf_space(sf))
    rc = set_error(STF_ERR_ARG, "%s: ldl = %d on rank %d is less than maxleaf + 1 = %d", what, ldl, sf->rank,
                   leaf_space(sf));
  else if (static_cast<long long>(bs) * std::max(ldr, ldl) > INT_MAX)
    rc = set_error(STF_ERR_ARG, "%s: bs * ld = %lld on rank %d does not fit in stf_int", what,
                   static_cast<long long>(bs) * std::max(ldr, ldl), sf->rank);
  STF_CHECK(agree(sf->comm, rc));
  STF_CHECK(set_up(sf));
  // Each leaf needs its root owner's ldr.
  std::vector<stf_int> owner_ldr(sf->nroots, ldr), got(leaf_space(sf));
  STF_CHECK(stf_bcast(sf, MPI_INT, owner_ldr.data(), got.data(), MPI_REPLACE));
  std::vector<stf_int> ilocal;
  std::vector<stf_node> iremote;
  for (stf_int c = 0; c < bs; c++)
    for (stf_int i = 0; i < sf->nleaves; i++) {
      stf_int s = sf->leaf_at(i);
      ilocal.push_back(c * ldl + s);
      iremote.push_back({sf->iremote[i].rank, c * got[s] + sf->iremote[i].index});
    }
  return new_sf(sf->comm, sf->opts, bs * ldr, static_cast<stf_int>(iremote.size()), ilocal.data(), iremote.data(),
                out);
} STF_API_CATCH
