// An operation in flight. Request objects are pooled per SF (Engine::pool)
// and reused, so their buffers and the transport's cached requests survive
// between calls. What every operation needs is here; what only operations
// on device data need is the DeviceState behind `device` (device_space.h),
// and where its data lives decides its Memory (memory.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "ops/engine.h"
#include "transport/transport.h"

namespace stf {

enum class OpKind { bcast, reduce, fetch_and_op, degree, gather, scatter };
constexpr int kOpKinds = static_cast<int>(OpKind::scatter) + 1;  // scatter is the last kind
const char *op_kind_name(OpKind k);
// The public kind (stf_op_kind) of k, -1 for degree (no timings).
inline int timing_index(OpKind k) {
  switch (k) {
    case OpKind::bcast: return STF_OP_BCAST;
    case OpKind::reduce: return STF_OP_REDUCE;
    case OpKind::fetch_and_op: return STF_OP_FETCH_AND_OP;
    case OpKind::gather: return STF_OP_GATHER;
    case OpKind::scatter: return STF_OP_SCATTER;
    default: return -1;
  }
}
// Add the ticks since the current end/test call began to r's wait time:
// until now, or until missed_at, where a polling wait last stopped waiting
// for a missing message (0: none was missing, nothing is added).
void count_wait(stf_request r);
void count_wait_until(stf_request r, std::uint64_t missed_at);

struct DeviceState;
class Memory;
struct StrategyOp;  // an operation of a node-aware strategy (sf/strategy.h)

}  // namespace stf

// Handles given to the user are a slot's address with 16 bits of its
// generation (a count of its uses) in bits the address does not use: the 8
// the alignment leaves free and, on 64-bit machines, the top 8, unless the
// allocator tags pointers there (AArch64 memory tagging): the first slot
// made decides, and acquire_request refuses a later slot that disagrees.
// So a stale copy of an ended request is told from the operation that
// reuses its slot, unless the slot was reused a multiple of 65,536 times
// since (256 with the low bits alone).
struct alignas(256) stf_request_s {
  stf::Engine *owner = nullptr;  // the SF the user called (for gather/scatter: not the multi-SF)
  stf::Engine *mover = nullptr;  // the SF whose plan moves the data
  stf::OpKind kind = stf::OpKind::bcast;
  bool busy = false;
  unsigned generation = 0;     // incremented by every acquire
  std::size_t last_bytes = 0;  // unit bytes of the previous use (pool matching)

  const stf::Unit *unit = nullptr;
  const stf::Kernels *kernels = nullptr;  // for op
  const stf::Kernels *copy = nullptr;     // for MPI_REPLACE (fetch-and-op only)
  MPI_Op op = MPI_REPLACE;
  const void *src = nullptr;  // bcast: rootdata; reduce/fetch: leafdata
  void *dst = nullptr;        // bcast: leafdata; reduce/fetch: rootdata
  void *update = nullptr;     // fetch: leafupdate
  stf_memtype src_mem = STF_MEMTYPE_HOST, dst_mem = STF_MEMTYPE_HOST, update_mem = STF_MEMTYPE_HOST;
  unsigned long long fetch_seq = 0;  // fetch: position in this SF's begin order
  bool root_served = false;          // fetch: contributions applied, old values sent back

  // Host buffers and per-peer pointers handed to the transport.
  std::vector<char> rootbuf, leafbuf, returnbuf, selfbuf;
  std::vector<char> recv_direct;  // per receiving peer: data lands in user memory
  bool recv_in_user_device = false;  // some of it in user device memory
  bool lent = false;  // messages travel in memory the transport lends (Transport::lends)
  std::vector<void *> recv_ptrs;
  std::vector<const void *> send_ptrs;
  std::vector<void *> lent_ptrs;  // where to pack each message, in memory the transport lends
  stf::Channel to_leaf, to_root;
  // What moves this operation's one-way leg (Transport::mover), set in begin.
  stf::Transport *leg_transport = nullptr;
  stf::Channel *leg_channel = nullptr;

  // Where the data lives (memory.h), chosen when the operation begins.
  const stf::Memory *memory = nullptr;
  // Made by the first operation on device data; kept between uses of the
  // slot (device buffers, events).
  std::unique_ptr<stf::DeviceState> device;
  // Model C: the sends wait in the communicator's queue (deferred_sends.h).
  bool sends_deferred = false;
  stf::Direction deferred_dir = stf::Direction::root_to_leaf;
  // Its deferred post failed (in its own call or in another operation's,
  // which fails too): its end and tests report it.
  int deferred_error = STF_SUCCESS;
  std::string deferred_message;

