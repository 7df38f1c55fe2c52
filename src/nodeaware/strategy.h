// The node-aware strategies as the SF layer's Strategy (strategy.cpp), their
// options, and their rows of the method table (methods.cpp).
#pragma once

#include <memory>

#include "nodeaware/steps.h"
#include "sf/strategy.h"

namespace stf {

// Split's cap on the bytes of one message between nodes, and the transports
// of the steps inside a node and between nodes.
extern const OptionSpec split_bytes_option, node_transport_option, net_transport_option;

// The strategy of `kind` for sf (set up: its plan and topology exist).
// Collective (sf/methods.h, StrategyFactory).
int make_node_aware(stf_sf sf, NodeAwareKind kind, std::unique_ptr<Strategy> *out, int earlier);

}  // namespace stf
