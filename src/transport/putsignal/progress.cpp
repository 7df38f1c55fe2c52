// What moves messages between the putsignal transport's calls: queued
// messages written into their regions once free (the outbox), arrived
// messages of operations not ended yet moved out of their regions (spill),
// the waits that do both while they poll, and the timeout that leaves the
// SF broken.
#include <cstring>

#include "transport/putsignal/transport.h"

namespace stf::putsignal {

int PutSignalTransport::write(PutChannel &c, int k) {
  SendLink &p = *senders_of(c.dir)[k];
  const std::size_t bytes = p.units * c.unit_bytes;
  const char *packed = c.source[k];
  const bool mark = c.route[k] == Route::large;  // the message goes by MPI: its signal alone
  if (!p.writable(c.seq, c.previous[k])) return STF_SUCCESS;
  if (mark) STF_CHECK(send_large(c, k, packed));
  c.spent = true;
  const int rc = mark ? p.mark(c.seq, bytes) : p.write(c.seq, packed, bytes);
  // Not pending any more, also where the signal failed: a second try would
  // send the large message again.
  c.pending[k] = 0;
  c.npending--;
  pending_--;
  return rc;
}

// Message k of c has arrived in its region: remember a sender whose size
// tag says another size than expected (reported by wait_send, the
// operation's last call), or whose mark says its message came by MPI.
void PutSignalTransport::note_size(PutChannel &c, int k) {
  const ReceiveLink &p = *receivers_of(c.dir)[k];
  if (p.marked(c.seq)) return stray(c, k);
  if (!p.has_size(c.seq, p.units * c.unit_bytes)) c.mismatch.note(p.rank, false, p.units * c.unit_bytes);
}

int PutSignalTransport::progress(bool drain, bool in_begin) {
  if (!strays_empty()) STF_CHECK(drain_strays());
  if (pending_ > 0) STF_CHECK(write_queued(in_begin));
  return drain ? take_arrived() : STF_SUCCESS;
}

// The oldest queued message of each region, while it may be written.
int PutSignalTransport::write_queued(bool in_begin) {
  for (Direction dir : {Direction::root_to_leaf, Direction::leaf_to_root}) {
    if (pending_ == 0) break;
    const int d = dir_index(dir);
    RegionQueues &queues = to_write(d);
    const std::vector<std::unique_ptr<SendLink>> &peers = senders_of(dir);
    for (std::size_t i = 0; i < queues.size(); i++) {
      RegionQueue &q = queues.at(i);
      const int k = static_cast<int>(queues.peer_of(i));
      if (in_begin && peers[k]->write_waits_for_peer()) continue;
      while (!q.empty()) {
        PutChannel *c = q.front().c;
        if (still_queued(q.front(), d, k)) {
          STF_CHECK(write(*c, k));
          if (c->pending[k]) break;  // its region is not free yet
        }
        q.pop();
      }
    }
  }
  return STF_SUCCESS;
}

// The oldest awaited message of each region, while it has arrived: out of
// its region (a large message's mark: taken).
int PutSignalTransport::take_arrived() {
  for (Direction dir : {Direction::root_to_leaf, Direction::leaf_to_root}) {
    const int d = dir_index(dir);
    RegionQueues &queues = to_take(d);
    const std::vector<std::unique_ptr<ReceiveLink>> &peers = receivers_of(dir);
    for (std::size_t i = 0; i < queues.size(); i++) {
      RegionQueue &q = queues.at(i);
      const int k = static_cast<int>(queues.peer_of(i));
      ReceiveLink &p = *peers[k];
      while (!q.empty()) {
        PutChannel *c = q.front().c;
        if (!still_awaited(q.front(), d, k)) {
          q.pop();
          continue;
        }
        if (!p.arrived(c->seq)) break;
        // Either takes the message and pops its entry (taken()).
        STF_CHECK(p.large(c->unit_bytes) ? take_signal_of_large(*c, k) : spill(*c, k));
      }
    }
  }
  return STF_SUCCESS;
}

int PutSignalTransport::spill(PutChannel &c, int k) {
  const ReceiveLink &p = *receivers_of(c.dir)[k];
  note_size(c, k);
  std::memcpy(c.spill.data() + receivers(plan_, c.dir).offset[k] * c.unit_bytes, p.message(c.seq),
              p.units * c.unit_bytes);
  STF_CHECK(consume(c, k));
  c.held[k] = Held::spilled;
  taken(c, k);
  return STF_SUCCESS;
}

// Whether every operation in flight before c that awaits its message from
// receiving peer k in a region has looked at that region (spilling what
// has arrived): were one a mark (stray()), c's large receive may hold that
// operation's message instead of its own, and c must fail, not succeed.
int PutSignalTransport::earlier_regions_seen(PutChannel &c, int k, bool *seen) {
  ReceiveLink &p = *receivers_of(c.dir)[k];
  const int d = dir_index(c.dir);
  *seen = true;
  for (int j = 0; j < slots_; j++) {
    RegionQueue &q = to_take(d).of(static_cast<std::size_t>(k), static_cast<std::uint64_t>(j));
    while (!q.empty() && q.front().seq < c.seq) {
      const RegionQueue::Entry e = q.front();
      if (!still_awaited(e, d, k)) {
        q.pop();
      } else if (p.arrived(e.seq)) {  // taken, its entry popped (taken())
        STF_CHECK(p.large(e.c->unit_bytes) ? take_signal_of_large(*e.c, k) : spill(*e.c, k));
      } else {  // nothing later in the region has come either
        q.each([&](const RegionQueue::Entry &o) {
          if (o.seq >= c.seq) return false;
          if (still_awaited(o, d, k) && !p.large(o.c->unit_bytes)) *seen = false;
          return *seen;
        });
        break;
      }
    }
  }
  return STF_SUCCESS;
}

int PutSignalTransport::wait_until(const char *what, int rank, bool (PutSignalTransport::*ready)(PutChannel &, int),
                                   PutChannel &c, int k) {
  return poll_until(
      [&](bool *done) {
        *done = (this->*ready)(c, k);
        return STF_SUCCESS;
      },
      [&] { return std::string(what) + " of rank " + std::to_string(rank); });
}

int PutSignalTransport::timed_out(const std::string &what) {
  broken_ = "an earlier operation of this SF timed out waiting for " + what +
            "; its peers' operations no longer pair with this rank's";
  return set_error(STF_ERR_TIMEOUT, "putsignal transport: waited more than %g s for %s", timeout_, what.c_str());
}

}  // namespace stf::putsignal
