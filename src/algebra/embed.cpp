// Embedded SFs: the edges of selected roots or leaf slots, with the original
// numbering, and a plan filtered from the parent's (see plan/subplan.h).
#include <memory>
#include <vector>

#include "algebra/algebra.h"
#include "core/error.h"
#include "plan/subplan.h"

namespace stf {
namespace {

int selection(stf_sf sf, Keep side, stf_int n, const stf_int *selected, std::vector<char> *keep, const char *what) {
  const stf_int space = side == Keep::roots ? sf->nroots : leaf_space(sf);
  const char *noun = side == Keep::roots ? "root" : "leaf slot";
  if (n < 0) return set_error(STF_ERR_ARG, "%s: nselected = %d is negative", what, n);
  if (n > 0 && !selected) return set_error(STF_ERR_NULL, "%s: selected is NULL but nselected = %d", what, n);
  keep->assign(space, 0);
  for (stf_int i = 0; i < n; i++) {
    if (selected[i] < 0 || selected[i] >= space)
      return set_error(STF_ERR_ARG, "%s: selected[%d] = %d is not a %s of rank %d (which has %d)", what, i,
                       selected[i], noun, sf->rank, space);
    (*keep)[selected[i]] = 1;
  }
  return STF_SUCCESS;
}

int embed(stf_sf sf, Keep side, stf_int n, const stf_int *selected, stf_sf *sub, const char *what) {
  STF_CHECK(check_one(sf, sub, what));
  std::vector<char> keep;
  STF_CHECK(agree(sf->comm, selection(sf, side, n, selected, &keep, what)));
  STF_CHECK(set_up(sf));
  stf_sf out = nullptr;
  STF_CHECK(stf_create(sf->comm, &out));
  out->opts = sf->opts;
  auto plan = std::make_unique<Plan>();
  std::vector<char> kept;
  int rc = derive_subplan(*out, *sf, *sf->plan, side, keep, plan.get(), &kept);
  std::vector<stf_int> ilocal;
  std::vector<stf_node> iremote;
  for (stf_int i = 0; i < sf->nleaves && !rc; i++)
    if (kept[sf->leaf_at(i)]) {
      ilocal.push_back(sf->leaf_at(i));
      iremote.push_back(sf->iremote[i]);
    }
  if (!rc)
    rc = stf_set_graph(out, sf->nroots, static_cast<stf_int>(iremote.size()), ilocal.data(), STF_COPY_VALUES,
                       iremote.data(), STF_COPY_VALUES);
  if (!rc) rc = finish_plan(*out, *out, out->opts, plan.get());
  if (!rc) rc = install_plan(out, std::move(plan));
  if (rc) {
    stf_destroy(&out);
    return rc;
  }
  *sub = out;
  return STF_SUCCESS;
}

}  // namespace
}  // namespace stf

extern "C" int stf_create_embedded_roots(stf_sf sf, stf_int nselected, const stf_int *selected, stf_sf *sub) try {
  return stf::embed(sf, stf::Keep::roots, nselected, selected, sub, "stf_create_embedded_roots");
} STF_API_CATCH

extern "C" int stf_create_embedded_leaves(stf_sf sf, stf_int nselected, const stf_int *selected, stf_sf *sub) try {
  return stf::embed(sf, stf::Keep::leaves, nselected, selected, sub, "stf_create_embedded_leaves");
} STF_API_CATCH
