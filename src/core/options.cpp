#include "core/options.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>

#include "core/error.h"

namespace stf {
namespace {

int parse_bool(const std::string &name, const std::string &v, bool *out) {
  if (v == "1" || v == "true" || v == "yes") return *out = true, STF_SUCCESS;
  if (v == "0" || v == "false" || v == "no") return *out = false, STF_SUCCESS;
  return set_error(STF_ERR_OPTION, "-%s expects 0 or 1, got '%s'", name.c_str(), v.c_str());
}

bool one_of(const char *values, const std::string &v) {
  std::istringstream in(values);
  std::string choice;
  while (std::getline(in, choice, '|'))
    if (choice == v) return true;
  return false;
}

const OptionSpec twosided_spec = {
    "stf_twosided", "STF_TWOSIDED", "nbx|allreduce",
    "two-sided discovery at set-up: NBX (Issend + Ibarrier) or a sum of counts (MPI_Reduce_scatter_block; "
    "default nbx)",
    "nbx",
    [](const std::string &v, Options *o) {
      if (v == "nbx") o->twosided = TwoSided::nbx;
      else if (v == "allreduce") o->twosided = TwoSided::allreduce;
      else return set_error(STF_ERR_OPTION, "-stf_twosided '%s' unknown (nbx|allreduce)", v.c_str());
      return static_cast<int>(STF_SUCCESS);
    }};
const OptionSpec validate_spec = {
    "stf_validate", "STF_VALIDATE", "0|1",
    "collective checks at set-up, so that set-up fails on every rank or on none: every root offset is below its "
    "owner's nroots, and no rank failed to make the transport; 0 skips their two allreduces, and a failure then "
    "happens on its own rank only, the others waiting for it. Whatever it says, one allreduce checks that the "
    "ranks give alike the options that must be (the transport and its options, -stf_validate, -stf_twosided, "
    "-stf_ranks_per_node, -stf_debug, -stf_log_view, -stf_view) (default 1)",
    "1",
    [](const std::string &v, Options *o) { return parse_bool("stf_validate", v, &o->validate); }};
const OptionSpec log_view_spec = {
    "stf_log_view", "STF_LOG_VIEW", "0|1",
    "print the SF's operation timings (min/avg/max over ranks) when it is destroyed (default 0)", "0",
    [](const std::string &v, Options *o) { return parse_bool("stf_log_view", v, &o->log_view); }};
const OptionSpec view_spec = {
    "stf_view", "STF_VIEW", "0|1",
    "print the SF's view (stf_view, to stdout from rank 0) when its set-up ends (default 0)", "0",
    [](const std::string &v, Options *o) { return parse_bool("stf_view", v, &o->view); }};
const OptionSpec debug_spec = {
    "stf_debug", "STF_DEBUG", "0|1",
    "debugging aid: every begin checks its arguments (data pointers, unit and op, request pointer) on every rank "
    "and agrees on the verdict with one allreduce before any message is posted, so an error on one rank is an "
    "error on all instead of a hang; costs that allreduce per operation (default 0)",
    "0", [](const std::string &v, Options *o) { return parse_bool("stf_debug", v, &o->debug); }};
const OptionSpec pack_opt_spec = {
    "stf_pack_opt", "STF_PACK_OPT", "0|1",
    "index analysis at set-up: contiguous and strided messages, sends and receives in user memory, memcpy or "
    "nothing for the self part; 0 packs every index list as an array (default 1)",
    "1", [](const std::string &v, Options *o) { return parse_bool("stf_pack_opt", v, &o->pack_opt); }};
const OptionSpec repeat_begins_spec = {
    "stf_repeat_begins", "STF_REPEAT_BEGINS", "0|1",
    "a bcast or reduce begun on host memory with the arguments of recent begins restarts the operation the SF "
    "kept for them, as stf_start restarts a prepared one; 0 begins every operation anew (default 1)",
    "1", [](const std::string &v, Options *o) { return parse_bool("stf_repeat_begins", v, &o->repeat_begins); }};
const OptionSpec stream_model_spec = {
    "stf_stream_model", "STF_STREAM_MODEL", "A|B|C",
    "device synchronisation per operation on device data: A = data comes from an unknown stream (synchronise "
    "the device before packing, the library stream after unpacking); B = data is on the library stream, one "
    "wait before MPI touches device memory; C = no host wait in begin, the send is posted from end after the "
    "packing event (default B)",
    "B", [](const std::string &v, Options *o) {
      if (v == "A") o->stream_model = STF_STREAM_MODEL_A;
      else if (v == "B") o->stream_model = STF_STREAM_MODEL_B;
      else if (v == "C") o->stream_model = STF_STREAM_MODEL_C;
      else return set_error(STF_ERR_OPTION, "-stf_stream_model '%s' unknown (A|B|C)", v.c_str());
      return static_cast<int>(STF_SUCCESS);
    }};
const OptionSpec device_aware_spec = {
    "stf_device_aware", "STF_DEVICE_AWARE", "auto|0|1",
    "hand device pointers to MPI (1), or stage device data through pinned host buffers (0); auto asks the "
    "device whether its MPI accepts device memory (default auto)",
    "auto", [](const std::string &v, Options *o) {
      if (v == "auto") o->device_aware = DeviceAware::autodetect;
      else if (v == "1") o->device_aware = DeviceAware::on;
      else if (v == "0") o->device_aware = DeviceAware::off;
      else return set_error(STF_ERR_OPTION, "-stf_device_aware '%s' unknown (auto|0|1)", v.c_str());
      return static_cast<int>(STF_SUCCESS);
    }};

const OptionSpec ranks_per_node_spec = {
    "stf_ranks_per_node", "STF_RANKS_PER_NODE", "0|K",
    "nodes as node-aware code sees them: 0 = the ranks that share memory (MPI_COMM_TYPE_SHARED); K > 0 = "
    "emulated nodes of K consecutive ranks, for tests on one host (default 0)",
    "0", [](const std::string &v, Options *o) {
      char *end = nullptr;
      const long k = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || k < 0 || k > 1 << 20)
        return set_error(STF_ERR_OPTION, "-stf_ranks_per_node expects a count >= 0, got '%s'", v.c_str());
      o->ranks_per_node = static_cast<int>(k);
      return static_cast<int>(STF_SUCCESS);
    }};

const OptionSpec *spec_named(const OptionSpecs &specs, const std::string &name) {
  for (const OptionSpec *s : specs)
    if (name == s->name) return s;
  return nullptr;
}

int unknown_option(const std::string &name) {
  return set_error(STF_ERR_OPTION, "unknown option -%s (see stf_options_help())", name.c_str());
}

int set_one(const OptionSpecs &specs, const std::string &name, const std::string &value, Options *o) {
  const OptionSpec *s = spec_named(specs, name);
  if (!s) return unknown_option(name);
  if (s->apply) return s->apply(value, o);
  OptionValue kept{value, 0};
  if (is_number(*s)) STF_CHECK(parse_number(*s, value, &kept.number));
  else if (!one_of(s->values, value))
    return set_error(STF_ERR_OPTION, "-%s '%s' unknown (%s)", s->name, value.c_str(), s->values);
  o->extra[name] = std::move(kept);
  return STF_SUCCESS;
}

// Whether spec is a yes/no option, which a bare "-name" turns on.
bool is_flag(const OptionSpec &spec) { return std::strcmp(spec.values, "0|1") == 0; }

// Calls f(name, value) for each "-name value" pair of text; a flag (see
// is_flag; with no specs, any option) not followed by a value is "-name 1".
template <class F>
int for_each_pair(const OptionSpecs &specs, const char *text, F f) {
  std::istringstream in(text ? text : "");
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(std::move(w));
  for (std::size_t i = 0; i < words.size(); i++) {
    const std::string &word = words[i];
    if (!starts_option(word))
      return set_error(STF_ERR_OPTION, "expected an option such as -stf_type, got '%s'", word.c_str());
    const std::string name = word.substr(1);
    const bool bare = i + 1 == words.size() || starts_option(words[i + 1]);
    if (bare && !specs.empty()) {
      const OptionSpec *s = spec_named(specs, name);
      if (!s) return unknown_option(name);
      if (!is_flag(*s)) return set_error(STF_ERR_OPTION, "option %s needs a value", word.c_str());
    }
    STF_CHECK(f(name, bare ? std::string("1") : words[++i]));
  }
  return STF_SUCCESS;
}

// What stf_set_options accepted, one "-name value" per option: a later
// value replaces an earlier one (and moves to the end, keeping the order in
// which the last values were given), so repeated calls keep it bounded.
std::mutex global_mutex;
std::vector<std::pair<std::string, std::string>> global_pairs;

std::string global_copy() {
  std::lock_guard<std::mutex> lock(global_mutex);
  std::string s;
  for (const auto &p : global_pairs) s += " -" + p.first + " " + p.second;
  return s;
}

}  // namespace

