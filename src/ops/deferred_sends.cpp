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

// A post that fails fails the call (its own sends must not leave after
// it) and is kept on the request it belongs to, whose end or test reports
// it (also where the call was a test of that request, which leaves it in
// flight).
int post_queued_sends(DeferredSends &queue, stf_request upto) {
  if (upto && !upto->sends_deferred) return STF_SUCCESS;
  while (!queue.empty()) {
    stf_request q = queue.front();
    queue.pop_front();
    q->sends_deferred = false;
    const int rc = q->memory->post_deferred_sends(q);
    if (rc != STF_SUCCESS) {
      q->deferred_error = rc;
      try {
        q->deferred_message = stf_last_error_message();
      } catch (...) {
        q->deferred_message.clear();  // the code alone
      }
      return rc;
    }
    if (q == upto) break;
  }
  return STF_SUCCESS;
}

int deferred_failure(stf_request r) {
  if (r->deferred_error == STF_SUCCESS) return STF_SUCCESS;
  return set_error(r->deferred_error, "%s (posting this operation's deferred sends, model C)",
                   r->deferred_message.empty() ? stf_error_name(r->deferred_error) : r->deferred_message.c_str());
}

void forget_deferred_sends(stf_request r) {
  DeferredSends *queue = r->mover->deferred;
  if (queue) queue->erase(std::remove(queue->begin(), queue->end(), r), queue->end());
  r->sends_deferred = false;
}

}  // namespace stf
