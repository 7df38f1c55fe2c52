// Errors are values: every internal function returns an stf_error code and
// records a human-readable message in a thread-local slot.
#pragma once

#include <cstdarg>

#include "starforest.h"

namespace stf {

// Record a printf-style message for code and return code.
int set_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int set_error_v(int code, const char *fmt, va_list ap);
// Record an MPI failure (MPI error string included) and return STF_ERR_MPI.
int mpi_error(int mpi_rc, const char *call);
// Inside a catch handler: the code and message for the exception in flight
// (allocation failures are STF_ERR_MEMORY, anything else STF_ERR_INTERNAL).
int exception_error() noexcept;
// Runs step; an exception (an allocation failing half way) becomes its
// code, so that the caller cleans up as after any failure.
template <class Step>
int contained(Step step) {
  try {
    return step();
  } catch (...) {
    return exception_error();
  }
}

}  // namespace stf

#define STF_CHECK(call)                 \
  do {                                  \
    int stf_rc_ = (call);               \
    if (stf_rc_ != STF_SUCCESS) return stf_rc_; \
  } while (0)

// No exception may cross the C API: every extern "C" function that can
// allocate is a function-try-block ending in STF_API_CATCH:
//   extern "C" int stf_x(...) try { ... } STF_API_CATCH
#define STF_API_CATCH \
  catch (...) {       \
    return ::stf::exception_error(); \
  }

#define STF_MPI(call)                                            \
  do {                                                           \
    int stf_mpi_rc_ = (call);                                    \
    if (stf_mpi_rc_ != MPI_SUCCESS) return ::stf::mpi_error(stf_mpi_rc_, #call); \
  } while (0)