int parse_number(const OptionSpec &spec, const std::string &v, long *out) {
  char *end = nullptr;
  const long x = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end || x < spec.min || x > spec.max)
    return set_error(STF_ERR_OPTION, "-%s expects a whole number from %ld to %ld, got '%s'", spec.name, spec.min,
                     spec.max, v.c_str());
  if (std::strchr(spec.values, '|') && !one_of(spec.values, v))
    return set_error(STF_ERR_OPTION, "-%s '%s' unknown (%s)", spec.name, v.c_str(), spec.values);
  *out = x;
  return STF_SUCCESS;
}

bool starts_option(const std::string &word) {
  return word.size() >= 2 && word[0] == '-' && !std::isdigit(static_cast<unsigned char>(word[1]));
}

std::string Options::text(const OptionSpec &spec) const {
  auto it = extra.find(spec.name);
  return it != extra.end() ? it->second.text : spec.fallback;
}

long Options::number(const OptionSpec &spec) const {
  auto it = extra.find(spec.name);
  // A fallback is the owner's constant, a valid number by construction.
  return it != extra.end() ? it->second.number : std::strtol(spec.fallback, nullptr, 10);
}

std::string Options::agreed_value(const OptionSpec &spec) const {
  return is_number(spec) ? std::to_string(number(spec)) : text(spec);
}

