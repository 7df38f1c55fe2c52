// Messages larger than their region, which go by MPI point-to-point with a
// mark in their region: their receives and the marks they wait for; and
// strays, large messages that no receive awaits (the ranks' units differ
// in size), drained so that they take no later operation's receive.
#include "transport/large_count.h"
#include "transport/putsignal/transport.h"

namespace stf::putsignal {

bool cancel_receive(MPI_Request *r) {
  if (*r == MPI_REQUEST_NULL) return true;
  MPI_Cancel(r);
  MPI_Status status;
  MPI_Wait(r, &status);
  int cancelled = 0;
  MPI_Test_cancelled(&status, &cancelled);
  MPI_Request_free(r);
  return cancelled != 0;
}

int PutSignalTransport::send_large(PutChannel &c, int k, const void *from) {
  const SendLink &p = *senders_of(c.dir)[k];
  c.sends.emplace_back();
  const int rc = isend_bytes(from, p.units * c.unit_bytes, p.rank, large_tag(c.dir, c.seq), comm_.comm,
                             &c.sends.back());
  if (rc) c.sends.pop_back();
  return rc;
}

// The sender's unit made message k too large for its region (the ranks'
// units differ): it comes by MPI, where this operation posted no receive,
// and its sender's end waits until it is received. drain_strays takes it
// (the next begin of this direction waits for that). A large receive from
// the same peer with the same tag that a later operation has posted (2S
// operations later, all in flight) may take it first: those operations
// fail (none has ended: test_large waits until earlier ones have looked at
// their regions), and so may later ones, which are refused.
void PutSignalTransport::stray(PutChannel &c, int k) {
  const ReceiveLink &p = *receivers_of(c.dir)[k];
  c.mismatch.note(p.rank, false, p.units * c.unit_bytes);
  strays_[dir_index(c.dir)][stray_index(k, c.seq)]++;
  strays_left_[dir_index(c.dir)]++;
  for (PutChannel *o : channels_)
    if (later_same_tag(*o, c) && p.large(o->unit_bytes)) {
      o->mismatch.note(p.rank, false, p.units * o->unit_bytes);
      broken_ = "rank " + std::to_string(p.rank) +
                " sent a message by MPI where this rank awaited it in a region (the ranks' units differed in size), "
                "and a receive of another operation may have taken it";
    }
}

void PutSignalTransport::cancelled(const PutChannel &c, int k) {
  const int rank = receivers_of(c.dir)[k]->rank;
  for (PutChannel *o : channels_) {
    if (!later_same_tag(*o, c) || static_cast<std::size_t>(k) >= o->recvs.size() || o->recvs[k] == MPI_REQUEST_NULL)
      continue;
    // Cancelled too, so that no receive takes a message of another size
    // (Open MPI 4.1 wrote past a persistent receive's buffer): in turn, its
    // message may come to the next one. One that has completed had its own
    // message (MPI matches in order), but this rank cannot tell: Open MPI
    // 4.1's MPI_Request_get_status said a persistent receive had completed
    // that then took the older operation's message.
    if (o->taken_from < 0) o->taken_from = rank;
    cancel_receive(&o->recvs[k]);
    broken_ = "an operation's receive from rank " + std::to_string(rank) +
              " was cancelled before its message came, which a later operation's receive may take";
  }
}

int PutSignalTransport::drain_strays() {
  for (Direction dir : {Direction::root_to_leaf, Direction::leaf_to_root}) {
    const int d = dir_index(dir);
    for (std::size_t i = 0; strays_left_[d] > 0 && i < strays_[d].size(); i++)
      while (strays_[d][i] > 0) {
        const int k = static_cast<int>(i / large_tags());
        const int tag = large_tag_at(d, static_cast<int>(i % large_tags()));
        int found = 0;
        MPI_Message message;
        MPI_Status status;
        STF_MPI(MPI_Improbe(receivers_of(dir)[k]->rank, tag, comm_.comm, &found, &message, &status));
        if (!found) break;
        MPI_Count bytes = 0;
        STF_MPI(MPI_Get_elements_x(&status, MPI_BYTE, &bytes));
        Drained &x =
            draining_.emplace_back(Drained{std::vector<char>(static_cast<std::size_t>(bytes)), MPI_REQUEST_NULL});
        ByteCount count;
        STF_CHECK(count.set(x.sink.size()));
        STF_MPI(MPI_Imrecv(x.sink.data(), count.count(), count.type(), &message, &x.req));
        strays_[d][i]--;
        strays_left_[d]--;
      }
  }
  for (int done = 1; done && !draining_.empty();) {
    STF_MPI(MPI_Test(&draining_.front().req, &done, MPI_STATUS_IGNORE));
    if (done) draining_.pop_front();
  }
  return STF_SUCCESS;
}

int PutSignalTransport::wait_for_strays(Direction d) {
  if (!broken_.empty()) return STF_SUCCESS;  // the counts may be off; new operations are refused anyway
  const int &left = strays_left_[dir_index(d)];
  return poll_until(
      [&](bool *done) {
        *done = left == 0;
        return STF_SUCCESS;
      },
      [] { return std::string("the message of an earlier, failed operation"); });
}

void PutSignalTransport::drain_strays_now() {
  if (!broken_.empty()) return;  // the counts may be off: a wait could be for ever
  Backoff backoff(spins_, 0);
  while (!strays_empty() && drain_strays() == STF_SUCCESS) backoff.pause();
}

// The region of large message k of c is signalled: with the sender's mark
// (its credit returned; the receive fails if the size differs), or, from a
// sender whose unit is smaller than mine, with the message itself, which
// fits its region where mine does not. Then its receive is cancelled, the
// region given back and the end fails, instead of a wait for ever. A
// region signalled for this operation's number cannot be another
// operation's, so nothing right is taken for a mismatch.
int PutSignalTransport::take_signal_of_large(PutChannel &c, int k) {
  ReceiveLink &p = *receivers_of(c.dir)[k];
  const std::size_t expected = p.units * c.unit_bytes;
  if (p.marked(c.seq)) {
    if (!p.has_size(c.seq, expected)) c.mismatch.note(p.rank, false, expected);
    c.marked[k] = 1;
  } else {
    // A receive that completed (its request freed) or could not be
    // cancelled took a later operation's message, which that operation
    // then waits for in vain.
    if (c.recvs[k] == MPI_REQUEST_NULL || !cancel_receive(&c.recvs[k]))
      broken_ = "rank " + std::to_string(p.rank) +
                " put a message in a region where this rank awaited it by MPI (the ranks' units differed in size), "
                "and this rank's receive took a later operation's message";
    c.mismatch.note(p.rank, false, expected);
    c.held[k] = Held::spilled;  // seen: its data is in no buffer, the end fails
  }
  taken(c, k);
  return p.return_credit(c.seq);
}

// Each large message is tested on its own, so that its status gives its
// size (a peer's unit of another size; Open MPI 4.1's MPI_Testall reports
// no truncation). It is done once received and its region's signal taken
// (take_signal_of_large): a sender running ahead may have sent a later
// operation's large message, which this receive took, and the signal says
// so where it is not a mark.
int PutSignalTransport::test_large(PutChannel &c, bool *done) {
  const std::vector<std::unique_ptr<ReceiveLink>> &peers = receivers_of(c.dir);
  *done = true;
  for (std::size_t k = 0; k < peers.size(); k++) {
    ReceiveLink &p = *peers[k];
    if (!p.large(c.unit_bytes) || c.held[k] != Held::no) continue;
    const std::size_t expected = p.units * c.unit_bytes;
    if (c.recvs[k] != MPI_REQUEST_NULL) {
      int flag = 0, error_class = MPI_SUCCESS;
      MPI_Status status;
      const int rc = MPI_Test(&c.recvs[k], &flag, &status);
      if (rc != MPI_SUCCESS) MPI_Error_class(rc, &error_class);
      // Complete (inactive), or failed; Open MPI 4.1 sets a persistent
      // request whose message was truncated to MPI_REQUEST_NULL itself.
      if ((flag || rc != MPI_SUCCESS) && c.recvs[k] != MPI_REQUEST_NULL) MPI_Request_free(&c.recvs[k]);
      if (error_class == MPI_ERR_TRUNCATE) {
        c.mismatch.note(p.rank, false, expected);
      } else if (rc != MPI_SUCCESS) {
        return mpi_error(rc, "MPI_Test");
      } else if (flag) {
        long long got = 0;
        STF_CHECK(received_bytes(status, c.recv_types[k].type(), &got));
        if (static_cast<std::size_t>(got) != expected)
          c.mismatch.note(p.rank, false, expected, static_cast<std::size_t>(got));
      }
    }
    if (awaits_signal(c, static_cast<int>(k)) && p.arrived(c.seq))
      STF_CHECK(take_signal_of_large(c, static_cast<int>(k)));
    if (c.recvs[k] != MPI_REQUEST_NULL || awaits_signal(c, static_cast<int>(k))) {
      *done = false;
    } else if (p.has_regions() && c.held[k] == Held::no) {
      bool seen = false;
      STF_CHECK(earlier_regions_seen(c, static_cast<int>(k), &seen));
      *done = *done && seen;
    }
  }
  return STF_SUCCESS;
}

int PutSignalTransport::wait_large(PutChannel &c) {
  return poll_until([&](bool *done) { return test_large(c, done); },
                    [&] {
                      // Not done: a receive is still posted (abandon, after the
                      // failed end, cancels them), or a region's signal is
                      // still awaited.
                      const auto late = [&](std::size_t i) {
                        return receivers_of(c.dir)[i]->large(c.unit_bytes) &&
                               (c.recvs[i] != MPI_REQUEST_NULL || awaits_signal(c, static_cast<int>(i)));
                      };
                      std::size_t k = 0;
                      while (k + 1 < c.held.size() && !late(k)) k++;
                      return "a message larger than its region from rank " +
                             std::to_string(receivers_of(c.dir)[k]->rank);
                    });
}

}  // namespace stf::putsignal
