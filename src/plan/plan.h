// The communication plan of an SF, computed once at set-up: which ranks
// exchange how many units, which local slots each message touches, and the
// self part that never goes through MPI.
#pragma once

#include <vector>

#include "core/comm.h"
#include "core/options.h"
#include "core/topology.h"
#include "graph/graph.h"
#include "kernels/kernels.h"
#include "plan/messages.h"

namespace stf {

// A stretch of the self part whose roots and leaves are both consecutive:
// root + i goes to leaf + i for i < n; rest_before units of no run precede it.
struct SelfRun {
  stf_int root, leaf, n, rest_before;
};

struct Plan {
  // Leaf side: per root-owning rank, my leaf slots, ascending.
  Messages leaf;
  // Root side: per leaf-owning rank, my root offsets in that rank's leaf order.
  Messages root;
  // The same index sets as analysed IndexLists (plan/index_analysis.h):
  // contiguous and strided ones carry no array.
  std::vector<IndexList> leaf_lists, root_lists;
  // Root-side message k may be received straight into the user's root array
  // (REPLACE): it is contiguous and no other edge touches its roots.
  std::vector<char> root_recv_direct;
  // Self part: edges whose root is on this rank, in ascending leaf slot order.
  std::vector<stf_int> self_root_idx, self_leaf_idx;
  IndexList self_root, self_leaf;
  // Root i of the self part is leaf slot i: with the same array for roots and
  // leaves, a REPLACE self part has nothing to do.
  bool self_in_place = false;
  // Where the self part as a whole is indexed but mostly long runs (a grid's
  // owned box beside its own periodic ghosts), the host moves it run by run
  // (a memcpy each for REPLACE) and the rest, the units in no run, in order,
  // by self_rest_root and self_rest_leaf (index arrays). Empty otherwise.
  std::vector<SelfRun> self_runs;
  std::vector<stf_int> self_rest_root_idx, self_rest_leaf_idx;
  IndexList self_rest_root, self_rest_leaf;
  // Position of this rank among the root-side peers (for rank-ordered fetch-and-op).
  int self_position = 0;
};

// Collective: discover the reverse direction and build the plan of graph g
// (validation, discovery and index analysis as opts say).
int build_plan(const Comm &comm, const Graph &g, const Options &opts, Plan *plan);
// Everything after discovery: with plan->leaf, plan->root (messages) and the
// self index vectors filled in, derive the index lists and their analysis
// (the only place that does; -stf_pack_opt 0 makes every list indexed) and
// check root offsets. With -stf_validate one allreduce agrees on the offsets
// and on a failure here (out of memory) or earlier (`earlier`: sorting the
// leaves, discovery), so every rank fails; without it they are local. Lets a plan derived from another one
// (sub-SFs, patterns) skip discovery.
int finish_plan(const Comm &comm, const Graph &g, const Options &opts, Plan *plan, int earlier = STF_SUCCESS);
// Collective over each node of t (comm's topology): the plans of several
// graphs of this rank, one per SF on comm's ranks (every rank passes as
// many, in the same order: a strategy's steps). A graph whose root side is
// known (known[k], derived from other plans) takes it; the others' edges
// must stay inside nodes (an edge to another node is an internal error).
// Each rank learns from a sum over its node how many of its node's ranks ask
// it, and one message per peer, on comm's `tag`, carries its requests for
// every graph, each naming its graph: no discovery, nothing across nodes.
// Each plan is finished as by finish_plan without agreeing (opts.validate
// is not read): the caller agrees once for all of them. The node's ranks
// agree before the messages, so that none waits for a rank that failed
// before (earlier, or here): every rank of that node fails.
int build_plans(const Comm &comm, const Topology &t, Tag tag, const std::vector<const Graph *> &graphs,
                const std::vector<const Messages *> &known, const Options &opts, const std::vector<Plan *> &plans,
                int earlier = STF_SUCCESS);

}  // namespace stf
