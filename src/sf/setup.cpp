// Set-up: the plan (discovery and index analysis), the node topology, then
// the transport for them, then the operations pointed at both.
#include "core/error.h"
#include "device/device.h"
#include "sf/choice.h"
#include "sf/methods.h"
#include "sf/sf.h"

namespace stf {
namespace {

const char *device_name() {
  Device *dev = nullptr;
  return active_device(&dev) == STF_SUCCESS ? dev->name() : "";
}
void *device_stream() {
  Device *dev = nullptr;
  return active_device(&dev) == STF_SUCCESS ? dev->library_stream() : nullptr;
}

// Each collective step (choosing, the transport, the strategy's planning)
// makes a rank's failure in it every rank's, and nothing between them can
// fail: a rank returning alone would leave the others in the next step's
// collectives. A strategy's step transports fail alone; install_plan
// agrees on that.
int make_transport_and_strategy(stf_sf sf, std::unique_ptr<Plan> plan) {
  const Topology *topology = nullptr;
  // Made already (nothing collective), but for a strategy's step SF on
  // another duplicate (the SF's tags ran out): the strategy agrees first.
  STF_CHECK(topology_of(sf->comm, sf->opts.ranks_per_node, &topology));
  if (sf->opts.type == "auto") STF_CHECK(choose_type(sf, *plan, *topology));
  const Method *method = find_method(sf->opts.type);
  if (!method || !method->transport)
    return set_error(STF_ERR_OPTION, "-stf_type '%s' is not available", sf->opts.type.c_str());
  std::unique_ptr<Transport> transport;
  const TransportContext ctx{*sf, *topology, *sf, *plan, sf->opts, {device_name, device_stream}};
  int rc = STF_SUCCESS;
  try {
    rc = create_transport(ctx, *method->transport, &transport);  // a strategy's (basic) is made alone: its failure is local
  } catch (...) {
    rc = exception_error();
  }
  sf->topology = topology;  // the strategy's collectives need it in any case
  if (!rc) {
    sf->plan = std::move(plan);
    sf->transport = std::move(transport);
    engine_set_plan(&sf->engine, sf->plan.get(), topology, sf->transport.get());
  }
  if (method->make_strategy) return method->make_strategy(sf, &sf->strategy, rc);
  return rc;
}

int install_alone(stf_sf sf, std::unique_ptr<Plan> plan) {
  try {
    return make_transport_and_strategy(sf, std::move(plan));
  } catch (...) {
    return exception_error();
  }
}

}  // namespace

// All or nothing, on every rank with -stf_validate: a rank that failed after
// the transport's collectives (out of memory, a strategy's step transport
// that cannot be made) would otherwise leave the others set up, to wait for
// it in the first operation, and itself half set up.
int install_plan(stf_sf sf, std::unique_ptr<Plan> plan) {
  int rc = install_alone(sf, std::move(plan));
  if (sf->opts.validate) rc = agree(sf->comm, rc);
  if (rc) clear_setup(sf);  // the next call sets it up again
  return rc;
}

int plan_steps(stf_sf sf, const stf_sf *sfs, const Messages *const *known, int n,
               std::vector<std::unique_ptr<Plan>> *plans, int earlier) {
  std::vector<const Graph *> graphs;
  std::vector<const Messages *> roots;
  std::vector<Plan *> raw;
  int rc = earlier;
  if (!rc) try {
      plans->clear();
      plans->resize(n);
      for (int k = 0; k < n; k++) {
        if (!sfs[k]) continue;
        (*plans)[k] = std::make_unique<Plan>();
        raw.push_back((*plans)[k].get());
        graphs.push_back(sfs[k]);
        roots.push_back(known[k]);
      }
    } catch (...) {
      rc = exception_error();
    }
  if (rc) raw.clear(), graphs.clear(), roots.clear();  // takes part, asking for nothing
  return build_plans(*sf, *sf->topology, Tag::steps, graphs, roots, sf->opts, raw, rc);
}

// A rank whose step transport fails still makes the later ones (their
// set-up may be collective), and clears none of them: some may be
// collective to destroy, so they go with the SF's set-up, on every rank.
int install_steps(const stf_sf *sfs, std::vector<std::unique_ptr<Plan>> *plans) {
  int rc = STF_SUCCESS;
  for (std::size_t k = 0; k < plans->size(); k++) {
    if (!sfs[k]) continue;
    const int made = install_alone(sfs[k], std::move((*plans)[k]));
    if (!rc) rc = made;
  }
  return rc;
}

int ensure_setup(stf_sf sf, bool agreed) {
  STF_CHECK(check_graph(sf));
  if (sf->plan) return STF_SUCCESS;
  std::unique_ptr<Plan> plan;
  Options opts;
  int rc = STF_SUCCESS;
  try {
    plan = std::make_unique<Plan>();
    opts = sf->opts;
    opts.validate |= agreed;
  } catch (...) {
    rc = exception_error();
  }
  // Whatever -stf_validate says (a rank may give it otherwise), a rank that
  // failed so far still meets the others in this first collective, and
  // every rank fails.
  rc = agree_on_options(sf, rc);
  STF_CHECK(rc);
  // The topology first: making it is collective (on the communicator's
  // first SF), and the plan may fail on one rank alone (a bad root offset
  // with -stf_validate 0), which must not leave the others in a collective.
  const Topology *topology = nullptr;
  STF_CHECK(topology_of(sf->comm, sf->opts.ranks_per_node, &topology));
  STF_CHECK(build_plan(*sf, *sf, opts, plan.get()));
  STF_CHECK(install_plan(sf, std::move(plan)));
  return sf->opts.view ? stf_view(sf, stdout) : STF_SUCCESS;
}

}  // namespace stf

extern "C" int stf_setup(stf_sf sf) try {
  return stf::ensure_setup(sf);
} STF_API_CATCH

extern "C" int stf_get_node_layout(stf_sf sf, int *node, int *nnodes, int *local_rank, int *local_size) try {
  STF_CHECK(stf::check_sf(sf));
  if (!sf->topology) return stf::set_error(STF_ERR_STATE, "stf_get_node_layout: the SF is not set up");
  const stf::Topology &t = *sf->topology;
  if (node) *node = t.node;
  if (nnodes) *nnodes = t.nnodes;
  if (local_rank) *local_rank = t.local_rank;
  if (local_size) *local_size = t.local_size;
  return STF_SUCCESS;
} STF_API_CATCH
