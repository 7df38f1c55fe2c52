#include "sf/choice.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

#include "core/error.h"
#include "sf/methods.h"

namespace stf {

const OptionSpec model_profile_option = {
    "stf_model_profile", "STF_MODEL_PROFILE", "a file",
    "machine profile (JSON, written by scripts/bench calibrate) for stf_explain and -stf_type auto; '' uses "
    "built-in values (default '')",
    "", [](const std::string &v, Options *o) {
      o->extra["stf_model_profile"] = OptionValue{v};
      return static_cast<int>(STF_SUCCESS);
    }};
const OptionSpec autotune_option = {
    "stf_autotune", "STF_AUTOTUNE", "0..1000",
    "with -stf_type auto: time the 3 best predicted candidates and basic over N interleaved rounds and keep the "
    "fastest "
    "(0: the model alone; default 0)",
    "0", nullptr, 0, 1000};

const OptionSpec auto_unit_bytes_option = {
    "stf_auto_unit_bytes", "STF_AUTO_UNIT_BYTES", "1..65536",
    "with -stf_type auto: the bytes per unit of the operations the choice is for, in the model's predictions and "
    "-stf_autotune's trial (default 8)",
    "8", nullptr, 1, 65536};

int model_profile(stf_sf sf, const model::Profile **out) {
  static std::mutex lock;
  static std::map<std::string, std::unique_ptr<model::Profile>> cache;  // by file; "" the built-in one
  const std::string path = sf->opts.text(model_profile_option);
  std::lock_guard<std::mutex> hold(lock);
  auto it = cache.find(path);
  if (it == cache.end()) {
    auto p = std::make_unique<model::Profile>(model::default_profile());
    std::string why;
    if (!path.empty() && !model::read_profile(path, p.get(), &why))
      return set_error(STF_ERR_OPTION, "-stf_model_profile '%s': %s", path.c_str(), why.c_str());
    it = cache.emplace(path, std::move(p)).first;
  }
  *out = it->second.get();
  return STF_SUCCESS;
}

namespace {

model::CommStats comm_stats(const Traffic &t, double u) {
  model::CommStats s;
  s.messages_same_node = t.messages_in_node;
  s.bytes_same_node = u * t.units_in_node;
  s.messages_other_node = t.messages_off_node;
  s.bytes_other_node = u * t.units_off_node;
  s.destination_nodes = t.node_pairs;
  s.max_node_pair_bytes = u * t.max_pair_distinct;
  s.bytes_leaving_node = u * t.node_units_off;
  s.unique_bytes_leaving_node = u * t.node_distinct_off;
  s.ranks_per_node = t.ranks_per_node;
  s.messages_leaving_node = t.node_messages_off;
  s.rank_node_pairs = t.node_rank_node_pairs;
  return s;
}

Prediction of(const std::string &type, const model::Cost &c, const std::string &node_transport = "") {
  return {type, c.seconds, c.dominant, node_transport};
}

// Whether putsignal's in-node messages are priced by its own protocol:
// measured by calibrate or the built-in price (onesided.h), and units that
// fit its regions.
bool heap_prices(const model::Profile &p, double u, double unit_bytes) {
  return (p.onesided.heap.measured || p.defaults) && u <= unit_bytes;
}

// putsignal: its messages in a node by the put-with-signal protocol where
// it has a price and the units fit their regions, else as MPI's
// messages plus a signal each; those to other nodes by MPI, plus a signal
// each where they go through RMA.
Prediction predict_putsignal(const model::Profile &p, const Traffic &t, const model::CommStats &st, double u,
                             bool rma, double unit_bytes) {
  model::Network net = p.network;
  double signals = (rma ? t.messages_off_node : 0) * p.onesided.sync;
  if (heap_prices(p, u, unit_bytes))
    net.same_node.segments = p.onesided.heap.segments;  // MPI's gap and busy step stay
  else
    signals += t.messages_in_node * p.onesided.sync;
  const model::Cost c = model::cost_standard(net, st);
  return {"putsignal", c.seconds + signals, c.dominant, ""};
}

// The option that sets p's in-node transport (nullptr: p sets none).
const char *step_option_of(const Prediction &p) {
  const Method *m = p.node_transport.empty() ? nullptr : find_method(p.type);
  return m && m->node_transport ? m->node_transport->name : nullptr;
}

// A candidate that sets a strategy's in-node transport only where the
// user has not named one.
bool may_set(const Options &o, const Prediction &p) {
  if (p.node_transport.empty()) return true;
  const char *option = step_option_of(p);
  return option && !o.extra.count(option);
}

double median_of_sorted(const std::vector<double> &s) { return s.empty() ? 0 : s[s.size() / 2]; }

}  // namespace

bool auto_candidate(const std::string &type) {
  if (!transport_runs_here(type)) return false;  // under SMPI: not neighbor, not putsignal
  const Method *m = find_method(type);
  return type == "basic" || type == "neighbor" || type == "putsignal" || (m && m->kind == MethodKind::strategy);
}

double split_chunk_bytes(const Options &o, double unit_bytes) {
  const Method *m = find_method("split");
  return m && m->message_cap ? static_cast<double>(capped_units(o.number(*m->message_cap))) * unit_bytes : 0;
}

std::vector<Prediction> predict_all(const model::Profile &p, const Traffic &t, double u, double split_bytes,
                                    bool putsignal_rma, double putsignal_unit_bytes) {
  const model::CommStats st = comm_stats(t, u);
  const model::Cost standard = model::cost_standard(p.network, st);
  std::vector<Prediction> out = {of("basic", standard)};
  // Every message of a rank in one collective call; the same messages with
  // a signal each for the one-sided transports (putsignal's messages to
  // other nodes have none where they go by point-to-point).
  const double messages = t.messages_in_node + t.messages_off_node;
  out.push_back({"neighbor", standard.seconds + p.collective.call, standard.dominant, ""});
  const double signals = messages * p.onesided.sync;
  out.push_back({"window", standard.seconds + 2 * signals, standard.dominant, ""});  // address and data
  out.push_back(predict_putsignal(p, t, st, u, putsignal_rma, putsignal_unit_bytes));
  if (t.nodes > 1) {
    out.push_back(of("2step", model::cost_2step(p.network, st)));
    out.push_back(of("3step", model::cost_3step(p.network, st)));
    out.push_back(of("split", model::cost_split(p.network, st, split_bytes)));
    // The same steps with putsignal inside the nodes (its net leg unused:
    // a step SF lives in one node). Without the protocol priced they
    // would be basic's steps plus a signal each: never listed.
    if (transport_runs_here("putsignal") && heap_prices(p, u, putsignal_unit_bytes)) {
      model::Network in_node = p.network;
      in_node.same_node.segments = p.onesided.heap.segments;
      out.push_back(of("2step", model::cost_2step(in_node, st), "putsignal"));
      out.push_back(of("3step", model::cost_3step(in_node, st), "putsignal"));
      out.push_back(of("split", model::cost_split(in_node, st, split_bytes), "putsignal"));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Prediction &a, const Prediction &b) { return a.seconds < b.seconds; });
  return out;
}

int autotune_pick(int rounds, const std::function<double(int)> &time_round,
                  std::vector<std::vector<double>> *samples) {
  const int candidates = static_cast<int>(samples->size());
  for (int r = 0; r < rounds; r++)
    for (int k = 0; k < candidates; k++) {
      const int c = (r + k) % candidates;  // who goes first rotates
      (*samples)[c].push_back(time_round(c));
    }
  int best = 0;
  double best_median = 0;
  for (int c = 0; c < candidates; c++) {
    std::vector<double> &s = (*samples)[c];
    std::sort(s.begin(), s.end());
    const double median = median_of_sorted(s);
    if (c == 0 || median < best_median) best = c, best_median = median;
  }
  return best;
}

namespace {

// The timed trial's root and leaf arrays and unit: doubles, a contiguous
// run of them, or of bytes where the unit is not a multiple of 8 (then the
// reduce replaces: MPI_SUM does not apply to bytes).
struct TrialData {
  std::vector<double> roots, leaves;
  MPI_Datatype unit = MPI_DOUBLE;
  MPI_Op reduce_op = MPI_SUM;

