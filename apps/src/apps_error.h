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
// Inside a catch handler: the code and message for the exception in flight
// (allocation failures are STF_ERR_MEMORY, anything else STF_ERR_INTERNAL).
int exception_error() noexcept;
}  // namespace stf_apps

// No exception may cross the C API: every extern "C" function of the apps
// library is a function-try-block ending in STF_APPS_CATCH.
#define STF_APPS_CATCH \
  catch (...) {        \
    return ::stf_apps::exception_error(); \
  }
