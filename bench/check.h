// Shared by the benchmarks: every library call is checked, because a
// benchmark that silently measures a failing call would report nonsense.
#pragma once

#include <starforest.h>

#include <cstdio>

#define CHECK_STF(call)                                                            \
  do {                                                                             \
    int rc_ = (call);                                                              \
    if (rc_ != STF_SUCCESS) {                                                      \
      std::fprintf(stderr, "%s:%d: %s failed: %s: %s\n", __FILE__, __LINE__, #call, \
                   stf_error_name(rc_), stf_last_error_message());                 \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                \
    }                                                                              \
  } while (0)