  // Arrays for nroots roots and leaves up to maxleaf, in units of `bytes`.
  int make(const stf_sf_s &sf, int bytes) {
    if (bytes % 8) {
      reduce_op = MPI_REPLACE;
      STF_MPI(MPI_Type_contiguous(bytes, MPI_BYTE, &unit));
    } else if (bytes > 8) {
      STF_MPI(MPI_Type_contiguous(bytes / 8, MPI_DOUBLE, &unit));
    }
    if (unit != MPI_DOUBLE) STF_MPI(MPI_Type_commit(&unit));
    const size_t doubles = (static_cast<size_t>(bytes) + 7) / 8;
    roots.assign((static_cast<size_t>(sf.nroots) + 1) * doubles, 1.0);
    leaves.assign((static_cast<size_t>(sf.maxleaf) + 2) * doubles, 0.0);
    return STF_SUCCESS;
  }
  ~TrialData() {
    if (unit != MPI_DOUBLE) MPI_Type_free(&unit);
  }
};

// One round of a candidate: a bcast and a reduce, the slowest rank's time.
double time_candidate(stf_sf sf, TrialData &data) {
  MPI_Comm comm = MPI_COMM_NULL;
  stf_get_comm(sf, &comm);
  MPI_Barrier(comm);
  const double t0 = MPI_Wtime();
  stf_bcast(sf, data.unit, data.roots.data(), data.leaves.data(), MPI_REPLACE);
  stf_reduce(sf, data.unit, data.leaves.data(), data.roots.data(), data.reduce_op);
  double t = MPI_Wtime() - t0;
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm);
  return t;
}

// Time the candidates on copies of sf; *best their index of the fastest.
// What the trial allocates, each copy's creation and each copy's set-up
// (validation on) are agreed before the next collective step, so that a
// rank short of memory fails with the others. The operations of the trial
// are not: a rank whose bcast or reduce runs out of memory can leave the
// others waiting in theirs, as in any operation.
// earlier: this rank's failure before the trial, agreed with the others.
int autotune(stf_sf sf, const std::vector<Prediction> &cands, int rounds, int unit_bytes, int earlier, int *best,
             std::vector<double> *medians) {
  std::vector<stf_sf> copies;
  TrialData data;
  std::vector<std::vector<double>> seen;
  int rc = earlier;
  if (!rc) try {
    copies.assign(cands.size(), nullptr);
    rc = data.make(*sf, unit_bytes);
    seen.resize(cands.size());
    for (std::vector<double> &s : seen) s.reserve(rounds);
    medians->reserve(cands.size());
  } catch (...) {
    rc = exception_error();
  }
  rc = agree(sf->comm, rc);
  for (std::size_t c = 0; c < cands.size() && !rc; c++) {
    rc = stf_duplicate(sf, STF_DUPLICATE_GRAPH, &copies[c]);
    if (!rc) try {
        copies[c]->opts.type = cands[c].type;
        if (const char *option = step_option_of(cands[c]))
          copies[c]->opts.extra[option] = OptionValue{cands[c].node_transport};
        copies[c]->opts.validate = true;  // its set-up fails on every rank or none
      } catch (...) {
        rc = exception_error();
      }
    rc = agree(sf->comm, rc);
    if (!rc) rc = stf_setup(copies[c]);
  }
  if (!rc) {
    for (stf_sf c : copies) time_candidate(c, data);  // warm-up
    // Two references: small enough for std::function to hold without allocating.
    *best = autotune_pick(rounds, [&copies, &data](int c) { return time_candidate(copies[c], data); }, &seen);
    for (const std::vector<double> &s : seen) medians->push_back(median_of_sorted(s));  // sorted by autotune_pick
  }
  for (stf_sf &c : copies) stf_destroy(&c);
  return rc;
}

}  // namespace

