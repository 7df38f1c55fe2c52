// Error messages of the apps library (thread-local, like the core's).
#pragma once

#include "stf_apps.h"

namespace stf_apps {
// Record a printf-style message for code and return code.
int fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
}  // namespace stf_apps
