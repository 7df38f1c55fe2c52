// Predicting and choosing how an SF communicates: the model layer's costs
// of every transport and strategy for this SF's traffic (traffic.h), the
// machine profile they use (-stf_model_profile), -stf_type auto (the
// smallest prediction) and -stf_autotune N (the best predictions timed).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "model/profile.h"
#include "sf/traffic.h"

namespace stf {

struct Prediction {
  std::string type;          // -stf_type value
  double seconds = 0;        // one bcast (a reduce moves the same messages back)
  const char *dominant = "";  // the model's largest term
  std::string node_transport;  // a strategy's -stf_node_transport where not its default ("")

  // type, or "type/node_transport" (e.g. "3step/putsignal").
  std::string label() const { return node_transport.empty() ? type : type + "/" + node_transport; }
};

// The profile -stf_model_profile (or STF_MODEL_PROFILE) names for sf, read
// once per file; the built-in one (marked defaults) without. STF_ERR_OPTION
// for a file that cannot be read or parsed.
int model_profile(stf_sf sf, const model::Profile **out);

// Every transport and strategy that applies (node-aware ones only across
// nodes), fastest first, for units of unit_bytes. Pure: the same traffic
// and profile give the same list on every rank.
// split_bytes: the bytes of split's messages between nodes
// (split_chunk_bytes); putsignal_rma: whether putsignal's messages to other
// nodes go through RMA (-stf_putsignal_net rma; auto is predicted as
// point-to-point: the set-up probes the MPI, which a pure model cannot);
// putsignal_unit_bytes: the bytes per unit its regions hold
// (-stf_putsignal_unit_bytes; larger units go by point-to-point).
// Across nodes, where putsignal runs and the profile has its protocol
// measured and the units fit, the node-aware strategies also with
// putsignal as their in-node transport.
std::vector<Prediction> predict_all(const model::Profile &p, const Traffic &t, double unit_bytes,
                                    double split_bytes, bool putsignal_rma, double putsignal_unit_bytes);
// The candidates -stf_type auto chooses among.
bool auto_candidate(const std::string &type);
// The bytes of one of split's messages between nodes for units of
// unit_bytes (-stf_split_bytes / 8 units: sf/methods.h, capped_units), for
// predict_all; 0 (no cap) where the strategy is not registered.
double split_chunk_bytes(const Options &o, double unit_bytes);

// The index of the candidate with the smallest median over `rounds` rounds,
// where time_round(c) gives one round's time of candidate c (the slowest
// rank's, so the same on every rank); candidates alternate inside a round.
// samples: one list per candidate, which gets its times, sorted; nothing is
// allocated where each has room for `rounds` (a rank must not fail alone
// between the rounds' collectives).
int autotune_pick(int rounds, const std::function<double(int)> &time_round,
                  std::vector<std::vector<double>> *samples);

// -stf_type auto, at set-up, for sf's plan and topology (before its
// transport exists): sets sf->opts.type to the choice and sf->choice to
// why. Collective.
int choose_type(stf_sf sf, const Plan &plan, const Topology &topology);

// -stf_model_profile.
extern const OptionSpec model_profile_option, autotune_option, auto_unit_bytes_option;

}  // namespace stf
