// Pieces shared by the host exchange (exchange.cpp) and the exchange of
// device data (device_exchange.cpp).
#pragma once

#include <vector>

#include "ops/request.h"
#include "plan/plan.h"

namespace stf {

inline char *at(void *base, stf_int offset, std::size_t bytes) {
  return static_cast<char *>(base) + static_cast<std::size_t>(offset) * bytes;
}
inline const char *at(const void *base, stf_int offset, std::size_t bytes) {
  return static_cast<const char *>(base) + static_cast<std::size_t>(offset) * bytes;
}

// Messages are sent straight from user memory when their slots are contiguous.
inline bool direct_ok(const Unit &u, const IndexList &l) { return !u.opaque() && l.kind == IndexKind::contiguous; }

// Counters of the SF the user called (ops/stats.cpp): plain increments.
inline void count_pack(stf_request r, const IndexList &l) {
  r->owner->stats.pack_calls++;
  r->owner->stats.bytes_packed += static_cast<long long>(l.n) * static_cast<long long>(r->unit->packed_bytes);
}
inline void count_unpack(stf_request r, const IndexList &l) {
  r->owner->stats.unpack_calls++;
  r->owner->stats.bytes_unpacked += static_cast<long long>(l.n) * static_cast<long long>(r->unit->packed_bytes);
}
inline void count_messages(stf_request r, const Messages &sent, const Messages &received) {
  r->owner->stats.messages_sent += sent.count();
  r->owner->stats.messages_received += received.count();
}

inline void grow(std::vector<char> *buf, std::size_t bytes) {
  if (buf->size() < bytes) buf->resize(bytes);
}

// The sending and receiving sides of a one-way exchange (bcast or reduce).
struct Flow {
  const Messages &from, &to;
  const std::vector<IndexList> &from_lists, &to_lists;
  const IndexList &self_from, &self_to;
  const char *to_direct;  // extra condition for receiving into user memory, or nullptr
  Channel &channel;
  std::vector<char> &send_buf, &recv_buf;
  int tag;
};
Flow flow(stf_request r, Direction d);

// Host data: pack each sending peer's units into buf, or send from user memory.
void prepare_send(stf_request r, const Messages &m, const std::vector<IndexList> &lists, const void *user,
                  std::vector<char> *buf);
// Host data: unpack the messages that did not land in user memory.
void unpack_received(stf_request r, const Messages &m, const std::vector<IndexList> &lists, std::vector<char> &buf,
                     void *user);

// Fetch-and-op on host memory (device data: device_exchange.cpp stages
// through host copies, then calls these).
int fetch_begin_host(stf_request r);
int fetch_end_host(stf_request r);

}  // namespace stf
