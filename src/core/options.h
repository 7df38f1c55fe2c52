// Options: the values an SF is configured with, and the machinery that reads
// them from option strings and STF_* environment variables. Which options
// exist is not known here: every layer that has options describes them with
// OptionSpec rows (transports and devices in their registries), and the SF
// layer hands the whole list to the parser (sf/options.cpp).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "starforest.h"

namespace stf {

enum class TwoSided { nbx, allreduce };
// Who may pass device memory to MPI: ask the device, never (stage through
// pinned host buffers), always.
enum class DeviceAware { autodetect, off, on };

struct Options;

// One option: "-name value" in option strings, env in the environment.
struct OptionSpec {
  const char *name;    // without the dash, e.g. "stf_window_sync"
  const char *env;     // e.g. "STF_WINDOW_SYNC"
  const char *values;  // the accepted values as "a|b|c" or "lo..hi" (shown in the help)
  const char *help;    // what it does, ending with its default
  const char *fallback;  // the value when neither string nor environment gives one
  // Store a value in o, or fail with STF_ERR_OPTION. nullptr: the options
  // layer keeps it in o->extra[name] for the option's owner, a word that
  // must be one of `values`, or, where min <= max, a whole number in
  // [min, max] (and one of `values` where they are listed as "a|b|c").
  int (*apply)(const std::string &value, Options *o);
  long min = 0, max = -1;
};
using OptionSpecs = std::vector<const OptionSpec *>;

// The value of an option kept for its owner: parsed once, when it is set.
struct OptionValue {
  std::string text;  // as given
  long number = 0;   // for whole-number options
};

struct Options {
  std::string type = "basic";                          // method: transport, strategy or auto (sf/methods.h)
  TwoSided twosided = TwoSided::nbx;                   // discovery algorithm at set-up
  bool validate = true;                                // collective root-offset check at set-up
  bool log_view = false;                               // timing summary at stf_destroy
  bool view = false;                                   // stf_view at the end of set-up
  bool debug = false;                                  // every begin agrees on its argument checks
  bool pack_opt = true;                                // index analysis (contiguous/strided, no-copy paths)
  bool repeat_begins = true;                           // begins repeating recent arguments restart a kept slot
  stf_stream_model stream_model = STF_STREAM_MODEL_B;  // device synchronisation model
  DeviceAware device_aware = DeviceAware::autodetect;
  int ranks_per_node = 0;  // emulated nodes of this many consecutive ranks; 0: the real nodes
  std::map<std::string, OptionValue> extra;  // options of transports, strategies and the chooser, by name
  // An option kept in extra (spec.apply == nullptr), or its fallback.
  std::string text(const OptionSpec &spec) const;
  long number(const OptionSpec &spec) const;  // a whole-number option
  // The value as the ranks must give it alike: the number, or the text.
  std::string agreed_value(const OptionSpec &spec) const;
};

// Whether spec takes a whole number (min <= max).
inline bool is_number(const OptionSpec &spec) { return spec.min <= spec.max; }
// A whole number in [spec.min, spec.max], and one of spec.values where they
// are a list; STF_ERR_OPTION with a message otherwise.
int parse_number(const OptionSpec &spec, const std::string &v, long *out);

// The options of the layers below the transports: discovery, validation,
// index analysis, device data paths.
const OptionSpecs &base_option_specs();

// Whether word starts an option rather than being a value ("-stf_x" or
// "--size", not "-1").
bool starts_option(const std::string &word);

// Apply an options string ("-stf_type basic ...") on top of *opts; *opts is
// unchanged on error.
int parse_options(const OptionSpecs &specs, const char *text, Options *opts);
// Built-in values, then the STF_<NAME> variables, then the whole string in
// STF_OPTIONS, then the process-wide string.
int default_options(const OptionSpecs &specs, Options *out);
// The help text listing specs.
std::string options_help(const OptionSpecs &specs);

// The process-wide options (stf_set_options): text is checked by the caller,
// then merged in, its values replacing earlier ones of the same options
// (bare flags stored as "-name 1").
void append_global_options(const OptionSpecs &specs, const char *text);
// The merged process-wide options as one string (for tests).
std::string global_options();
// A process-wide setting that belongs to no SF (the device): its last value
// in the process-wide string, else in STF_OPTIONS, else its environment
// variable, else its fallback. Not checked here: the string was checked when it was set, and
// the owner checks the environment's value.
std::string process_setting(const OptionSpec &spec);

// For views and messages.
const char *twosided_name(TwoSided t);
const char *stream_model_name(stf_stream_model m);  // "A", "B" or "C"
const char *device_aware_name(DeviceAware a);

}  // namespace stf
