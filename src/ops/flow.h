// The pieces every exchange step shares: which messages may skip the pack
// buffers, the counters, and the Flow that names the sending and receiving
// sides of a one-way exchange.
#pragma once

#include <vector>

#include "ops/request.h"

namespace stf {

// Messages are sent straight from user memory when their slots are contiguous.
inline bool direct_ok(const Unit &u, const IndexList &l) { return !u.opaque() && l.kind == IndexKind::contiguous; }

// Counters of the SF the user called: plain increments.
inline void count_pack(stf_request r, const IndexList &l) {
  r->owner->stats.pack_calls++;
  r->owner->stats.bytes_packed += static_cast<long long>(l.n) * static_cast<long long>(r->unit->packed_bytes);
}
inline void count_unpack(stf_request r, const IndexList &l) {
  r->owner->stats.unpack_calls++;
  r->owner->stats.bytes_unpacked += static_cast<long long>(l.n) * static_cast<long long>(r->unit->packed_bytes);
}
inline void count_messages(stf_request r, const Messages &sent, const Messages &received) {
  stf_stats &s = r->owner->stats;
  const Engine::SentByLocality &l = r->mover->sent[&sent == &r->mover->plan->root ? 0 : 1];
  const long long pb = static_cast<long long>(r->unit->packed_bytes);
  s.messages_sent += sent.count();
  s.messages_received += received.count();
  s.messages_sent_in_node += l.peers_in_node;
  s.messages_sent_off_node += sent.count() - l.peers_in_node;
  s.bytes_sent_in_node += l.units_in_node * pb;
  s.bytes_sent_off_node += (l.units - l.units_in_node) * pb;
}

inline void grow(std::vector<char> *buf, std::size_t bytes) {
  if (buf->size() < bytes) buf->resize(bytes);
}

// The sending and receiving sides of a one-way exchange (bcast or reduce).
struct Flow {
  Direction dir;
  const Messages &from, &to;
  const std::vector<IndexList> &from_lists, &to_lists;
  const IndexList &self_from, &self_to;
  const char *to_direct;  // extra condition for receiving into user memory, or nullptr
  Channel &channel;
  std::vector<char> &send_buf, &recv_buf;  // host buffers of the two sides
};
inline Flow flow(stf_request r, Direction d) {
  const Plan &p = *r->mover->plan;
  if (d == Direction::root_to_leaf)
    return {d, p.root, p.leaf, p.root_lists, p.leaf_lists, p.self_root, p.self_leaf, nullptr,
            r->to_leaf, r->rootbuf, r->leafbuf};
  return {d, p.leaf, p.root, p.leaf_lists, p.root_lists, p.self_leaf, p.self_root, p.root_recv_direct.data(),
          r->to_root, r->leafbuf, r->rootbuf};
}

// Point r->recv_ptrs at user memory (REPLACE-like receives on contiguous
// slots where allowed, also by the per-message flags direct) or at the
// messages' slices of base; fills r->recv_direct. The one rule for receiving
// in place, for every operation and memory. Whether some message lands in
// user memory.
bool aim_receives(stf_request r, const Messages &m, const std::vector<IndexList> &lists, const char *direct,
                  bool in_place_allowed, void *user, char *base);

}  // namespace stf
