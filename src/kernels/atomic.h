// The one way kernels write shared memory atomically: acc = acc op in as a
// compare-and-swap loop. Only kernels run by a parallel executor over a
// destination list with duplicates use it (see needs_atomics); serial code
// never pays for it. A CUDA backend adds its device branch here, so the
// functors stay unchanged.
#pragma once

#include "kernels/portability.h"

namespace stf {

// Any trivially copyable T: the GCC builtins fall back to libatomic for
// sizes without a lock-free instruction (16-byte complex, long double).
template <class Op, class T>
STF_HOST_DEVICE void atomic_apply(T &acc, const T &in) {
  T old, next;
  __atomic_load(&acc, &old, __ATOMIC_RELAXED);
  do {
    next = old;
    Op::apply(next, in);
  } while (!__atomic_compare_exchange(&acc, &old, &next, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

}  // namespace stf
