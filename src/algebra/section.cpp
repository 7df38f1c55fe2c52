// Sections: points that own a variable number of data entries. The counts
// and root offsets travel over the point SF; the SF on the entries follows.
#include <algorithm>
#include <climits>
#include <vector>

#include "algebra/algebra.h"
#include "core/error.h"

namespace stf {
namespace {

struct Extent {  // one point's data entries; travels as MPI_2INT
  stf_int count, offset;
};

int check_section(stf_sf sf, const stf_int *root_count, const stf_int *root_offset, const stf_int *leaf_count,
                  const stf_int *leaf_offset, const char *what) {
  if (sf->nroots > 0 && (!root_count || !root_offset))
    return set_error(STF_ERR_NULL, "%s: root_count or root_offset is NULL but rank %d has %d roots", what, sf->rank,
                     sf->nroots);
  if (sf->nleaves > 0 && (!leaf_count || !leaf_offset))
    return set_error(STF_ERR_NULL, "%s: leaf_count or leaf_offset is NULL but rank %d has %d leaves", what,
                     sf->rank, sf->nleaves);
  for (stf_int r = 0; r < sf->nroots; r++)
    if (root_count[r] < 0 || root_offset[r] < 0 || root_offset[r] > INT_MAX - root_count[r])
      return set_error(STF_ERR_ARG, "%s: root %d on rank %d has count %d at offset %d", what, r, sf->rank,
                       root_count[r], root_offset[r]);
  return STF_SUCCESS;
}

}  // namespace
}  // namespace stf

using namespace stf;

extern "C" int stf_distribute_section(stf_sf sf, const stf_int *root_count, const stf_int *root_offset,
                                      stf_int *leaf_count, stf_int *leaf_offset, stf_int *nleafdata,
                                      stf_sf *datasf) try {
  const char *what = "stf_distribute_section";
  STF_CHECK(check_one(sf, datasf, what));
  STF_CHECK(agree(sf->comm, check_section(sf, root_count, root_offset, leaf_count, leaf_offset, what)));
  STF_CHECK(set_up(sf));
  std::vector<Extent> root(sf->nroots), leaf(leaf_space(sf), Extent{0, 0});
  stf_int ndata = 0;  // root data entries: past the last one any root uses
  for (stf_int r = 0; r < sf->nroots; r++) {
    root[r] = {root_count[r], root_offset[r]};
    ndata = std::max(ndata, root_offset[r] + root_count[r]);
  }
  STF_CHECK(stf_bcast(sf, MPI_2INT, root.data(), leaf.data(), MPI_REPLACE));

  // Leaf entries are packed in ascending leaf slot order.
  std::vector<int> owner(leaf_space(sf), -1);
  for (stf_int i = 0; i < sf->nleaves; i++) owner[sf->leaf_at(i)] = sf->iremote[i].rank;
  long long total = 0;
  for (stf_int s = 0; s < leaf_space(sf); s++) {
    leaf_count[s] = leaf[s].count;
    leaf_offset[s] = owner[s] >= 0 ? static_cast<stf_int>(total) : 0;
    total += leaf[s].count;
  }
  STF_CHECK(agree(sf->comm, total > INT_MAX ? set_error(STF_ERR_ARG, "%s: rank %d receives %lld data entries, "
                                                        "more than stf_int can number", what, sf->rank, total)
                                            : STF_SUCCESS));
  std::vector<stf_node> iremote;
  iremote.reserve(total);
  for (stf_int s = 0; s < leaf_space(sf); s++)
    for (stf_int j = 0; j < leaf[s].count; j++) iremote.push_back({owner[s], leaf[s].offset + j});
  if (nleafdata) *nleafdata = static_cast<stf_int>(total);
  return new_sf(sf->comm, sf->opts, ndata, static_cast<stf_int>(total), nullptr, iremote.data(), datasf);
} STF_API_CATCH
