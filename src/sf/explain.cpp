// stf_explain: what the model predicts for this SF's bcast and reduce under
// every transport and strategy, why (the dominant term), where the
// operation sits on the message roofline, and what the SF measured.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/error.h"
#include "model/roofline.h"
#include "sf/choice.h"
#include "sf/methods.h"
#include "transport/registry.h"

namespace stf {
namespace {

// The slowest rank's mean time per operation of kind k in this SF (0 if none ran).
double measured_per_op(stf_sf sf, int k, long long *ops) {
  stf_stats s = stf_stats_init();
  if (stf_get_stats(sf, &s) != STF_SUCCESS) return 0;
  double t = s.operations[k] ? (s.begin_seconds[k] + s.end_seconds[k]) / s.operations[k] : 0;
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, sf->comm);
  *ops = s.operations[k];
  MPI_Allreduce(MPI_IN_PLACE, ops, 1, MPI_LONG_LONG, MPI_MAX, sf->comm);
  return t;
}

// The SF's method as its prediction is labelled: a strategy whose steps in
// a node run another transport than basic is "type/transport".
std::string label_in_use(const Options &o) {
  const Method *m = find_method(o.type);
  if (!m || !m->node_transport) return o.type;
  const std::string step = o.text(*m->node_transport);
  return step == "basic" ? o.type : o.type + "/" + step;
}

}  // namespace
}  // namespace stf

extern "C" int stf_explain(stf_sf sf, MPI_Datatype unit, FILE *out) try {
  using namespace stf;
  STF_CHECK(ensure_setup(sf));
  if (unit == MPI_DATATYPE_NULL) return set_error(STF_ERR_ARG, "stf_explain: unit is MPI_DATATYPE_NULL");
  int unit_bytes = 0;
  STF_MPI(MPI_Type_size(unit, &unit_bytes));
  const model::Profile *profile = nullptr;
  STF_CHECK(model_profile(sf, &profile));
  Traffic t;
  STF_CHECK(measure_traffic(*sf, *sf->plan, *sf->topology, &t));
  const std::vector<Prediction> preds =
      predict_all(*profile, t, unit_bytes, split_chunk_bytes(sf->opts, unit_bytes), putsignal_rma_forced(sf->opts),
                  static_cast<double>(sf->opts.number(putsignal_unit_bytes_option)));
  long long nb = 0, nr = 0;
  const double bcast = measured_per_op(sf, STF_OP_BCAST, &nb), reduce = measured_per_op(sf, STF_OP_REDUCE, &nr);
  if (sf->rank != 0) return STF_SUCCESS;
  if (!out) out = stdout;
  std::fprintf(out, "stf_explain: SF on %d rank(s), %d node(s) of up to %d, units of %d bytes; profile: %s\n",
               t.ranks, t.nodes, t.ranks_per_node, unit_bytes,
               profile->defaults ? "built-in values (no -stf_model_profile; run scripts/bench calibrate)"
                                 : (profile->machine + " " + profile->date + ", " + profile->mpi).c_str());
  std::fprintf(out,
               "  busiest rank: %lld message(s) in its node (%lld units), %lld to other nodes (%lld units), to %lld "
               "node(s), %lld units to itself\n"
               "  busiest node: sends to %lld node(s), %lld units leaving (%lld distinct per destination node), "
               "at most %lld distinct to one node; %lld message(s) leaving it (%lld under 2step)\n",
               t.messages_in_node, t.units_in_node, t.messages_off_node, t.units_off_node, t.destination_nodes,
               t.self_units, t.node_pairs, t.node_units_off, t.node_distinct_off, t.max_pair_distinct,
               t.node_messages_off, t.node_rank_node_pairs);
  std::fprintf(out, "  predicted time of one bcast (a reduce sends the same messages back), fastest first:\n");
  const std::string in_use = label_in_use(sf->opts);
  for (const Prediction &p : preds)
    std::fprintf(out, "    %-16s %10.2f us  dominant: %s%s\n", p.label().c_str(), 1e6 * p.seconds, p.dominant,
                 p.label() == in_use ? "  <- in use" : "");
  // The message roofline of the busiest rank's direct messages.
  const model::Postal &net = t.nodes > 1 ? profile->network.other_node : profile->network.same_node;
  const double messages = static_cast<double>(t.messages_in_node + t.messages_off_node);
  const double bytes = static_cast<double>(unit_bytes) * (t.units_in_node + t.units_off_node);
  if (messages > 0) {
    const model::Roofline roof = model::roofline_of(net);
    const model::RooflinePoint pt = model::roofline_point(roof, messages, bytes / messages, bcast);
    std::fprintf(out,
                 "  roofline (%s): %.0f message(s) of %.0f bytes per synchronisation; bound %.3f GB/s (%s roof)",
                 t.nodes > 1 ? "between nodes" : "inside a node", messages, bytes / messages, 1e-9 * pt.bound,
                 pt.regime);
    if (bcast > 0) std::fprintf(out, "; achieved %.3f GB/s, %.0f%% of the bound", 1e-9 * pt.achieved, 100 * pt.fraction);
    std::fprintf(out, "\n");
  }
  if (nb || nr)
    std::fprintf(out, "  measured (%s, slowest rank, mean of begin + end): bcast %.2f us over %lld, reduce %.2f us over %lld\n",
                 in_use.c_str(), 1e6 * bcast, nb, 1e6 * reduce, nr);
  else
    std::fprintf(out, "  measured: no bcast or reduce has run on this SF yet\n");
  if (!sf->choice.empty()) std::fprintf(out, "  chosen by %s\n", sf->choice.c_str());
  std::fflush(out);
  return STF_SUCCESS;
} STF_API_CATCH
