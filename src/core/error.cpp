#include "core/error.h"

#include <cstdarg>
#include <cstdio>
#include <exception>
#include <new>
#include <stdexcept>

namespace stf {
namespace {
thread_local char last_message[1024] = "";
}

// The message says what went wrong; the code's name is stf_error_name's
// business, so callers print both without repeating either.
int set_error_v(int code, const char *fmt, va_list ap) {
  std::vsnprintf(last_message, sizeof last_message, fmt, ap);
  return code;
}

int set_error(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_error_v(code, fmt, ap);
  va_end(ap);
  return code;
}

int mpi_error(int mpi_rc, const char *call) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(mpi_rc, text, &len) != MPI_SUCCESS) std::snprintf(text, sizeof text, "code %d", mpi_rc);
  return set_error(STF_ERR_MPI, "%s failed: %s", call, text);
}

// A container asked for more than it can hold (length_error) is memory the
// process cannot have, as much as a failed allocation (bad_alloc).
int exception_error() noexcept {
  try {
    throw;
  } catch (const std::bad_alloc &) {
    return set_error(STF_ERR_MEMORY, "out of memory");
  } catch (const std::length_error &e) {
    return set_error(STF_ERR_MEMORY, "allocation too large (%s)", e.what());
  } catch (const std::exception &e) {
    return set_error(STF_ERR_INTERNAL, "unexpected exception: %s", e.what());
  } catch (...) {
    return set_error(STF_ERR_INTERNAL, "unexpected exception");
  }
}

}  // namespace stf

extern "C" const char *stf_last_error_message(void) { return stf::last_message; }

extern "C" int stf_set_error(int code, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  stf::set_error_v(code, format ? format : "", ap);
  va_end(ap);
  return code;
}

extern "C" const char *stf_error_name(int code) {
  switch (code) {
    case STF_SUCCESS: return "STF_SUCCESS";
    case STF_ERR_ARG: return "STF_ERR_ARG";
    case STF_ERR_NULL: return "STF_ERR_NULL";
    case STF_ERR_RANK: return "STF_ERR_RANK";
    case STF_ERR_OFFSET: return "STF_ERR_OFFSET";
    case STF_ERR_DUPLICATE: return "STF_ERR_DUPLICATE";
    case STF_ERR_STATE: return "STF_ERR_STATE";
    case STF_ERR_TYPE: return "STF_ERR_TYPE";
    case STF_ERR_OP: return "STF_ERR_OP";
    case STF_ERR_REQUEST: return "STF_ERR_REQUEST";
    case STF_ERR_OPTION: return "STF_ERR_OPTION";
    case STF_ERR_MPI: return "STF_ERR_MPI";
    case STF_ERR_MEMORY: return "STF_ERR_MEMORY";
    case STF_ERR_UNSUPPORTED: return "STF_ERR_UNSUPPORTED";
    case STF_ERR_INTERNAL: return "STF_ERR_INTERNAL";
    case STF_ERR_DEVICE: return "STF_ERR_DEVICE";
    case STF_ERR_TIMEOUT: return "STF_ERR_TIMEOUT";
    default: return "STF_ERR_UNKNOWN";
  }
}
