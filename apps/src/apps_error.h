// Errors of the apps library go to the core's channel (stf_set_error), so
// stf_last_error_message() explains a failure of either library.
#pragma once

#include "stf_apps.h"

namespace stf_apps {
// Record a printf-style message for code and return code.
int fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// A core call's result: on failure, its message gets `what: ` in front.
inline int core(int rc, const char *what) {
  return rc ? fail(rc, "%s: %s", what, stf_last_error_message()) : STF_SUCCESS;
}
}  // namespace stf_apps
