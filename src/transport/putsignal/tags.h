// The two directions as array indices, and this transport's tags in the
// SF's block (core/comm.h), all in one place so that they cannot overlap.
#pragma once

#include "core/comm.h"
#include "transport/transport.h"

namespace stf::putsignal {

constexpr int kDirections = 2;
inline int dir_index(Direction d) { return d == Direction::root_to_leaf ? 0 : 1; }

constexpr int tag_heap_ring[kDirections] = {0, 1};   // set-up: where my ring lies in the heap
constexpr int tag_rma_ring[kDirections] = {2, 3};    // set-up: where my ring lies in the window
constexpr int tag_rma_credit[kDirections] = {4, 5};  // set-up: where my credits lie in the window
// Messages larger than their region: per direction, a tag per operation
// number modulo twice the slots (PutSignalTransport::large_tag).
constexpr int tag_large_first = 6;
constexpr int kMaxSlots = 64;  // -stf_putsignal_slots
static_assert(tag_large_first + kDirections * 2 * kMaxSlots <= kTransportTags, "the SF's tag block is too small");

}  // namespace stf::putsignal
