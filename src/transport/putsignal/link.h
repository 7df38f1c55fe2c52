// A link: one peer of one direction, seen from one side, and the steps of
// the put-with-signal protocol (slot_ring.h) on it. The transport
// (transport.h) numbers operations and routes their messages; it asks its
// links only the questions below, and never how they answer them. Which
// kind of link a peer gets is decided once, when layout.cpp makes it: a
// ring in the node's shared heap (heap_link.h), a ring in the SF's RMA
// window (rma_link.h), or no ring at all (the point-to-point route, below).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "starforest.h"
#include "transport/slot_ring.h"

namespace stf::putsignal {

// What every link knows of its peer.
class Link {
 public:
  Link(int rank, stf_int units, std::size_t capacity) : rank(rank), units(units), capacity(capacity) {}
  virtual ~Link() = default;
  Link(const Link &) = delete;
  Link &operator=(const Link &) = delete;

  const int rank;
  const stf_int units;         // of each message to or from the peer
  const std::size_t capacity;  // bytes a region holds (0: no ring, every message large)

  bool has_regions() const { return capacity > 0; }
  // A message of units of unit_bytes is too large for its region: it goes
  // by MPI point-to-point, and only its mark, if any, through the ring.
  bool large(std::size_t unit_bytes) const { return units * unit_bytes > capacity; }
};

// The sender's side. Message n (the n-th operation of the direction) goes
// in region n % S, once the receiver has given back the credit of the
// region's previous message.
class SendLink : public Link {
 public:
  SendLink(int rank, stf_int units, std::size_t capacity, int slots)
      : Link(rank, units, capacity), last_in_region_(slots, 0) {}

  // Operation n takes its region's turn: returns the sequence number + 1 of
  // the region's previous message (0: none), the `previous` of writable.
  std::uint64_t take_turn(std::uint64_t n) {
    std::uint64_t &last = last_in_region_[n & (last_in_region_.size() - 1)];
    const std::uint64_t previous = last;
    last = n + 1;
    return previous;
  }
  // What take_turn(n) would return.
  std::uint64_t turn_before(std::uint64_t n) const { return last_in_region_[n & (last_in_region_.size() - 1)]; }
  // Undoes take_turn (a begin that failed before its messages were sent).
  void give_turn_back(std::uint64_t n, std::uint64_t previous) {
    last_in_region_[n & (last_in_region_.size() - 1)] = previous;
  }

  // Region n % S may take message n: its previous message's credit is back.
  virtual bool writable(std::uint64_t n, std::uint64_t previous) = 0;
  // Where message n may be packed in place now: its region, where this
  // rank can store into it and it is writable; nullptr: pack elsewhere and
  // write() it later.
  virtual char *in_place(std::uint64_t n, std::uint64_t previous) = 0;
  // Once writable: message n into its region, then its signal. packed is
  // nullptr where the message was packed in place (in_place).
  virtual int write(std::uint64_t n, const void *packed, std::size_t bytes) = 0;
  // Once writable: the region's signal alone, with the mark of a large
  // message of `bytes` bytes, which goes by MPI.
  virtual int mark(std::uint64_t n, std::size_t bytes) = 0;
  // write() may wait until the peer calls MPI (an RMA flush): not from a
  // begin, which never blocks.
  virtual bool write_waits_for_peer() const { return false; }

 private:
  std::vector<std::uint64_t> last_in_region_;  // per region, its last message's sequence number + 1
};

// The receiver's side. Its ring is in this rank's memory whatever the
// link (my segment of the heap, or my window), so once a message has
// arrived it is read alike.
class ReceiveLink : public Link {
 public:
  using Link::Link;

  // Region n % S has been signalled for message n.
  virtual bool arrived(std::uint64_t n) = 0;
  // Done with region n % S: its credit back to the sender.
  virtual int return_credit(std::uint64_t n) = 0;

  // Once arrived(n): the signal is a mark (the message came by MPI).
  bool marked(std::uint64_t n) const { return ring_.marked(n); }
  // Once arrived(n): the signal's size tag says `bytes` (slot_ring.h).
  bool has_size(std::uint64_t n, std::size_t bytes) const { return ring_.has_size(n, bytes); }
  // Once arrived(n) and not marked: where message n is.
  char *message(std::uint64_t n) const { return ring_.region(n); }

 protected:
  SlotRing ring_;  // set up by the kind of link (none on the point-to-point route)
};

// The point-to-point route to other nodes (net_choice.h): no
// ring, so every message is large and goes by MPI with no signal. The
// transport asks such a link nothing of its regions (has_regions()).
class P2pSendLink final : public SendLink {
 public:
  P2pSendLink(int rank, stf_int units, int slots) : SendLink(rank, units, 0, slots) {}
  bool writable(std::uint64_t, std::uint64_t) override { return false; }
  char *in_place(std::uint64_t, std::uint64_t) override { return nullptr; }
  int write(std::uint64_t, const void *, std::size_t) override { return STF_ERR_INTERNAL; }
  int mark(std::uint64_t, std::size_t) override { return STF_ERR_INTERNAL; }
};

class P2pReceiveLink final : public ReceiveLink {
 public:
  P2pReceiveLink(int rank, stf_int units) : ReceiveLink(rank, units, 0) {}
  bool arrived(std::uint64_t) override { return false; }
  int return_credit(std::uint64_t) override { return STF_ERR_INTERNAL; }
};

}  // namespace stf::putsignal
