// The SF object: its communicator and tags, options, the graph as given, and
// what set-up derives from it: the plan, the transport, the operations'
// run-time state, degrees and the multi-SF. It inherits Comm and Graph so
// that sf->comm, sf->rank, sf->nroots, sf->leaf_at(i) read as before.
#pragma once

#include <atomic>

#include <memory>
#include <vector>

#include "core/comm.h"
#include "core/options.h"
#include "core/topology.h"
#include "graph/graph.h"
#include "ops/engine.h"
#include "ops/operation.h"
#include "plan/plan.h"
#include "sf/strategy.h"
#include "transport/transport.h"

namespace stf {
// Peer ranks and, per peer, the local slots involved (stf_get_root_ranks,
// stf_get_leaf_ranks): peer k's entries are [offset[k], offset[k+1]).
struct PeerLists {
  bool known = false;
  std::vector<int> ranks;
  std::vector<stf_int> offset, local, remote;  // remote: root ranks only
};
}  // namespace stf

struct stf_sf_s : stf::Comm, stf::Graph {
  stf::Options opts;
  std::unique_ptr<stf::Plan> plan;  // built by stf_setup
  const stf::Topology *topology = nullptr;  // set up with the plan; shared, owned by the communicator
  std::unique_ptr<stf::Transport> transport;
  std::unique_ptr<stf::Strategy> strategy;  // node-aware bcast and reduce, when -stf_type names one
  std::string choice;  // -stf_type auto: why opts.type is what it is (set-up sets both)
  const char *auto_set_option = nullptr;  // an option of opts.extra auto set with the type (a reset takes it back)
  stf::Engine engine;               // requests, counters, device index copies
  std::vector<stf_int> degree;      // valid once degree_known
  bool degree_known = false;
  stf_sf multi = nullptr;  // multi-SF, built on demand
  bool owned_by_parent = false;  // this is another SF's multi-SF: stf_destroy refuses it
  stf::PeerLists root_peers, leaf_peers;  // built on demand
  // Set while a begin, end or test runs on this SF (OneCaller): one SF is
  // for one thread at a time, and a second caller is refused.
  std::atomic<bool> in_call{false};
  // Per operation kind, the unit and kernels of the last begin whose type
  // is named and op predefined (handles that are never freed): a begin with
  // the same pair skips the lookups. Touched only inside a call (in_call).
  struct LastResolved {
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_Op op = MPI_OP_NULL;
    stf::Resolved res;
  } last_resolved[stf::kOpKinds];

  const stf::Graph &graph() const { return *this; }
};

namespace stf {
// STF_ERR_NULL for NULL, STF_ERR_STATE for a destroyed SF (sf/lifetime.h);
// check_graph also STF_ERR_STATE without a graph.
int check_sf(stf_sf sf);
int check_graph(stf_sf sf);
// Build plan and transport if not done yet. Collective. agreed: check the
// root offsets collectively even with -stf_validate 0, so that a bad graph
// fails on every rank (the graph algebra, whose errors are all agreed).
int ensure_setup(stf_sf sf, bool agreed = false);
// Give sf a plan (its own, or one made elsewhere: patterns, sub-SFs,
// migration), choose its type if -stf_type auto, create its transport and,
// for a node-aware type, its strategy. Collective. On failure the SF is not
// set up; with -stf_validate every rank fails if one does.
int install_plan(stf_sf sf, std::unique_ptr<Plan> plan);
// A strategy's steps, set up in two parts around the strategy's one
// agreement over sf's communicator. plan_steps plans the n SFs of sfs that
// are not null (made on the communicator of sf, set up, each with its
// graph and sf's options; as many on every rank where none failed so far,
// earlier being this rank's failure) in one exchange of requests inside
// each node (plan.h, build_plans; sf's Tag::steps): known[k], where not
// null, is SF k's root side, derived by the strategy; every other edge
// stays inside its node. Collective over each node: it agrees there first.
int plan_steps(stf_sf sf, const stf_sf *sfs, const Messages *const *known, int n,
               std::vector<std::unique_ptr<Plan>> *plans, int earlier);
// Then, once every rank knows that every plan was made: their transports.
// A failure is this rank's; the SF's own set-up (install_plan) agrees on
// it and clears the steps with the strategy.
int install_steps(const stf_sf *sfs, std::vector<std::unique_ptr<Plan>> *plans);
// Back to an SF that is not set up: the plan, topology, transport, strategy,
// multi-SF and operations' state go; -stf_type auto chooses again (sf.cpp).
void clear_setup(stf_sf sf);
// STF_ERR_OPTION on every rank where the ranks differ in an option that
// must be alike everywhere (the transport and its options, the discovery,
// the emulated nodes, -stf_debug, -stf_log_view). Collective: one allreduce
// (agreed_options.cpp). earlier: this rank's failure before it, made every
// rank's (the largest code).
int agree_on_options(stf_sf sf, int earlier = STF_SUCCESS);
// -stf_log_view's timing summary on rank 0 (stats.cpp). Collective.
void log_view(stf_sf sf);
// Every option the library has, for the parser and the help (options.cpp).
const OptionSpecs &all_option_specs();
}  // namespace stf
