#include "apps_error.h"

#include <cstdarg>
#include <cstdio>

namespace stf_apps {
namespace {
thread_local char message[1024] = "";
}

int fail(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = std::snprintf(message, sizeof message, "%s: ", stf_error_name(code));
  if (n < 0 || n >= static_cast<int>(sizeof message)) n = 0;
  std::vsnprintf(message + n, sizeof message - n, fmt, ap);
  va_end(ap);
  return code;
}
}  // namespace stf_apps

extern "C" const char *stf_apps_last_error_message(void) { return stf_apps::message; }
