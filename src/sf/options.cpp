// The options of every layer in one list: stf_set_options, per-SF option
// strings, STF_* variables and the help text all read it. Methods (the
// values of -stf_type) and devices bring theirs from their tables.
#include <algorithm>

#include "core/error.h"
#include "device/registry.h"
#include "sf/methods.h"
#include "sf/sf.h"

namespace stf {

const OptionSpecs &all_option_specs() {
  static const OptionSpecs specs = [] {
    OptionSpecs s = {&type_option()};
    for (const Method &m : methods())
      for (const OptionSpec *o : m.options)
        if (std::find(s.begin(), s.end(), o) == s.end()) s.push_back(o);  // rows may share options
    for (const OptionSpec *o : base_option_specs()) s.push_back(o);
    s.push_back(&device_option());
    return s;
  }();
  return specs;
}

}  // namespace stf

extern "C" int stf_set_options(const char *options) try {
  stf::Options probe;
  STF_CHECK(stf::parse_options(stf::all_option_specs(), options, &probe));  // reject bad strings before keeping them
  stf::append_global_options(options);
  return STF_SUCCESS;
} STF_API_CATCH

extern "C" const char *stf_options_help(void) {
  try {
    static const std::string text = stf::options_help(stf::all_option_specs());
    return text.c_str();
  } catch (...) {  // it cannot fail: without memory for the text there is none
    return "";
  }
}
