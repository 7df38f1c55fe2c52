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

namespace {

// Request q's post failed (rc): some of its messages never left, and the
// peers' receives for them would take this rank's next messages of the
// same SF. So q and every request of its SF still queued fail (their ends
// and tests report it), and the SF refuses new operations. Requests of
// other SFs stay queued: their messages pair as before.
void fail_sf(DeferredSends &queue, stf_request q, int rc) {
  Engine &sf = *q->mover;
  auto of_sf = [&sf](stf_request r) { return r->mover == &sf; };
  q->deferred_error = rc;
  q->deferred_message.clear();
  for (stf_request r : queue)
    if (of_sf(r)) r->sends_deferred = false, r->deferred_error = rc, r->deferred_message.clear();
  try {
    const std::string why = stf_last_error_message();
    q->deferred_message = why;
    for (stf_request r : queue)
      if (of_sf(r)) r->deferred_message = "an earlier operation's: " + why;
    if (sf.broken.empty()) sf.broken = "a deferred send failed (model C): " + why;
  } catch (...) {  // the codes alone
    if (sf.broken.empty()) sf.broken = "?";  // refused all the same
  }
  queue.erase(std::remove_if(queue.begin(), queue.end(), of_sf), queue.end());
}

}  // namespace

// A failed post fails its SF (fail_sf), and the call it came in where that
// is a begin (its sends must not leave after the failed ones) or an end or
// test of a request of the same SF (upto); one of another SF goes on.
int post_queued_sends(DeferredSends &queue, stf_request upto) {
  if (upto && !upto->sends_deferred) return STF_SUCCESS;
  while (!queue.empty()) {
    stf_request q = queue.front();
    queue.pop_front();
    q->sends_deferred = false;
    const int rc = q->memory->post_deferred_sends(q);
    if (rc != STF_SUCCESS) {
      fail_sf(queue, q, rc);
      if (!upto || upto->mover == q->mover) return deferred_failure(upto ? upto : q);
      continue;
    }
    if (q == upto) break;
  }
  return STF_SUCCESS;
}

int deferred_failure(stf_request r) {
  if (r->deferred_error == STF_SUCCESS) return STF_SUCCESS;
  return set_error(r->deferred_error, "%s (posting deferred sends, model C)",
                   r->deferred_message.empty() ? stf_error_name(r->deferred_error) : r->deferred_message.c_str());
}

void forget_deferred_sends(stf_request r) {
  DeferredSends *queue = r->mover->deferred;
  if (queue) queue->erase(std::remove(queue->begin(), queue->end(), r), queue->end());
  r->sends_deferred = false;
}

}  // namespace stf