const OptionSpecs &base_option_specs() {
  static const OptionSpecs specs = {&twosided_spec,      &validate_spec,     &debug_spec,
                                    &pack_opt_spec,      &repeat_begins_spec, &stream_model_spec,
                                    &device_aware_spec,  &ranks_per_node_spec, &log_view_spec,
                                    &view_spec};
  return specs;
}

int parse_options(const OptionSpecs &specs, const char *text, Options *opts) {
  Options o = *opts;
  STF_CHECK(for_each_pair(specs, text, [&](const std::string &name, const std::string &value) {
    return set_one(specs, name, value, &o);
  }));
  *opts = o;
  return STF_SUCCESS;
}

const char *const options_variable = "STF_OPTIONS";

int default_options(const OptionSpecs &specs, Options *out) {
  Options o;
  for (const OptionSpec *s : specs) {
    const char *v = std::getenv(s->env);
    if (!v || !*v) continue;
    if (int rc = set_one(specs, s->name, v, &o)) {
      std::string why = stf_last_error_message();  // set_error overwrites it
      return set_error(rc, "environment %s=%s: %s", s->env, v, why.c_str());
    }
  }
  if (const char *v = std::getenv(options_variable)) {
    if (int rc = parse_options(specs, v, &o)) {
      std::string why = stf_last_error_message();
      return set_error(rc, "environment %s='%s': %s", options_variable, v, why.c_str());
    }
  }
  STF_CHECK(parse_options(specs, global_copy().c_str(), &o));
  *out = o;
  return STF_SUCCESS;
}

std::string options_help(const OptionSpecs &specs) {
  std::ostringstream s;
  s << "starforest options (options string / environment variable):\n";
  for (const OptionSpec *o : specs)
    s << "  -" << o->name << " <" << o->values << ">  (" << o->env << ")\n      " << o->help << "\n";
  return s.str();
}

void append_global_options(const OptionSpecs &specs, const char *text) {
  std::lock_guard<std::mutex> lock(global_mutex);
  for_each_pair(specs, text, [](const std::string &name, const std::string &value) {
    auto same = [&name](const std::pair<std::string, std::string> &p) { return p.first == name; };
    global_pairs.erase(std::remove_if(global_pairs.begin(), global_pairs.end(), same), global_pairs.end());
    global_pairs.emplace_back(name, value);
    return static_cast<int>(STF_SUCCESS);
  });
}

std::string global_options() { return global_copy(); }

std::string process_setting(const OptionSpec &spec) {
  std::string found;
  auto take = [&](const std::string &name, const std::string &value) {
    if (name == spec.name) found = value;
    return static_cast<int>(STF_SUCCESS);
  };
  // Both strings are checked with every option's spec elsewhere (stf_set_options, stf_create).
  const OptionSpecs any;
  for_each_pair(any, global_copy().c_str(), take);
  if (!found.empty()) return found;
  if (const char *v = std::getenv(options_variable)) for_each_pair(any, v, take);
  if (!found.empty()) return found;
  const char *v = std::getenv(spec.env);
  return v && *v ? v : spec.fallback;
}

const char *twosided_name(TwoSided t) { return t == TwoSided::nbx ? "nbx" : "allreduce"; }

const char *stream_model_name(stf_stream_model m) {
  return m == STF_STREAM_MODEL_A ? "A" : m == STF_STREAM_MODEL_C ? "C" : "B";
}

const char *device_aware_name(DeviceAware a) {
  return a == DeviceAware::autodetect ? "auto" : a == DeviceAware::on ? "1" : "0";
}

}  // namespace stf
