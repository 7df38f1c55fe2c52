// Stream model C posts an operation's sends from end, after its packing
// event. Messages are matched in the order sends are posted, and the
// neighbor and collective transports need their collectives started in the
// same order on every rank across all SFs that share a communicator, so the
// requests whose sends are deferred wait in one queue per communicator, in
// begin order. Every operation posts the queue's older sends before its own
// (the queue is empty unless some operation runs model C).
#pragma once

#include <mpi.h>

#include <deque>

#include "starforest.h"

namespace stf {

enum class Direction;

using DeferredSends = std::deque<stf_request>;

// The deferred-sends queue of communicator c.
int deferred_sends_of(MPI_Comm c, DeferredSends **out);
// Queue r's sends of direction d (begin's last step: a failed begin leaves
// nothing queued).
void defer_sends(stf_request r, Direction d);
// Post the deferred sends of the queue, oldest first, up to and including
// upto (all of them if NULL; nothing if upto's are not deferred), so that
// sends always leave in begin order.
int post_queued_sends(DeferredSends &queue, stf_request upto);
inline int post_deferred_sends(DeferredSends &queue, stf_request upto) {
  return queue.empty() ? STF_SUCCESS : post_queued_sends(queue, upto);
}
// A failed operation's sends, if queued, will never be posted.
void forget_deferred_sends(stf_request r);
// The failure of r's deferred post, in whichever call it came (the
// caller of r's end or test checks r->deferred_error first).
int deferred_failure(stf_request r);

}  // namespace stf
