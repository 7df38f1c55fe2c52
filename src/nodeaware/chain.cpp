// Setting up a node-aware strategy's steps (chain.h).
#include "nodeaware/chain.h"

#include <memory>
#include <utility>

#include "core/comm.h"
#include "core/error.h"
#include "transport/registry.h"

namespace stf {
namespace nodeaware {

const char *const step_names[kSteps] = {"L (in node)", "S (to the sender)", "G (between nodes)", "R (forward, first)",
                                        "R (forward, rest)"};

namespace {

bool is_range(const IndexList &l, stf_int n) { return l.n == n && l.kind == IndexKind::contiguous; }
bool touches_nothing(const Plan &p) { return p.self_leaf.n == 0 && p.root.count() == 0 && p.leaf.count() == 0; }

// Chain's aliases and what L and G touch on this rank, from its set-up
// steps. Only steps that carry no message on any rank are aliased: a rank
// may skip those alone.
void find_aliases(Chain *c) {
  if (c->sf[S] && c->self_only[S] && c->send_units > 0) {
    const Plan &p = *c->sf[S]->plan;
    if (is_range(p.self_leaf, c->send_units) && p.self_leaf.start == 0 && is_range(p.self_root, c->send_units))
      c->send_alias = p.self_root.start;
  }
  if (c->sf[R1] && c->self_only[R1] && c->recv_units > 0 && (!c->sf[R2] || touches_nothing(*c->sf[R2]->plan))) {
    const Plan &p = *c->sf[R1]->plan;
    if (is_range(p.self_root, c->recv_units) && p.self_root.start == 0 && is_range(p.self_leaf, c->recv_units))
      c->recv_alias = p.self_leaf.start;
  }
  auto touches_roots = [&](Step k) {
    return c->sf[k] && (c->sf[k]->plan->self_root.n > 0 || c->sf[k]->plan->root.count() > 0);
  };
  c->local_writes_roots = touches_roots(L);
  c->cross_touches_roots = touches_roots(G);
}

// Whether making the used steps' transports is collective (self-only
// steps run on basic).
bool steps_set_up_together(const int *used, const std::string &node_transport, const std::string &net_transport) {
  for (int k = 0; k < kSteps; k++) {
    if (used[k] < 2) continue;
    const TransportKind *kind = find_transport(k == G ? net_transport : node_transport);
    if (!kind || kind->collective_setup) return true;
  }
  return false;
}

}  // namespace

int build_chain(stf_sf sf, NodeAwareKind kind, const std::string &node_transport, const std::string &net_transport,
                stf_int chunk_units, Chain *c, int earlier) {
  // The SF's own summary and view cover the steps: off on every rank, as a
  // summary at destruction is collective (the defaults may have it on). So
  // is -stf_debug's agreement in every begin: the SF's begin agreed
  // already, and a rank may skip a step that carries no message.
  auto quiet = [](stf_sf step) {
    step->opts.log_view = false;
    step->opts.view = false;
    step->opts.debug = false;
  };
  // Every rank makes every step's SF first, also where something failed,
  // so that all take the same tags. Where the SF's tags ran out they are on
  // another communicator, whose topology their transports make together.
  Chain made;
  int rc = earlier;
  StepGraphs g;
  for (int k = 0; k < kSteps; k++) {
    const int ok = stf_create(sf->comm, &made.sf[k]);
    if (made.sf[k] && made.sf[k]->comm != sf->comm) g.apart = 1;
    if (!rc) rc = ok;
  }
  rc = plan_node_aware(sf, kind, chunk_units, &g, rc);
  const StepGraph *graphs[kSteps] = {&g.local, &g.gather, &g.cross, &g.first, &g.rest};
  for (int k = 0; k < kSteps && !rc; k++) try {
      stf_sf step = made.sf[k];
      step->opts = sf->opts;
      step->opts.type = k == G ? net_transport : node_transport;
      const StepGraph &sg = *graphs[k];
      const stf_int n = static_cast<stf_int>(sg.roots.size());
      rc = stf_set_graph(step, sg.nroots, n, sg.leaves.empty() ? nullptr : sg.leaves.data(), STF_COPY_VALUES,
                         sg.roots.data(), STF_COPY_VALUES);
    } catch (...) {
      rc = exception_error();
    }
  for (stf_sf step : made.sf)  // also where copying the options failed half-way
    if (step) quiet(step);
  // G's root side comes from the planning: the others stay inside nodes.
  const Messages *known[kSteps] = {};
  known[G] = &g.cross_root;
  std::vector<std::unique_ptr<Plan>> plans;
  rc = plan_steps(sf, made.sf, known, kSteps, &plans, rc);
  // Per step, whether some rank uses it (StepGraph::use).
  int used[kSteps];
  for (int k = 0; k < kSteps; k++) used[k] = graphs[k]->use(sf->rank);
  if (!g.use_agreed) {
    rc = agree_max(sf->comm, rc, used, kSteps);
  } else {
    for (int k = 0; k < kSteps; k++) {
      if (used[k] > g.use[k] && !rc)
        rc = set_error(STF_ERR_INTERNAL, "node-aware set-up: step %s's use here (%d) exceeds the agreed %d",
                       step_names[k], used[k], g.use[k]);
      used[k] = g.use[k];
    }
    // Steps whose set-up is collective need every rank; otherwise a rank
    // that failed since returns alone, and install_plan agrees on it.
    if (g.apart || steps_set_up_together(used, node_transport, net_transport)) rc = agree(sf->comm, rc);
  }
  STF_CHECK(rc);
  for (int k = 0; k < kSteps; k++) {
    if (!used[k]) stf_destroy(&made.sf[k]);  // not set up: nothing collective
    c->self_only[k] = used[k] == 1;
    if (c->self_only[k]) made.sf[k]->opts.type = "basic";
    std::swap(c->sf[k], made.sf[k]);
  }
  c->send_units = g.send_units;
  c->recv_units = g.recv_units;
  STF_CHECK(install_steps(c->sf, &plans));
  find_aliases(c);
  return STF_SUCCESS;
}

}  // namespace nodeaware
}  // namespace stf
