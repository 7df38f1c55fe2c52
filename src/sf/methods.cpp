#include "sf/methods.h"

#include "core/error.h"
#include "sf/choice.h"

namespace stf {
namespace {

// Built on first use: the transports, then `auto`; strategies are inserted
// before `auto` as they register.
std::vector<Method> &table() {
  static std::vector<Method> rows = [] {
    std::vector<Method> r;
    for (const TransportKind &k : transport_kinds())
      r.push_back({k.name, k.help, MethodKind::transport, k.options, &k});
    r.push_back({"auto",
                 "at set-up, the one of basic, neighbor and the node-aware strategies with the smallest predicted "
                 "time (see -stf_model_profile, -stf_autotune, stf_explain)",
                 MethodKind::chooser, {&model_profile_option, &autotune_option, &auto_unit_bytes_option}});
    return r;
  }();
  return rows;
}

std::string method_names(const char *separator) {
  std::string s;
  for (const Method &m : methods()) s += (s.empty() ? "" : separator) + std::string(m.name);
  return s;
}

}  // namespace

const std::vector<Method> &methods() { return table(); }

const Method *find_method(const std::string &name) {
  for (const Method &m : methods())
    if (name == m.name) return &m;
  return nullptr;
}

void register_strategy(const Method &m) {
  std::vector<Method> &rows = table();
  rows.insert(rows.end() - 1, m);  // before auto, the last row
}

const OptionSpec &type_option() {
  static const std::string values = method_names("|");
  static const std::string help = [] {
    std::string h = "how messages move: a transport, a node-aware strategy or auto:";
    for (const Method &m : methods()) h += std::string(" ") + m.name + " = " + m.help + ";";
    return h + " (default basic)";
  }();
  static const OptionSpec spec = {"stf_type", "STF_TYPE", values.c_str(), help.c_str(), "basic",
                                  [](const std::string &v, Options *o) {
                                    if (!find_method(v))
                                      return set_error(STF_ERR_OPTION, "-stf_type '%s' unknown (available: %s)",
                                                       v.c_str(), method_names(", ").c_str());
                                    o->type = v;
                                    return static_cast<int>(STF_SUCCESS);
                                  }};
  return spec;
}

}  // namespace stf
