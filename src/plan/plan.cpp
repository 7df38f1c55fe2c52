#include "plan/plan.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <new>
#include <numeric>
#include <utility>

#include "core/error.h"
#include "plan/discovery.h"
#include "plan/index_analysis.h"

namespace stf {

namespace {

// Sort leaves by (root rank, leaf slot): the order in which messages are
// packed, and the order fetch-and-op contributions are applied at the root.
void group_leaves(int me, const Graph &g, Plan *plan, Messages *wanted) {
  std::vector<stf_int> order(g.nleaves);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&g](stf_int a, stf_int b) {
    int ra = g.iremote[a].rank, rb = g.iremote[b].rank;
    return ra != rb ? ra < rb : g.leaf_at(a) < g.leaf_at(b);
  });
  for (stf_int i : order) {
    int r = g.iremote[i].rank;
    if (r == me) {
      plan->self_leaf_idx.push_back(g.leaf_at(i));
      plan->self_root_idx.push_back(g.iremote[i].index);
      continue;
    }
    if (plan->leaf.ranks.empty() || plan->leaf.ranks.back() != r) {
      plan->leaf.ranks.push_back(r);
      plan->leaf.offset.push_back(plan->leaf.offset.back());
      wanted->ranks.push_back(r);
      wanted->offset.push_back(wanted->offset.back());
    }
    plan->leaf.idx.push_back(g.leaf_at(i));
    plan->leaf.offset.back()++;
    wanted->idx.push_back(g.iremote[i].index);
    wanted->offset.back()++;
  }
}

// The first root offset asked of this rank past its nroots (offset -1:
// none), and the rank whose leaf asked for it.
struct BadRoot {
  stf_int offset = -1;
  int asker = -1;
};
BadRoot find_bad_root(const Comm &comm, const Graph &g, const Plan &plan) {
  for (int k = 0; k < plan.root.count(); k++)
    for (stf_int j = plan.root.offset[k]; j < plan.root.offset[k + 1]; j++)
      if (plan.root.idx[j] >= g.nroots) return {plan.root.idx[j], plan.root.ranks[k]};
  for (stf_int r : plan.self_root_idx)
    if (r >= g.nroots) return {r, comm.rank};
  return {};
}

// Root offsets asked for must exist. Always checked locally (so a bad graph
// never corrupts memory); with -stf_validate the verdict is made collective,
// together with `earlier`, a failure of this rank's plan so far (out of
// memory), so that the ranks fail together instead of some waiting in the
// transport's set-up or the first operation for a rank that gave up.
int agree_on_plan(const Comm &comm, const Graph &g, bool validate, const BadRoot &bad, int earlier) {
  // 1 + its code: a failure here (codes are positive), 1: a bad offset
  // here; and the lowest rank with the worst.
  struct {
    int what, rank;
  } local = {earlier ? 1 + earlier : bad.offset >= 0 ? 1 : 0, comm.rank}, any = local;
  if (validate) STF_MPI(MPI_Allreduce(&local, &any, 1, MPI_2INT, MPI_MAXLOC, comm.comm));
  if (earlier) return earlier;
  if (local.what)
    return set_error(STF_ERR_OFFSET, "rank %d has a leaf on root %d of rank %d, which owns only %d roots",
                     bad.asker, bad.offset, comm.rank, g.nroots);
  if (any.what > 1) return set_error(any.what - 1, "set-up: rank %d failed (its message says why)", any.rank);
  if (any.what) return set_error(STF_ERR_OFFSET, "another rank's graph has a root offset past its owner's nroots");
  return STF_SUCCESS;
}

// Which root-side messages are contiguous ranges of roots that no other edge
// touches. Edges are counted per range (one per peer at most), not per
// root: nroots may be any int, and a scratch array of nroots counters could
// be far larger than the graph.
std::vector<char> exclusive_ranges(const Plan &plan) {
  struct Range {
    stf_int start, end;
    std::size_t list;
    stf_int edges = 0;
  };
  std::vector<Range> ranges;
  for (std::size_t k = 0; k < plan.root_lists.size(); k++) {
    const IndexList &l = plan.root_lists[k];
    if (l.kind == IndexKind::contiguous && l.n > 0) ranges.push_back({l.start, l.start + l.n, k});
  }
  std::sort(ranges.begin(), ranges.end(), [](const Range &a, const Range &b) { return a.start < b.start; });
  std::vector<char> direct(plan.root_lists.size(), 0);
  // Ranges that overlap share a root. A range that overlaps none owns its
  // roots: their edges are counted on the last range starting at or before
  // the root, which is that range.
  std::vector<char> overlaps(ranges.size(), 0);
  stf_int reach = std::numeric_limits<stf_int>::min();  // largest end of the ranges so far
  for (std::size_t i = 0; i < ranges.size(); i++) {
    const bool next = i + 1 < ranges.size() && ranges[i + 1].start < ranges[i].end;
    overlaps[i] = ranges[i].start < reach || next;
    reach = std::max(reach, ranges[i].end);
  }
  auto count = [&ranges](stf_int root) {
    auto after = std::upper_bound(ranges.begin(), ranges.end(), root,
                                  [](stf_int r, const Range &x) { return r < x.start; });
    if (after != ranges.begin() && root < std::prev(after)->end) std::prev(after)->edges++;
  };
  for (stf_int r : plan.root.idx) count(r);
  for (stf_int r : plan.self_root_idx) count(r);
  for (std::size_t i = 0; i < ranges.size(); i++)
    direct[ranges[i].list] = !overlaps[i] && ranges[i].edges == ranges[i].end - ranges[i].start;
  return direct;
}

