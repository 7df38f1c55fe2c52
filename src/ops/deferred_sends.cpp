// The communicator's queue of deferred sends (deferred_sends.h).
#include "ops/deferred_sends.h"

#include <algorithm>

#include "core/comm.h"
#include "core/error.h"
#include "ops/memory.h"

namespace stf {

int deferred_sends_of(MPI_Comm c, DeferredSends **out) { return cached_on(c, out); }

void defer_sends(stf_request r, Direction d) {
  r->deferred_dir = d;
  r->sends_deferred = true;
  r->mover->deferred->push_back(r);
}

int post_queued_sends(DeferredSends &queue, stf_request upto) {
  if (upto && !upto->sends_deferred) return STF_SUCCESS;
  while (!queue.empty()) {
    stf_request q = queue.front();
    queue.pop_front();
    q->sends_deferred = false;
    STF_CHECK(q->memory->post_deferred_sends(q));
    if (q == upto) break;
  }
  return STF_SUCCESS;
}

void forget_deferred_sends(stf_request r) {
  DeferredSends *queue = r->mover->deferred;
  if (queue) queue->erase(std::remove(queue->begin(), queue->end(), r), queue->end());
  r->sends_deferred = false;
}

}  // namespace stf
