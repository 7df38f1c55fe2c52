// Links to peers on my node, through the node's shared heap: the ring
// (slot_ring.h) lies in the receiver's segment of an MPI shared-memory
// window that both ranks load and store, so a message costs no MPI call.
// The sender packs straight into the region and publishes it with a
// release store; the receiver polls with acquire loads, unpacks from the
// region and returns the credit with a release store.
#pragma once

#include "transport/putsignal/link.h"
#include "transport/slot_ring.h"

namespace stf::putsignal {

class HeapSendLink final : public SendLink {
 public:
  HeapSendLink(int rank, stf_int units, std::size_t capacity, int slots)
      : SendLink(rank, units, capacity, slots), credits_(slots) {}
  void place(const SlotRing &ring) { ring_ = ring; }  // set-up: the receiver's ring, mapped here

  bool writable(std::uint64_t n, std::uint64_t previous) override;
  char *in_place(std::uint64_t n, std::uint64_t previous) override;
  int write(std::uint64_t n, const void *packed, std::size_t bytes) override;
  int mark(std::uint64_t n, std::size_t bytes) override;

 private:
  SlotRing ring_;
  KnownCredits credits_;
};

class HeapReceiveLink final : public ReceiveLink {
 public:
  using ReceiveLink::ReceiveLink;
  void place(const SlotRing &ring) { ring_ = ring; }  // set-up: my ring for this sender

  bool arrived(std::uint64_t n) override;
  int return_credit(std::uint64_t n) override;
};

}  // namespace stf::putsignal