// The self part's runs of at least kMinRun units (plan.h), kept where they
// hold at least half of its units: shorter runs cost a call more than their
// copy saves.
void cut_self_runs(Plan *plan) {
  constexpr stf_int kMinRun = 16;
  const std::vector<stf_int> &root = plan->self_root_idx, &leaf = plan->self_leaf_idx;
  const stf_int n = static_cast<stf_int>(root.size());
  std::vector<SelfRun> runs;
  std::vector<stf_int> rest_root, rest_leaf;
  stf_int in_runs = 0;
  for (stf_int i = 0, j = 0; i < n; i = j) {
    for (j = i + 1; j < n && root[j] == root[j - 1] + 1 && leaf[j] == leaf[j - 1] + 1;) j++;
    if (j - i >= kMinRun) {
      runs.push_back({root[i], leaf[i], j - i, static_cast<stf_int>(rest_root.size())});
      in_runs += j - i;
      continue;
    }
    rest_root.insert(rest_root.end(), root.begin() + i, root.begin() + j);
    rest_leaf.insert(rest_leaf.end(), leaf.begin() + i, leaf.begin() + j);
  }
  if (2 * in_runs < n) return;
  plan->self_runs = std::move(runs);
  plan->self_rest_root_idx = std::move(rest_root);
  plan->self_rest_leaf_idx = std::move(rest_leaf);
  const stf_int nrest = static_cast<stf_int>(plan->self_rest_root_idx.size());
  plan->self_rest_root = analyze_indices(plan->self_rest_root_idx.data(), nrest, false);
  plan->self_rest_leaf = analyze_indices(plan->self_rest_leaf_idx.data(), nrest, false);
}

void classify(Plan *plan, bool optimise) {
  auto analyze = [optimise](const std::vector<stf_int> &v, stf_int from, stf_int n) {
    return analyze_indices(v.data() + from, n, optimise);
  };
  for (int k = 0; k < plan->leaf.count(); k++)
    plan->leaf_lists.push_back(analyze(plan->leaf.idx, plan->leaf.offset[k], plan->leaf.size(k)));
  for (int k = 0; k < plan->root.count(); k++)
    plan->root_lists.push_back(analyze(plan->root.idx, plan->root.offset[k], plan->root.size(k)));
  const stf_int nself = static_cast<stf_int>(plan->self_root_idx.size());
  plan->self_root = analyze(plan->self_root_idx, 0, nself);
  plan->self_leaf = analyze(plan->self_leaf_idx, 0, nself);
  plan->self_in_place = optimise && plan->self_root_idx == plan->self_leaf_idx;
  if (optimise && (plan->self_root.kind == IndexKind::indexed || plan->self_leaf.kind == IndexKind::indexed))
    cut_self_runs(plan);

  plan->root_recv_direct = exclusive_ranges(*plan);
}

}  // namespace

int build_plan(const Comm &comm, const Graph &g, const Options &opts, Plan *plan) {
  Messages wanted{{}, {}, {}};  // empty, allocating nothing (an empty offset is a valid empty list)
  int rc = STF_SUCCESS;
  try {
    wanted = Messages();
    group_leaves(comm.rank, g, plan, &wanted);
  } catch (const std::bad_alloc &) {
    // Still take part in the discovery, asking for nothing: the others'
    // requests to this rank are matched and the failure agreed below.
    rc = set_error(STF_ERR_MEMORY, "set-up: out of memory sorting %d leaves by root rank", g.nleaves);
    wanted = Messages{{}, {}, {}};
  }
  int found = STF_SUCCESS;
  try {
    found = discover(comm, opts.twosided, wanted, &plan->root);
  } catch (...) {
    found = exception_error();  // after it has taken part: the others are not left in it
  }
  return finish_plan(comm, g, opts, plan, rc ? rc : found);
}

