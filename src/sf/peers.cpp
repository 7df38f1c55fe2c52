// stf_get_root_ranks / stf_get_leaf_ranks: who this rank's leaves read from,
// and whose leaves read this rank's roots, with the local slots per peer.
// Built on first call, kept until reset.
#include <algorithm>
#include <numeric>

#include "core/error.h"
#include "sf/sf.h"

namespace stf {
namespace {

// From the graph alone: leaves sorted by (root rank, leaf slot), the order
// the plan sends them in.
void build_root_peers(const Graph &g, PeerLists *p) {
  std::vector<stf_int> order(g.nleaves);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&g](stf_int a, stf_int b) {
    const int ra = g.iremote[a].rank, rb = g.iremote[b].rank;
    return ra != rb ? ra < rb : g.leaf_at(a) < g.leaf_at(b);
  });
  p->offset.assign(1, 0);
  for (stf_int i : order) {
    if (p->ranks.empty() || p->ranks.back() != g.iremote[i].rank) {
      p->ranks.push_back(g.iremote[i].rank);
      p->offset.push_back(p->offset.back());
    }
    p->local.push_back(g.leaf_at(i));
    p->remote.push_back(g.iremote[i].index);
    p->offset.back()++;
  }
  p->known = true;
}

// From the plan: its root-side messages, with the self part at its rank's place.
void build_leaf_peers(int me, const Plan &plan, PeerLists *p) {
  const Messages &m = plan.root;
  p->offset.assign(1, 0);
  auto add = [p](int rank, const stf_int *first, const stf_int *last) {
    p->ranks.push_back(rank);
    p->local.insert(p->local.end(), first, last);
    p->offset.push_back(static_cast<stf_int>(p->local.size()));
  };
  for (int k = 0; k <= m.count(); k++) {
    if (k == plan.self_position && !plan.self_root_idx.empty())
      add(me, plan.self_root_idx.data(), plan.self_root_idx.data() + plan.self_root_idx.size());
    if (k < m.count()) add(m.ranks[k], m.idx.data() + m.offset[k], m.idx.data() + m.offset[k + 1]);
  }
  p->known = true;
}

void hand_out(const PeerLists &p, int *nranks, const int **ranks, const stf_int **offset, const stf_int **local) {
  if (nranks) *nranks = static_cast<int>(p.ranks.size());
  if (ranks) *ranks = p.ranks.data();
  if (offset) *offset = p.offset.data();
  if (local) *local = p.local.data();
}

}  // namespace
}  // namespace stf

extern "C" int stf_get_root_ranks(stf_sf sf, int *nranks, const int **ranks, const stf_int **offset,
                                  const stf_int **leaves, const stf_int **roots) try {
  STF_CHECK(stf::check_graph(sf));
  if (!sf->root_peers.known) stf::build_root_peers(*sf, &sf->root_peers);
  stf::hand_out(sf->root_peers, nranks, ranks, offset, leaves);
  if (roots) *roots = sf->root_peers.remote.data();
  return STF_SUCCESS;
} STF_API_CATCH

extern "C" int stf_get_leaf_ranks(stf_sf sf, int *nranks, const int **ranks, const stf_int **offset,
                                  const stf_int **roots) try {
  STF_CHECK(stf::ensure_setup(sf));
  if (!sf->leaf_peers.known) stf::build_leaf_peers(sf->rank, *sf->plan, &sf->leaf_peers);
  stf::hand_out(sf->leaf_peers, nranks, ranks, offset, roots);
  return STF_SUCCESS;
} STF_API_CATCH
