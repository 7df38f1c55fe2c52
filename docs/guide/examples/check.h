/* Shared by the guide's examples: stop the whole job on any starforest
 * error, with the code's name and the library's explanation. */
#ifndef GUIDE_CHECK_H
#define GUIDE_CHECK_H

#include <starforest.h>
#include <stdio.h>

#define CHECK(call)                                                                     \
  do {                                                                                  \
    int rc_ = (call);                                                                   \
    if (rc_ != STF_SUCCESS) {                                                           \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, stf_error_name(rc_),       \
              stf_last_error_message());                                                \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                     \
    }                                                                                   \
  } while (0)

#endif