// A rank that fails (out of memory) takes part in the traffic's collectives
// and the last allreduce all the same, so every rank fails; so it does in
// -stf_autotune's trial, but for the trial's operations (autotune).
int choose_type(stf_sf sf, const Plan &plan, const Topology &topology) {
  const model::Profile *profile = nullptr;
  int rc = STF_SUCCESS, rounds = 0, unit = 8;
  try {
    // First: a rank that fails after this still takes the others' path (a
    // short value is copied without allocating).
    rounds = static_cast<int>(sf->opts.number(autotune_option));
    unit = static_cast<int>(sf->opts.number(auto_unit_bytes_option));
    rc = model_profile(sf, &profile);
  } catch (...) {
    rc = exception_error();
  }
  Traffic traffic;
  STF_CHECK(measure_traffic(*sf, plan, topology, &traffic, rc));
  std::vector<Prediction> cands;
  std::ostringstream why;
  std::vector<Prediction> picks;  // the candidates, or those timed
  std::string choice;             // why: for the view
  const char *step_option = nullptr;  // the in-node transport option a pick may set, and its entry
  auto step_entry = sf->opts.extra.end();
  try {
    for (const Prediction &p :
         predict_all(*profile, traffic, unit, split_chunk_bytes(sf->opts, unit), putsignal_rma_forced(sf->opts),
                     static_cast<double>(sf->opts.number(putsignal_unit_bytes_option))))
      if (auto_candidate(p.type) && may_set(sf->opts, p)) cands.push_back(p);
    // The machine's name, as the profile gives it, at most a line long: the
    // choice is kept by every auto SF.
    const std::string &machine = profile->machine;
    why << "auto (predicted for " << unit << "-byte units, "
        << (profile->defaults ? "built-in profile" : machine.size() > 80 ? machine.substr(0, 77) + "..." : machine)
        << ":";
    for (const Prediction &p : cands) why << " " << p.label() << " " << 1e6 * p.seconds << " us";
    why << ")";
    picks = cands;
    if (rounds == 0) choice = why.str();
  } catch (...) {
    rc = exception_error();
  }
  int pick = 0;
  if (rounds > 0) {
    // The three best predictions, and basic, the baseline, in any case.
    std::vector<Prediction> best;
    try {
      best.assign(cands.begin(), cands.begin() + std::min<std::size_t>(3, cands.size()));
      const bool has_basic =
          std::any_of(best.begin(), best.end(), [](const Prediction &p) { return p.type == "basic"; });
      if (!has_basic) best.push_back({"basic", 0, "", ""});
    } catch (...) {
      rc = exception_error();
    }
    std::vector<double> medians;
    STF_CHECK(autotune(sf, best, rounds, unit, rc, &pick, &medians));
    try {
      why << ", timed over " << rounds << " rounds (bcast + reduce, slowest rank, median):";
      for (std::size_t c = 0; c < best.size(); c++) why << " " << best[c].label() << " " << 1e6 * medians[c] << " us";
      picks = best;
      choice = why.str();
    } catch (...) {
      rc = exception_error();
    }
  }
  // A pick may set its in-node transport: the option's entry is made now,
  // so that nothing allocates after the collective.
  try {
    const char *name = nullptr;
    for (const Prediction &p : picks)
      if (const char *option = rc ? nullptr : step_option_of(p)) name = option;
    if (name) {
      step_entry = sf->opts.extra.try_emplace(name).first;
      step_option = name;  // only once its entry exists
      step_entry->second.text.reserve(16);
    }
  } catch (...) {
    rc = exception_error();
  }
  // Every rank computed the same; rank 0's word settles it regardless. With
  // it, the largest error code and the lowest rank that failed.
  int settled[3] = {sf->rank == 0 ? pick : -1, rc, rc ? sf->size - sf->rank : 0};
  const int mpi_rc = MPI_Allreduce(MPI_IN_PLACE, settled, 3, MPI_INT, MPI_MAX, sf->comm);
  Prediction *chosen = mpi_rc == MPI_SUCCESS && !settled[1] ? &picks[settled[0]] : nullptr;
  if (step_option && (!chosen || chosen->node_transport.empty())) sf->opts.extra.erase(step_entry);
  STF_MPI(mpi_rc);
  if (rc) return rc;
  if (settled[1])
    return set_error(settled[1], "set-up: rank %d failed choosing the transport (-stf_type auto; its message says why)",
                     sf->size - settled[2]);
  // Nothing is allocated after the collective: a failure here would be this
  // rank's alone, while the others go on to the transport's collectives.
  sf->opts.type.swap(chosen->type);
  if (!chosen->node_transport.empty()) {
    step_entry->second.text.swap(chosen->node_transport);
    sf->auto_set_option = step_option;
  }
  sf->choice.swap(choice);
  return STF_SUCCESS;
}

}  // namespace stf
