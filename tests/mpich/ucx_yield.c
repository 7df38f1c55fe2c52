// Preloaded into MPICH test runs with ucx_finalize.c
// (cmake/StfMpiLauncher.cmake). MPICH over UCX waits by calling
// ucp_worker_progress in a loop and never gives up the core. With more
// ranks than cores, a rank that waits then holds its core for a whole time
// slice while the rank it waits for cannot run: a 4-rank test on 2 cores
// ran 20-100 times slower than with 2 ranks, and many did not finish in 5
// minutes. This wrapper yields the core after a run of empty polls, as Open
// MPI does with mpi_yield_when_idle. It changes only when a waiting rank
// gives up its core, not what MPI delivers.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

struct ucp_worker;
typedef unsigned (*progress_fn)(struct ucp_worker *);

// Empty polls before a yield: enough that a message already on its way is
// found without a system call, few enough that a waiting rank lets the
// others run within microseconds.
enum { kEmptyPollsBeforeYield = 16 };

__attribute__((visibility("default"))) unsigned ucp_worker_progress(struct ucp_worker *worker) {
  static progress_fn real_progress;       // the same value in every thread
  static _Thread_local unsigned empty_polls;
  progress_fn real = __atomic_load_n(&real_progress, __ATOMIC_RELAXED);
  if (!real) {
    real = (progress_fn)dlsym(RTLD_NEXT, "ucp_worker_progress");
    if (!real) {
      // MPICH loaded with RTLD_LOCAL (by Python's mpi4py) keeps UCX out of
      // the global scope that RTLD_NEXT searches; UCX is loaded all the same.
      void *ucp = dlopen("libucp.so.0", RTLD_NOW | RTLD_NOLOAD);
      if (ucp) real = (progress_fn)dlsym(ucp, "ucp_worker_progress");
    }
    if (!real) {
      fprintf(stderr, "ucx_yield: no ucp_worker_progress after the preloaded library\n");
      abort();
    }
    __atomic_store_n(&real_progress, real, __ATOMIC_RELAXED);
  }
  unsigned events = real(worker);
  if (events) {
    empty_polls = 0;
  } else if (++empty_polls == kEmptyPollsBeforeYield) {
    empty_polls = 0;
    sched_yield();
  }
  return events;
}
