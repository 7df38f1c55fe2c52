// The values of -stf_type: methods of three kinds. A transport moves each
// operation's messages itself (transport/registry.h's table, one row each);
// a node-aware strategy runs bcast and reduce as steps over SFs of their own
// (src/nodeaware/, a layer above this one, which registers its rows at
// start-up); `auto`, the chooser, picks one of the others at set-up
// (choice.h). The options, their help, stf_set_type, set-up and stf_view
// read this one table.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/options.h"
#include "transport/registry.h"

struct stf_sf_s;

namespace stf {

class Strategy;

enum class MethodKind { transport, strategy, chooser };

// Collective: plans the steps of sf (set up: its plan and topology exist)
// and sets up their SFs. earlier: this rank's failure before it (sf is then
// not set up); a rank that fails takes part in every collective all the
// same. A failure in the planning fails every rank; one in a step's
// transport is this rank's, and *out may then be set: the caller agrees on
// it and clears the set-up (install_plan).
using StrategyFactory = int (*)(stf_sf_s *sf, std::unique_ptr<Strategy> *out, int earlier);

struct Method {
  const char *name;
  const char *help;  // one line for the options help
  MethodKind kind;
  OptionSpecs options;  // options of its own (kept in Options::extra; rows may share them)
  // The transport the SF itself runs: the method's own, or for a strategy
  // basic (fetch-and-op, gather and scatter); none for the chooser.
  const TransportKind *transport = nullptr;
  StrategyFactory make_strategy = nullptr;  // strategies
  // A strategy that caps the bytes of one message between nodes: that
  // option, for the model's prediction (choice.h).
  const OptionSpec *message_cap = nullptr;
  // A strategy whose steps inside a node run a transport this option
  // names: auto may set it (choice.h).
  const OptionSpec *node_transport = nullptr;
};

// A message cap counts bytes of 8-byte units: its messages hold cap / 8
// units (at least 1) whatever the unit, so that the steps are made once, at
// set-up, for every unit (units of another size on one rank then fail as
// in any transport, where steps made per unit would leave ranks in
// different collectives).
constexpr long kCapUnitBytes = 8;
inline long capped_units(long cap_bytes) { return cap_bytes >= kCapUnitBytes ? cap_bytes / kCapUnitBytes : 1; }

// Transports in their table's order, the registered strategies, auto.
const std::vector<Method> &methods();
const Method *find_method(const std::string &name);
// For a layer above this one, at its start-up (static initialisation, before
// any call of the library): adds a strategy's row.
void register_strategy(const Method &m);
// -stf_type, whose values are the table's names.
const OptionSpec &type_option();

}  // namespace stf
