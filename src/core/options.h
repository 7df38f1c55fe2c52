// Library options: defaults, STF_* environment variables, options strings.
#pragma once

#include <string>

#include "starforest.h"

namespace stf {

enum class TwoSided { nbx, allreduce };
// Who may pass device memory to MPI: ask the device, never (stage through
// pinned host buffers), always.
enum class DeviceAware { autodetect, off, on };
enum class WindowSync { fence, lock, pscw };

struct Options {
  std::string type = "basic";         // transport
  WindowSync window_sync = WindowSync::fence;  // synchronisation of the window transport
  TwoSided twosided = TwoSided::nbx;  // discovery algorithm at set-up
  bool validate = false;              // collective root-offset check at set-up
  bool pack_opt = true;               // index analysis (contiguous/strided, no-copy paths)
  std::string device = "host";        // device backend (process-wide, read at first use)
  stf_stream_model stream_model = STF_STREAM_MODEL_B;  // device synchronisation model
  DeviceAware device_aware = DeviceAware::autodetect;
};

// Defaults for new SFs: built-in values, then STF_* variables, then the
// string given to stf_set_options().
int default_options(Options *out);
// Apply an options string ("-stf_type basic ...") on top of *opts; *opts is
// unchanged on error.
int parse_options(const char *text, Options *opts);
// Set opts->type to a known transport name (STF_ERR_OPTION otherwise).
int set_type(const char *type, Options *opts);
const char *twosided_name(TwoSided t);
const char *stream_model_name(stf_stream_model m);  // "A", "B" or "C"
const char *device_aware_name(DeviceAware a);
const char *window_sync_name(WindowSync w);
// The transport names -stf_type accepts, comma separated (for messages and help).
const char *transport_names();

}  // namespace stf
