#include "apps_error.h"

#include <cstdarg>
#include <cstdio>
#include <exception>
#include <new>
#include <stdexcept>

namespace stf_apps {

int fail(int code, const char *fmt, ...) {
  char message[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  return stf_set_error(code, "%s", message);
}

int exception_error() noexcept {
  try {
    throw;
  } catch (const std::bad_alloc &) {
    return fail(STF_ERR_MEMORY, "out of memory");
  } catch (const std::length_error &e) {  // a container asked for more than it can hold
    return fail(STF_ERR_MEMORY, "allocation too large (%s)", e.what());
  } catch (const std::exception &e) {
    return fail(STF_ERR_INTERNAL, "unexpected exception: %s", e.what());
  } catch (...) {
    return fail(STF_ERR_INTERNAL, "unexpected exception");
  }
}

}  // namespace stf_apps
