// The options of every layer in one list: stf_set_options, per-SF option
// strings, STF_* variables and the help text all read it. Methods (the
// values of -stf_type) and devices bring theirs from their tables.
#include <algorithm>
#include <string>

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
  stf::append_global_options(stf::all_option_specs(), options);
  return STF_SUCCESS;
} STF_API_CATCH

extern "C" int stf_set_options_from_args(int argc, char *const argv[]) try {
  if (argc > 0 && !argv) return stf::set_error(STF_ERR_NULL, "stf_set_options_from_args: argv is NULL");
  std::string text;
  bool value_next = false;  // the previous word was a -stf_ option: this one may be its value
  for (int i = 1; i < argc; i++) {
    if (!argv[i]) return stf::set_error(STF_ERR_NULL, "stf_set_options_from_args: argv[%d] is NULL", i);
    const std::string word = argv[i];
    const bool option = word.compare(0, 5, "-stf_") == 0;
    if (!option && (!value_next || stf::starts_option(word))) {  // the program's own
      value_next = false;
      continue;
    }
    if (word.empty() || word.find_first_of(" \t\n") != std::string::npos)
      return stf::set_error(STF_ERR_OPTION, "command line: the value '%s' of %s is empty or has spaces", word.c_str(),
                            argv[i - 1]);
    text += " " + word;
    value_next = option;
  }
  if (int rc = stf_set_options(text.c_str())) {
    std::string why = stf_last_error_message();
    return stf::set_error(rc, "command line: %s", why.c_str());
  }
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
