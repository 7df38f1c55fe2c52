// The express path (Transport::express_begin): a prepared operation on
// host memory, alone in flight, whose every message fits a ring and whose
// every region is free, goes as the protocol itself does, with none of
// the general path's routing: its begin finds each region free and lends
// it, its send publishes each signal, its wait polls each signal and its
// end returns each credit. What the peers do not need waits until the
// signals are out: the send then takes the regions' turns and writes the
// rest of the state.
//
// Its state is an ordinary operation's (transport.cpp), all but its
// receive queue entries (region_queues.h): what lets progress spill its
// messages while later operations wait, which nothing does while it is
// alone. Any other call of the transport, on this channel or another,
// settles first: the entries are added, and the operation goes on, and
// ends, as an ordinary one. Its wait does so too where it finds a mark or
// a size tag that is not the expected size (the ranks' units differ): the
// ordinary wait reports those.
#include "transport/putsignal/transport.h"

namespace stf::putsignal {

bool PutSignalTransport::fits(Direction d, std::size_t ub) {
  const int dir = dir_index(d);
  if (fit_unit_[dir] == ub) return true;
  if (unfit_unit_[dir] == ub) return false;
  bool all = true;
  for (const std::unique_ptr<SendLink> &p : senders_of(d)) all &= p->has_regions() && !p->large(ub);
  for (const std::unique_ptr<ReceiveLink> &p : receivers_of(d)) all &= p->has_regions() && !p->large(ub);
  (all ? fit_unit_ : unfit_unit_)[dir] = ub;
  return all;
}

int PutSignalTransport::express_begin(Channel &c, Direction d, std::size_t ub, void **recv, void **send,
                                      bool *taken) {
  *taken = false;
  if (in_flight_ > 0 || pending_ > 0 || !strays_empty() || !broken_.empty() || !fits(d, ub)) return STF_SUCCESS;
  const std::vector<std::unique_ptr<SendLink>> &to = senders_of(d);
  const std::uint64_t n = next_seq_[dir_index(d)];
  for (std::size_t k = 0; k < to.size(); k++) {  // a ring of the heap, its region free
    send[k] = to[k]->in_place(n, to[k]->turn_before(n));
    if (!send[k]) return STF_SUCCESS;
  }
  // Room for the entries settling adds, which must not fail: it runs in
  // other operations' calls, abandon's among them, which never fail.
  const std::vector<std::unique_ptr<ReceiveLink>> &from = receivers_of(d);
  for (std::size_t k = 0; k < from.size(); k++) to_take(dir_index(d)).of(k, n).reserve_one_more();
  PutChannel &s = start(c, d, ub);
  for (std::size_t k = 0; k < to.size(); k++) s.source[k] = static_cast<const char *>(send[k]);
  const std::size_t spill = static_cast<std::size_t>(receivers(plan_, d).offset.back()) * ub;
  if (s.spill.size() < spill) s.spill.resize(spill);  // where settling may spill
  s.data = recv;
  express_ = &s;
  *taken = true;
  return STF_SUCCESS;
}

// The rest of an ordinary operation's state, written once the signals are
// out: the peers need none of it, and no call of the transport comes
// between express_begin and express_send.
void PutSignalTransport::express_state(PutChannel &s) {
  const std::vector<std::unique_ptr<SendLink>> &to = senders_of(s.dir);
  s.receiving = true;
  s.waited = false;
  s.nreceive = static_cast<int>(receivers_of(s.dir).size());
  s.nrecvs = 0;
  for (int k = 0; k < s.nreceive; k++) {
    s.held[k] = Held::no;
    s.marked[k] = 0;
    s.in_place[k] = 0;
  }
  s.sends.clear();
  for (std::size_t k = 0; k < to.size(); k++) {
    s.route[k] = Route::region;
    s.pending[k] = 0;
    s.previous[k] = to[k]->take_turn(s.seq);
  }
  s.lent = true;
}

int PutSignalTransport::express_send(Channel &c) {
  PutChannel &s = c.get<PutChannel>();
  s.spent = true;
  int rc = STF_SUCCESS;
  for (const std::unique_ptr<SendLink> &p : senders_of(s.dir))
    if (!rc) rc = p->write(s.seq, nullptr, p->units * s.unit_bytes);
  express_state(s);
  return rc;
}

void PutSignalTransport::make_ordinary() {  // never throws: express_begin made room
  PutChannel &s = *express_;
  const std::vector<std::unique_ptr<ReceiveLink>> &from = receivers_of(s.dir);
  for (std::size_t k = 0; k < from.size(); k++) to_take(dir_index(s.dir)).of(k, s.seq).push(&s, s.seq);
  express_ = nullptr;
}

int PutSignalTransport::express_wait(Channel &c, bool *taken, std::uint64_t *missed_at) {
  PutChannel &s = c.get<PutChannel>();
  *taken = false;
  *missed_at = 0;
  if (express_ != &s) return STF_SUCCESS;  // settled: the ordinary wait
  const std::vector<std::unique_ptr<ReceiveLink>> &from = receivers_of(s.dir);
  missed_at_ = 0;
  for (std::size_t k = 0; k < from.size(); k++)
    if (!from[k]->arrived(s.seq))
      STF_CHECK(wait_until("a message", from[k]->rank, &PutSignalTransport::received, s, static_cast<int>(k)));
  *missed_at = missed_at_;
  for (const std::unique_ptr<ReceiveLink> &p : from)
    if (p->marked(s.seq) || !p->has_size(s.seq, p->units * s.unit_bytes)) {
      make_ordinary();
      return STF_SUCCESS;
    }
  for (std::size_t k = 0; k < from.size(); k++) {
    s.held[k] = Held::in_region;
    s.data[k] = from[k]->message(s.seq);
  }
  s.waited = true;
  express_ = nullptr;
  *taken = true;
  return STF_SUCCESS;
}

int PutSignalTransport::express_end(Channel &c) {
  PutChannel &s = c.get<PutChannel>();
  for (const std::unique_ptr<ReceiveLink> &p : receivers_of(s.dir)) STF_CHECK(p->return_credit(s.seq));
  s.receiving = false;
  s.seq_set = false;
  in_flight_--;
  s.lent = false;
  return STF_SUCCESS;
}

}  // namespace stf::putsignal
