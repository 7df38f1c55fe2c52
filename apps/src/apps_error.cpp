#include "apps_error.h"

#include <cstdarg>
#include <cstdio>

namespace stf_apps {

int fail(int code, const char *fmt, ...) {
  char message[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  return stf_set_error(code, "%s", message);
}

}  // namespace stf_apps
