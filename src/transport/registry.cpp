#include "transport/registry.h"

#include <string>

#include "core/error.h"

namespace stf {
namespace {

const char *const collective_help =
    "one nonblocking collective on the user's arrays for SFs with that pattern, recognised at set-up (other SFs "
    "and operations: basic)";

#ifdef STF_HAVE_NVSHMEM
const char *const nvshmem_help = "putsignal's protocol on device data through NVSHMEM (GPUs; a plug-in)";
#else
const char *const nvshmem_help = "putsignal's protocol on device data through NVSHMEM (not in this build)";
#endif

const TransportKind *find_kind(const std::string &name) {
  for (const TransportKind &k : transport_kinds())
    if (name == k.name) return &k;
  return nullptr;
}

// -stf_node_transport and -stf_net_transport: any transport but a strategy.
int step_transport(const char *name, const std::string &v, Options *o) {
  const TransportKind *k = find_kind(v);
  if (!k || k->node_aware || v == "auto")
    return set_error(STF_ERR_OPTION, "-%s '%s' is not a transport (a strategy's steps need one, e.g. basic)", name,
                     v.c_str());
  o->extra[name] = v;
  return STF_SUCCESS;
}

std::string kind_names(const char *separator) {
  std::string s;
  for (const TransportKind &k : transport_kinds()) s += (s.empty() ? "" : separator) + std::string(k.name);
  return s;
}

}  // namespace

const std::vector<TransportKind> &transport_kinds() {
  static const std::vector<TransportKind> kinds = {
      {"basic", "persistent point-to-point, one message per peer and direction", {}, make_basic_transport, {}},
      {"neighbor", "MPI-3 neighbourhood collectives on distributed-graph communicators",
       {true, false}, make_neighbor_transport, {}},
      {"window", "MPI-3 one-sided puts into windows (see -stf_window_sync)", {true, false}, make_window_transport,
       {&window_sync_option}},
      {"collective", "the collective that fits (allgather, alltoall, gather), else basic", {false, false},
       make_collective_transport, {}},
      {"allgatherv", collective_help, {false, false}, make_collective_transport, {}},
      {"allgather", collective_help, {false, false}, make_collective_transport, {}},
      {"gatherv", collective_help, {false, false}, make_collective_transport, {}},
      {"gather", collective_help, {false, false}, make_collective_transport, {}},
      {"alltoall", collective_help, {false, false}, make_collective_transport, {}},
      {"putsignal", "one-sided put with signal: a shared-memory heap inside a node, MPI RMA between nodes "
       "(see -stf_putsignal_net)",
       {true, false, false}, make_putsignal_transport,
       {&putsignal_slots_option, &putsignal_unit_bytes_option, &putsignal_timeout_option, &putsignal_net_option}},
      {"nvshmem", nvshmem_help, {true, false, false}, make_nvshmem_transport,
       {&nvshmem_slots_option, &nvshmem_unit_bytes_option}},
      {"2step",
       "node-aware bcast/reduce: each rank sends to one rank of each other node, which forwards inside its node",
       {}, make_basic_transport, {&split_bytes_option, &node_transport_option, &net_transport_option}, true},
      {"3step",
       "node-aware bcast/reduce: values gathered inside the node, one message per pair of nodes, forwarded inside "
       "the destination node; values needed twice on a node cross once",
       {}, make_basic_transport, {&split_bytes_option, &node_transport_option, &net_transport_option}, true},
      {"split", "3step with messages between nodes cut at -stf_split_bytes, spread over the ranks of both nodes", {},
       make_basic_transport, {&split_bytes_option, &node_transport_option, &net_transport_option}, true},
      {"auto",
       "at set-up, the one of basic, neighbor, 2step, 3step and split with the smallest predicted time (see "
       "-stf_model_profile, -stf_autotune, stf_explain)",
       {}, make_basic_transport, {}},
  };
  return kinds;
}

const OptionSpec split_bytes_option = {
    "stf_split_bytes", "STF_SPLIT_BYTES", "1..1073741824",
    "split strategy: most bytes of one message between two nodes; a node pair's larger volume is cut into "
    "chunks sent by different ranks (default 16384)",
    "16384",
    [](const std::string &v, Options *o) { return count_option("stf_split_bytes", v, 1, 1L << 30, o); }};
const OptionSpec node_transport_option = {
    "stf_node_transport", "STF_NODE_TRANSPORT", "a transport",
    "node-aware strategies: transport of the steps inside a node (default basic)", "basic",
    [](const std::string &v, Options *o) { return step_transport("stf_node_transport", v, o); }};
const OptionSpec net_transport_option = {
    "stf_net_transport", "STF_NET_TRANSPORT", "a transport",
    "node-aware strategies: transport of the step between nodes (default basic)", "basic",
    [](const std::string &v, Options *o) { return step_transport("stf_net_transport", v, o); }};

bool is_node_aware(const std::string &name) {
  const TransportKind *k = find_kind(name);
  return k && k->node_aware;
}

const OptionSpec &transport_option() {
  static const std::string values = kind_names("|");
  static const std::string help = [] {
    std::string h = "transport that moves messages:";
    for (const TransportKind &k : transport_kinds()) h += std::string(" ") + k.name + " = " + k.help + ";";
    return h + " (default basic)";
  }();
  static const OptionSpec spec = {"stf_type", "STF_TYPE", values.c_str(), help.c_str(), "basic",
                                  [](const std::string &v, Options *o) {
                                    if (!find_kind(v))
                                      return set_error(STF_ERR_OPTION, "-stf_type '%s' unknown (available: %s)",
                                                       v.c_str(), kind_names(", ").c_str());
                                    o->type = v;
                                    return static_cast<int>(STF_SUCCESS);
                                  }};
  return spec;
}

int prepare_agreed(const TransportContext &ctx, const std::function<void()> &prepare) {
  int rc = ctx.earlier;
  if (!rc) try {
      prepare();
    } catch (...) {
      rc = exception_error();
    }
  return ctx.opts.validate ? agree(ctx.comm.comm, rc) : rc;
}

int create_transport(const TransportContext &ctx, std::unique_ptr<Transport> *out) {
  const TransportKind *kind = find_kind(ctx.opts.type);
  if (!kind) return set_error(STF_ERR_OPTION, "transport '%s' is not available", ctx.opts.type.c_str());
  // The fallback first: nothing may fail once the transport is made (its
  // destructor may be collective). A rank where it fails still takes part
  // in the transport's first agreement (ctx.earlier).
  std::unique_ptr<Transport> wrapper;
  TransportContext with = ctx;
  if (!(kind->can.messages && kind->can.legs_from_end && kind->can.fetch)) try {
      std::unique_ptr<Transport> basic;
      with.earlier = make_basic_transport(ctx, &basic);
      if (!with.earlier) wrapper = make_fallback(kind->can, std::move(basic));
    } catch (...) {
      with.earlier = exception_error();
    }
  std::unique_ptr<Transport> t;
  STF_CHECK(kind->create(with, &t));
  if (with.earlier) return with.earlier;  // a kind whose set-up is not collective made it all the same
  if (!wrapper) {
    *out = std::move(t);
    return STF_SUCCESS;
  }
  adopt_primary(wrapper.get(), std::move(t));
  *out = std::move(wrapper);
  return STF_SUCCESS;
}

}  // namespace stf
