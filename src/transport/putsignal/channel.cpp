// A putsignal channel's end (channel.h): it leaves the transport's lists and queues,
// and large sends that MPI may still read keep their buffer.
#include "transport/putsignal/channel.h"

#include <algorithm>
#include <mutex>
#include <new>

namespace stf::putsignal {

PutChannel::~PutChannel() {
  if (listed) listed->erase(std::find(listed->begin(), listed->end(), this));
  leave_queues();
  forget_pending();
  if (in_flight && seq_set) --*in_flight;
  if (express && *express == this) *express = nullptr;
  abandon_active_sends();
}

void PutChannel::abandon_active_sends() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  bool active = false;
  for (MPI_Request &r : sends) {
    int done = 1;
    if (r != MPI_REQUEST_NULL) MPI_Test(&r, &done, MPI_STATUS_IGNORE);
    if (!done) {
      MPI_Request_free(&r);
      active = true;
    }
  }
  if (!active) return;
  static std::mutex lock;
  static auto *kept = new std::vector<std::vector<char>>;  // never destroyed: also safe in exit's destructors
  std::lock_guard<std::mutex> guard(lock);
  try {
    kept->push_back(std::move(outbox));
  } catch (const std::bad_alloc &) {  // no exception leaves a destructor; the buffer goes
  }
}

}  // namespace stf::putsignal