  // Set while the SF's strategy runs this operation (its steps hold the
  // data; this slot only carries the request's identity).
  stf::StrategyOp *strategy_op = nullptr;

  // A prepared operation (stf_bcast_init): the slot and its handle stay
  // between starts until stf_request_free; started while one is in flight.
  // type and the memory types as given: a strategy begins from them anew.
  bool prepared = false;
  bool started = false;
  // A slot the SF keeps for repeated begins (Engine::kept): prepared for
  // the library, not for the user, whose handle ends with each operation.
  // Between operations it counts as no request (Engine::pending).
  bool kept = false;
  // Its receive targets and send pointers, aimed at its first start, stand
  // for the next ones (host memory, exchange.cpp); repack: some message is
  // packed, not sent from user memory. Where the transport lends its
  // memory, the first start's offers to it stand instead.
  bool aimed = false, repack = false;
  // Its start went by the transport's express path (Transport::express_begin).
  bool express = false;
  std::vector<void *> offered_recv, offered_send;
  std::vector<char> offered_direct;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  int given_src_mem = -1, given_dst_mem = -1;

  stf_request_s();
  ~stf_request_s();
};

namespace stf {

// In this layer an stf_request is a slot; the user holds its handle.
constexpr std::uintptr_t kGenerationLow = alignof(stf_request_s) - 1;
constexpr int kGenerationHighShift = sizeof(std::uintptr_t) == 8 ? 56 : 0;  // 0: none
// The top byte's bits when handles use it, else 0 (set by the first slot made).
extern std::uintptr_t generation_high_bits;
inline std::uintptr_t generation_bits() { return kGenerationLow | generation_high_bits; }
// A slot's generation as handle bits.
inline std::uintptr_t generation_tag(unsigned generation) {
  std::uintptr_t tag = generation & kGenerationLow;
  if (kGenerationHighShift) tag |= (std::uintptr_t(generation) >> 8 << kGenerationHighShift) & generation_high_bits;
  return tag;
}
inline stf_request handle_of(stf_request slot) {
  return reinterpret_cast<stf_request>(reinterpret_cast<std::uintptr_t>(slot) | generation_tag(slot->generation));
}
// The slot a handle names, without checking that it is active (take_request checks).
inline stf_request slot_of_handle(stf_request handle) {
  return reinterpret_cast<stf_request>(reinterpret_cast<std::uintptr_t>(handle) & ~generation_bits());
}

// Take a pooled request slot of mover for an operation called on owner; the
// caller gives the user handle_of(*out).
int acquire_request(Engine &owner, Engine &mover, OpKind kind, std::size_t unit_bytes, stf_request *out);
// Give slot r back to its pool (a kept slot stops being kept).
void release_request(stf_request r);
// The end of the operation in slot r: a prepared slot waits, with its
// handle *req, for its next start; a kept one for the next begin that
// repeats it, its handle stale (*req = NULL); any other goes back (*req =
// NULL).
inline void finish_request(stf_request r, stf_request *req) {
  if (r->prepared) {
    r->started = false;
    if (!r->kept) return;
    r->generation++;  // the handle of the operation just ended is stale
    r->owner->pending--;
    *req = nullptr;
    return;
  }
  release_request(r);
  *req = nullptr;
}
// Keep slot r, just taken on e (nothing posted), for repeated begins, first
// among e's kept slots; the last one not in flight makes room. False when
// every kept slot is in flight: r stays an ordinary slot.
bool keep_slot(Engine &e, stf_request r);
// Kept slot at (an index of Engine::kept) begun again: it becomes the first.
void touch_kept(Engine &e, int at);
// The slot of handle *req, if it is an active request of owner begun by kind
// (by any kind for take_any_request, what naming the call for messages).
int take_request(Engine &owner, stf_request *req, OpKind kind, stf_request *out);
int take_any_request(Engine &owner, stf_request *req, const char *what, stf_request *out);
// The slot of handle *req, a prepared request of owner with no operation in flight.
int take_resting(Engine &owner, stf_request *req, const char *what, stf_request *out);
// Cancel or complete whatever a failed operation left posted, so that the
// slot can be released and reused; in_end: it failed in its end.
void abandon_request(stf_request r, bool in_end);
// Free the pool's slots (none may be in flight).
void free_requests(Engine &e);

}  // namespace stf
