#include "test_algebra_util.h"

#include <algorithm>
#include <numeric>

namespace stft {

void compare_edges(Checker &ck, stf_sf sf, const Edges &want, const char *what) {
  Edges got = edges_of(sf);
  if (!ck.check(got.nroots == want.nroots, "%s: nroots %d, expected %d", what, got.nroots, want.nroots)) return;
  if (!ck.check(got.leaf.size() == want.leaf.size(), "%s: %zu leaves, expected %zu", what, got.leaf.size(),
                want.leaf.size()))
    return;
  for (const auto &kv : want.leaf) {
    auto it = got.leaf.find(kv.first);
    if (!ck.check(it != got.leaf.end(), "%s: leaf slot %d missing", what, kv.first)) return;
    if (!ck.check(it->second.rank == kv.second.rank && it->second.index == kv.second.index,
                  "%s: leaf slot %d -> (%d, %d), expected (%d, %d)", what, kv.first, it->second.rank,
                  it->second.index, kv.second.rank, kv.second.index))
      return;
  }
}

std::vector<LocalGraph> whole_graph(std::uint64_t seed, const std::vector<stf_int> &nroots,
                                    const std::vector<stf_int> &span, bool injective) {
  const int size = static_cast<int>(nroots.size());
  Rng rng(seed);
  std::vector<stf_node> roots;
  for (int p = 0; p < size; ++p)
    for (stf_int r = 0; r < nroots[p]; ++r) roots.push_back({p, r});
  // Root of each leaf, then the rank holding the leaf.
  std::vector<stf_node> picked;
  if (injective) {
    for (std::size_t i = roots.size(); i > 1; --i) std::swap(roots[i - 1], roots[rng.below(i)]);
    picked.assign(roots.begin(), roots.begin() + static_cast<long>(rng.below(roots.size() + 1)));
  } else if (!roots.empty()) {
    std::size_t n = rng.below(2 * roots.size() + 8);
    for (std::size_t i = 0; i < n; ++i) picked.push_back(roots[rng.below(roots.size())]);
  }
  std::vector<std::vector<stf_node>> at(size);
  for (const stf_node &r : picked) at[rng.below(size)].push_back(r);
  std::vector<LocalGraph> g(size);
  for (int p = 0; p < size; ++p) {
    g[p].nroots = nroots[p];
    g[p].contiguous = false;
    stf_int n = static_cast<stf_int>(at[p].size());
    std::vector<stf_int> slots(std::max(span[p], n) + 2);
    std::iota(slots.begin(), slots.end(), 0);
    for (std::size_t i = slots.size(); i > 1; --i) std::swap(slots[i - 1], slots[rng.below(i)]);
    g[p].ilocal.assign(slots.begin(), slots.begin() + n);
    g[p].iremote = at[p];
  }
  return g;
}

std::vector<int> bcast_ints(stf_sf sf, const std::vector<int> &roots, stf_int n) {
  std::vector<int> leaves(n, -1);
  stf_bcast(sf, MPI_INT, roots.data(), leaves.data(), MPI_REPLACE);
  return leaves;
}

void same_ops(Checker &ck, stf_sf got, stf_sf ref, std::uint64_t tag, const char *what) {
  stf_int nroots = 0, lo = 0, hi = -1;
  stf_get_graph(ref, &nroots, nullptr, nullptr, nullptr);
  stf_get_leaf_range(ref, &lo, &hi);
  const int me = ck.rank();
  std::vector<int> roots(nroots), leaves(hi + 1);
  for (stf_int r = 0; r < nroots; ++r) roots[r] = value(tag, me, r);
  for (stf_int s = 0; s <= hi; ++s) leaves[s] = value(tag + 1, me, s);
  auto run = [&](stf_sf sf, std::vector<int> out[5]) {
    out[0] = leaves;  // bcast SUM
    stf_bcast(sf, MPI_INT, roots.data(), out[0].data(), MPI_SUM);
    out[1] = roots;  // reduce SUM
    stf_reduce(sf, MPI_INT, leaves.data(), out[1].data(), MPI_SUM);
    out[2] = roots;  // fetch-and-op SUM: roots and fetched values
    out[3].assign(hi + 1, -7);
    stf_fetch_and_op(sf, MPI_INT, out[2].data(), leaves.data(), out[3].data(), MPI_SUM);
    const stf_int *deg = nullptr;
    int total = 0;
    if (stf_compute_degree(sf, &deg) == STF_SUCCESS)
      for (stf_int r = 0; r < nroots; ++r) total += deg[r];
    out[4].assign(total, -7);  // gather
    stf_gather(sf, MPI_INT, leaves.data(), out[4].data());
  };
  std::vector<int> a[5], b[5];
  run(got, a);
  run(ref, b);
  static const char *names[] = {"bcast", "reduce", "fetch_and_op roots", "fetch_and_op leafupdate", "gather"};
  for (int k = 0; k < 5; ++k) ck.check(a[k] == b[k], "%s: %s differs from the same graph set up by discovery", what, names[k]);
}

}  // namespace stft