namespace {

// finish_plan, with validation as given.
int finish(const Comm &comm, const Graph &g, bool pack_opt, bool validate, Plan *plan, int earlier) {
  int rc = earlier;
  const BadRoot bad = rc ? BadRoot() : find_bad_root(comm, g, *plan);
  // Only valid offsets are analysed: the analysis may compute offset + 1.
  if (!rc && bad.offset < 0) try {
      classify(plan, pack_opt);
    } catch (const std::bad_alloc &) {
      rc = set_error(STF_ERR_MEMORY, "set-up: out of memory analysing the message index lists");
    }
  STF_CHECK(agree_on_plan(comm, g, validate, bad, rc));
  plan->self_position = static_cast<int>(
      std::lower_bound(plan->root.ranks.begin(), plan->root.ranks.end(), comm.rank) - plan->root.ranks.begin());
  return STF_SUCCESS;
}

// One message per peer for all graphs: (graph, count, root offsets) each.
void merge_requests(const std::vector<Messages> &per_graph, Messages *out) {
  std::map<int, std::vector<stf_int>> to;
  for (std::size_t k = 0; k < per_graph.size(); k++) {
    const Messages &m = per_graph[k];
    for (int p = 0; p < m.count(); p++) {
      std::vector<stf_int> &msg = to[m.ranks[p]];
      msg.insert(msg.end(), {static_cast<stf_int>(k), m.size(p)});
      msg.insert(msg.end(), m.idx.begin() + m.offset[p], m.idx.begin() + m.offset[p + 1]);
    }
  }
  for (const auto &rm : to) out->add(rm.first, rm.second.begin(), rm.second.end());
}

// The inverse on the receiving side: each graph's root side, ranks ascending
// as the asking ranks are.
int split_requests(const Messages &asked, const std::vector<Plan *> &plans) {
  const stf_int n = static_cast<stf_int>(plans.size());
  for (int a = 0; a < asked.count(); a++)
    for (stf_int i = asked.offset[a]; i < asked.offset[a + 1];) {
      const stf_int k = asked.idx[i], len = i + 1 < asked.offset[a + 1] ? asked.idx[i + 1] : -1;
      if (k < 0 || k >= n || len < 0 || i + 2 + len > asked.offset[a + 1])
        return set_error(STF_ERR_INTERNAL, "set-up: rank %d sent a malformed request for %d graphs", asked.ranks[a],
                         static_cast<int>(n));
      plans[k]->root.add(asked.ranks[a], asked.idx.begin() + i + 2, asked.idx.begin() + i + 2 + len);
      i += 2 + len;
    }
  return STF_SUCCESS;
}

}  // namespace

int build_plans(const Comm &comm, const Topology &t, Tag tag, const std::vector<const Graph *> &graphs,
                const std::vector<const Messages *> &known, const Options &opts, const std::vector<Plan *> &plans,
                int earlier) {
  int rc = earlier;
  Messages wanted{{}, {}, {}}, asked{{}, {}, {}};  // empty, allocating nothing
  std::vector<int> askers;  // per local rank: 1 where I ask it
  std::vector<MPI_Request> sends;
  if (!rc) try {
      std::vector<Messages> per_graph(graphs.size());
      for (std::size_t k = 0; k < graphs.size(); k++) {
        group_leaves(comm.rank, *graphs[k], plans[k], &per_graph[k]);
        if (!known[k]) continue;
        plans[k]->root = *known[k];
        per_graph[k] = Messages();
      }
      wanted = Messages();
      merge_requests(per_graph, &wanted);
      askers.assign(t.local_size, 0);
      sends.resize(wanted.count());
      for (int r : wanted.ranks) {
        if (!t.same_node(r)) {
          rc = set_error(STF_ERR_INTERNAL, "set-up: rank %d has a step edge to rank %d, on another node", comm.rank, r);
          break;
        }
        askers[t.local_rank_of[r]] = 1;
      }
    } catch (...) {
      rc = exception_error();
    }
  // A rank of my node that failed would not send what the others wait for.
  STF_CHECK(agree(t.node_comm, rc, t.node_ranks.data() + t.node_offset[t.node]));
  int expected = 0;
  STF_MPI(MPI_Reduce_scatter_block(askers.data(), &expected, 1, MPI_INT, MPI_SUM, t.node_comm));
  try {
    rc = exchange_known(comm, expected, wanted, sends.data(), &asked, tag);
    if (!rc) rc = split_requests(asked, plans);
  } catch (...) {
    if (!rc) rc = exception_error();  // after it has taken part
  }
  STF_CHECK(rc);
  for (std::size_t k = 0; k < graphs.size(); k++)
    STF_CHECK(finish(comm, *graphs[k], opts.pack_opt, false, plans[k], STF_SUCCESS));
  return STF_SUCCESS;
}

int finish_plan(const Comm &comm, const Graph &g, const Options &opts, Plan *plan, int earlier) {
  return finish(comm, g, opts.pack_opt, opts.validate, plan, earlier);
}

}  // namespace stf
