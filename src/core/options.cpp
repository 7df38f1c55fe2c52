#include "core/options.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <vector>

#include "core/error.h"

namespace stf {
namespace {

struct OptionSpec {
  const char *name;  // in option strings: -name value
  const char *env;   // environment variable
  const char *values;
  const char *help;
};

const OptionSpec specs[] = {
    {"stf_type", "STF_TYPE", "basic|neighbor|window|collective|allgatherv|allgather|gatherv|gather|alltoall",
     "transport that moves messages: persistent point-to-point, MPI-3 neighbourhood collectives on "
     "distributed-graph communicators, MPI-3 one-sided windows (see -stf_window_sync), or a collective for SFs "
     "with that pattern ('collective': the one that fits; other SFs and operations fall back to basic) "
     "(default basic)"},
    {"stf_window_sync", "STF_WINDOW_SYNC", "fence|lock|pscw",
     "synchronisation of the window transport: MPI_Win_fence, passive-target lock_all + flush, or "
     "post-start-complete-wait (default fence)"},
    {"stf_twosided", "STF_TWOSIDED", "nbx|allreduce",
     "two-sided discovery at set-up: NBX (Issend + Ibarrier) or allreduce of counts (default nbx)"},
    {"stf_validate", "STF_VALIDATE", "0|1",
     "collective check at set-up that every root offset is below its owner's nroots (default 0)"},
    {"stf_pack_opt", "STF_PACK_OPT", "0|1",
     "index analysis at set-up: contiguous and strided messages, sends and receives in user memory, "
     "memcpy or nothing for the self part; 0 packs every index list as an array (default 1)"},
    {"stf_device", "STF_DEVICE", "host|emu|cuda",
     "device backend, process-wide, taken when a device is first needed (stf_device_select overrides): "
     "none, the emulated device that runs device code paths on CPU threads, or a CUDA GPU (default host)"},
    {"stf_stream_model", "STF_STREAM_MODEL", "A|B|C",
     "device synchronisation per operation on device data: A = data comes from an unknown stream "
     "(synchronise the device before packing, the library stream after unpacking); B = data is on the "
     "library stream, one wait before MPI touches device memory; C = no host wait in begin, the send is "
     "posted from end after the packing event (default B)"},
    {"stf_device_aware", "STF_DEVICE_AWARE", "auto|0|1",
     "hand device pointers to MPI (1), or stage device data through pinned host buffers (0); auto asks "
     "the device whether its MPI accepts device memory (default auto)"},
};

std::mutex global_mutex;
std::string global_string;  // last string accepted by stf_set_options

int parse_bool(const char *name, const std::string &v, bool *out) {
  if (v == "1" || v == "true" || v == "yes") return *out = true, STF_SUCCESS;
  if (v == "0" || v == "false" || v == "no") return *out = false, STF_SUCCESS;
  return set_error(STF_ERR_OPTION, "-%s expects 0 or 1, got '%s'", name, v.c_str());
}

const char *const transports[] = {"basic",      "neighbor", "window",  "collective", "allgatherv",
                                  "allgather", "gatherv",  "gather",  "alltoall"};

int set_one(const std::string &name, const std::string &value, Options *o) {
  if (name == "stf_type") {
    bool known = false;
    for (const char *t : transports) known |= value == t;
    if (!known)
      return set_error(STF_ERR_OPTION, "-stf_type '%s' unknown (available: %s)", value.c_str(), transport_names());
    o->type = value;
  } else if (name == "stf_window_sync") {
    if (value == "fence") o->window_sync = WindowSync::fence;
    else if (value == "lock") o->window_sync = WindowSync::lock;
    else if (value == "pscw") o->window_sync = WindowSync::pscw;
    else return set_error(STF_ERR_OPTION, "-stf_window_sync '%s' unknown (fence|lock|pscw)", value.c_str());
  } else if (name == "stf_twosided") {
    if (value == "nbx") o->twosided = TwoSided::nbx;
    else if (value == "allreduce") o->twosided = TwoSided::allreduce;
    else return set_error(STF_ERR_OPTION, "-stf_twosided '%s' unknown (nbx|allreduce)", value.c_str());
  } else if (name == "stf_validate") {
    return parse_bool("stf_validate", value, &o->validate);
  } else if (name == "stf_pack_opt") {
    return parse_bool("stf_pack_opt", value, &o->pack_opt);
  } else if (name == "stf_device") {
    if (value != "host" && value != "emu" && value != "cuda")
      return set_error(STF_ERR_OPTION, "-stf_device '%s' unknown (available: host, emu, cuda)", value.c_str());
    o->device = value;
  } else if (name == "stf_stream_model") {
    if (value == "A") o->stream_model = STF_STREAM_MODEL_A;
    else if (value == "B") o->stream_model = STF_STREAM_MODEL_B;
    else if (value == "C") o->stream_model = STF_STREAM_MODEL_C;
    else return set_error(STF_ERR_OPTION, "-stf_stream_model '%s' unknown (A|B|C)", value.c_str());
  } else if (name == "stf_device_aware") {
    if (value == "auto") o->device_aware = DeviceAware::autodetect;
    else if (value == "1") o->device_aware = DeviceAware::on;
    else if (value == "0") o->device_aware = DeviceAware::off;
    else return set_error(STF_ERR_OPTION, "-stf_device_aware '%s' unknown (auto|0|1)", value.c_str());
  } else {
    return set_error(STF_ERR_OPTION, "unknown option -%s (see stf_options_help())", name.c_str());
  }
  return STF_SUCCESS;
}

}  // namespace

int parse_options(const char *text, Options *opts) {
  if (!text) return STF_SUCCESS;
  Options o = *opts;
  std::istringstream in(text);
  std::string word;
  while (in >> word) {
    if (word.size() < 2 || word[0] != '-')
      return set_error(STF_ERR_OPTION, "expected an option such as -stf_type, got '%s'", word.c_str());
    std::string value;
    if (!(in >> value)) return set_error(STF_ERR_OPTION, "option %s needs a value", word.c_str());
    STF_CHECK(set_one(word.substr(1), value, &o));
  }
  *opts = o;
  return STF_SUCCESS;
}

int default_options(Options *out) {
  Options o;
  for (const OptionSpec &s : specs) {
    const char *v = std::getenv(s.env);
    if (v && *v) {
      int rc = set_one(s.name, v, &o);
      if (rc) {
        std::string why = stf_last_error_message();  // set_error overwrites it
        return set_error(rc, "environment %s=%s: %s", s.env, v, why.c_str());
      }
    }
  }
  std::lock_guard<std::mutex> lock(global_mutex);
  STF_CHECK(parse_options(global_string.c_str(), &o));
  *out = o;
  return STF_SUCCESS;
}

int set_type(const char *type, Options *opts) {
  if (!type) return set_error(STF_ERR_NULL, "transport type is NULL");
  return set_one("stf_type", type, opts);
}

const char *twosided_name(TwoSided t) { return t == TwoSided::nbx ? "nbx" : "allreduce"; }

const char *stream_model_name(stf_stream_model m) {
  return m == STF_STREAM_MODEL_A ? "A" : m == STF_STREAM_MODEL_C ? "C" : "B";
}

const char *device_aware_name(DeviceAware a) {
  return a == DeviceAware::autodetect ? "auto" : a == DeviceAware::on ? "1" : "0";
}

const char *window_sync_name(WindowSync w) {
  return w == WindowSync::fence ? "fence" : w == WindowSync::lock ? "lock" : "pscw";
}

const char *transport_names() {
  static const std::string names = [] {
    std::string s;
    for (const char *t : transports) s += (s.empty() ? "" : ", ") + std::string(t);
    return s;
  }();
  return names.c_str();
}

}  // namespace stf

extern "C" int stf_set_options(const char *options) {
  stf::Options probe;
  STF_CHECK(stf::parse_options(options, &probe));  // reject bad strings before keeping them
  std::lock_guard<std::mutex> lock(stf::global_mutex);
  if (options) stf::global_string += std::string(" ") + options;
  return STF_SUCCESS;
}

extern "C" const char *stf_options_help(void) {
  static const std::string text = [] {
    std::ostringstream s;
    s << "starforest options (options string / environment variable):\n";
    for (const stf::OptionSpec &o : stf::specs)
      s << "  -" << o.name << " <" << o.values << ">  (" << o.env << ")\n      " << o.help << "\n";
    return s.str();
  }();
  return text.c_str();
}
