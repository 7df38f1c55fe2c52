// The put-with-signal protocol of one sender and one receiver, in memory
// both can load and store (a shared-memory window), after the NVSHMEM
// design of the PetscSF paper (Zhang, Brown, Balay, Faibussowitsch, Knepley,
// Marin, Mills, Munson, Smith, Zampini, "The PetscSF scalable communication
// layer", IEEE Trans. Parallel Distrib. Syst. 33(4), 2022).
//
// The receiver owns S regions (S a power of two) for messages from the
// sender. The message of sequence number n (the n-th operation of its
// direction on the SF, the same on every rank) goes in region n % S, or,
// too large for it, another way, with its signal in region n % S. Each region
// has a signal word, written by the sender in a cache line of its own, and a
// credit word, written by the receiver; the S credit words lie side by side,
// so that one read of a line of them tells a sender about eight regions (all
// S where S <= 8), and it need not fetch that line again for as many messages:
//   sender:   wait until credit(n) >= p, where p - 1 is the sequence number
//             of the region's previous message (the receiver is done with
//             it; p = 0: none), write the region, store signal(n) = n + 1
//             (release), with a 16-bit tag of the message's size in the top
//             bits;
//   receiver: wait until signal(n) carries n + 1 (acquire), read the region,
//             store credit(n) = n + 1 (release).
// The size tag lets the receiver notice a message of another size than it
// expects (ranks passing units of different sizes) without a word more. A
// message too large for its region goes another way, and its sender then
// signals the region with a mark instead of writing it (credit and signal
// as for a message), so that every message has its signal: a receiver
// waiting in the region for a message that went another way sees it.
// A region's messages are written and read in sequence order, so the
// sequence numbers in its words only grow, and a value names its sequence
// number: a late or early signal is never taken for the current one. Nothing here blocks: callers poll with a
// Backoff.
#pragma once

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace stf {

constexpr std::size_t kLine = 64;  // a cache line: no line holds words that both sender and receiver write

struct SlotRing {
  char *regions = nullptr;  // S regions, stride bytes apart
  std::size_t stride = 0;
  char *signals = nullptr;  // S words, kLine apart
  char *credits = nullptr;  // S words side by side
  int slots = 1;  // a power of two

  // Bytes for a ring of S regions of capacity bytes (regions, then signals,
  // then credits), and the ring laid out at base.
  static std::size_t bytes(int slots, std::size_t capacity) {
    return slots * (round_up(capacity) + kLine) + round_up(slots * sizeof(std::uint64_t));
  }
  static SlotRing at(char *base, int slots, std::size_t capacity) {
    SlotRing r;
    r.stride = round_up(capacity);
    r.slots = slots;
    r.regions = base;
    r.signals = base + slots * r.stride;
    r.credits = r.signals + slots * kLine;
    return r;
  }
  static std::size_t round_up(std::size_t b) { return (b + kLine - 1) / kLine * kLine; }

  std::uint64_t slot(std::uint64_t n) const { return n & (slots - 1); }
  char *region(std::uint64_t n) const { return regions + slot(n) * stride; }
  std::uint64_t *signal(std::uint64_t n) const {
    return reinterpret_cast<std::uint64_t *>(signals + slot(n) * kLine);
  }
  std::uint64_t *credit(std::uint64_t n) const { return reinterpret_cast<std::uint64_t *>(credits) + slot(n); }

  // Signals: n + 1 below bit 47 (2^47 operations per direction), the mark
  // of a message sent another way in bit 47, the size tag above.
  static constexpr std::uint64_t kSequenceBits = (std::uint64_t(1) << 47) - 1;
  static constexpr std::uint64_t kMark = std::uint64_t(1) << 47;
  static std::uint64_t size_tag(std::size_t bytes) {
    return (static_cast<std::uint64_t>(bytes) * 0x9e3779b97f4a7c15ull) >> 48;  // a multiplicative hash
  }
  static std::uint64_t signal_value(std::uint64_t n, std::size_t bytes, bool mark = false) {
    return (n + 1) | (mark ? kMark : 0) | size_tag(bytes) << 48;
  }
  // Message n, in its region, or (mark) sent another way.
  void publish(std::uint64_t n, std::size_t bytes, bool mark = false) const {
    __atomic_store_n(signal(n), signal_value(n, bytes, mark), __ATOMIC_RELEASE);
  }
  // Receiver.
  bool arrived(std::uint64_t n) const {
    return (__atomic_load_n(signal(n), __ATOMIC_ACQUIRE) & kSequenceBits) == n + 1;
  }
  // Once arrived(n): message n went another way (its region holds nothing).
  bool marked(std::uint64_t n) const { return __atomic_load_n(signal(n), __ATOMIC_ACQUIRE) & kMark; }
  // Once arrived(n): whether message n has `bytes` bytes (up to the tag's
  // 16 bits: sizes whose hashes collide pass).
  bool has_size(std::uint64_t n, std::size_t bytes) const {
    return __atomic_load_n(signal(n), __ATOMIC_ACQUIRE) >> 48 == size_tag(bytes);
  }
  void consumed(std::uint64_t n) const { __atomic_store_n(credit(n), n + 1, __ATOMIC_RELEASE); }
};

// The sender's copy of a ring's credit words, as last read. Credits only
// grow, so a region seen free stays free until this sender writes it
// again: a line of the receiver's credits is fetched only when the copy
// does not show the credit a message needs, once per line of regions
// (S, at most 8) while the receiver keeps up (a cache line that moves
// between cores costs more than the rest of a small message's protocol
// steps). A miss reads the one line that holds the region's credit.
class KnownCredits {
 public:
  explicit KnownCredits(int slots) : known_(slots, 0) {}
  // Region n % S may take message n; previous = the sequence number + 1 of
  // the region's previous message, 0 for none.
  bool writable(const SlotRing &ring, std::uint64_t n, std::uint64_t previous) {
    const std::uint64_t s = ring.slot(n);
    if (previous == 0 || known_[s] >= previous) return true;
    const std::uint64_t first = s & ~(kPerLine - 1), end = std::min<std::uint64_t>(first + kPerLine, ring.slots);
    for (std::uint64_t k = first; k < end; k++) known_[k] = __atomic_load_n(ring.credit(k), __ATOMIC_ACQUIRE);
    return known_[s] >= previous;
  }

 private:
  static constexpr std::uint64_t kPerLine = kLine / sizeof(std::uint64_t);
  std::vector<std::uint64_t> known_;
};

// Polling without burning a core that another rank needs: spins `spins`
// polls (few where ranks outnumber cores, many where each has its own, as
// MPI libraries do), then yields on every poll; after timeout seconds (0:
// never) expired() says so. With a timeout the clock is read on every
// unsuccessful poll, from the first: a poll through an RMA window can take
// milliseconds, and the timeout must come on time whatever a poll costs
// (a clock read costs tens of nanoseconds; without a timeout, nothing).
class Backoff {
 public:
  Backoff(long spins, double timeout) : spins_(spins), timeout_(timeout) {}
  // Call once per unsuccessful poll.
  void pause() {
    if (++polls_ > spins_) sched_yield();
  }
  bool patient() const { return polls_ > kPatient; }  // waited long enough to try harder things
  bool expired() {
    if (timeout_ <= 0) return false;
    const auto now = std::chrono::steady_clock::now();
    if (polls_ == 1) start_ = now;
    return std::chrono::duration<double>(now - start_).count() > timeout_;
  }

 private:
  static constexpr long kPatient = 200;
  const long spins_;
  const double timeout_;
  long polls_ = 0;
  std::chrono::steady_clock::time_point start_{};
};

}  // namespace stf
