// The node-aware strategies' rows of the method table (sf/methods.h) and
// their options, registered when the library is loaded.
#include "core/error.h"
#include "nodeaware/strategy.h"
#include "sf/methods.h"

namespace stf {
namespace {

// -stf_node_transport and -stf_net_transport: any transport (a strategy's
// steps need one).
int step_transport(const char *name, const std::string &v, Options *o) {
  if (!find_transport(v))
    return set_error(STF_ERR_OPTION, "-%s '%s' is not a transport (a strategy's steps need one, e.g. basic)", name,
                     v.c_str());
  o->extra[name] = OptionValue{v};
  return STF_SUCCESS;
}

template <NodeAwareKind kind>
int make(stf_sf sf, std::unique_ptr<Strategy> *out, int earlier) {
  return make_node_aware(sf, kind, out, earlier);
}

bool register_all() {
  const TransportKind *basic = find_transport("basic");  // carries the SF's other operations
  const OptionSpecs options = {&split_bytes_option, &node_transport_option, &net_transport_option};
  register_strategy({"2step",
                     "node-aware bcast/reduce: each rank sends to one rank of each other node, which forwards "
                     "inside its node",
                     MethodKind::strategy, options, basic, make<NodeAwareKind::two_step>, nullptr,
                     &node_transport_option});
  register_strategy({"3step",
                     "node-aware bcast/reduce: values gathered inside the node, one message per pair of nodes, "
                     "forwarded inside the destination node; values needed twice on a node cross once",
                     MethodKind::strategy, options, basic, make<NodeAwareKind::three_step>, nullptr,
                     &node_transport_option});
  register_strategy({"split", "3step with messages between nodes cut at -stf_split_bytes, spread over the ranks of "
                              "both nodes",
                     MethodKind::strategy, options, basic, make<NodeAwareKind::split>, &split_bytes_option,
                     &node_transport_option});
  return true;
}

}  // namespace

const OptionSpec split_bytes_option = {
    "stf_split_bytes", "STF_SPLIT_BYTES", "1..1073741824",
    "split strategy: most bytes of one message between two nodes, counted for 8-byte units (messages of "
    "bytes / 8 units whatever the unit, fixed at set-up); a node pair's larger volume is cut into chunks sent "
    "by different ranks (default 16384)",
    "16384", nullptr, 1, 1L << 30};
const OptionSpec node_transport_option = {
    "stf_node_transport", "STF_NODE_TRANSPORT", "a transport",
    "node-aware strategies: transport of the steps inside a node (default basic)", "basic",
    [](const std::string &v, Options *o) { return step_transport("stf_node_transport", v, o); }};
const OptionSpec net_transport_option = {
    "stf_net_transport", "STF_NET_TRANSPORT", "a transport",
    "node-aware strategies: transport of the step between nodes (default basic)", "basic",
    [](const std::string &v, Options *o) { return step_transport("stf_net_transport", v, o); }};

}  // namespace stf

// Registered during the library's static initialisation. A static archive
// keeps this object only where something refers to it: the package's link
// flags name this symbol (CMakeLists.txt, starforest.pc).
extern "C" {
extern const int stf_node_aware_methods;
const int stf_node_aware_methods = stf::register_all();
}
