// The put-with-signal protocol (transport/slot_ring.h) between two threads
// sharing one ring, as two ranks of a node share a window: every message
// arrives whole, in its own region, and a region is never written while
// its previous message is still being read. Run under ThreadSanitizer by
// `make test-device-tsan`, which checks the acquire/release pairs.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "transport/slot_ring.h"

using stf::Backoff;
using stf::KnownCredits;
using stf::SlotRing;

namespace {

// Message n fills its bytes with a pattern of n; the receiver checks it.
unsigned char pattern(std::uint64_t n, std::size_t i) { return static_cast<unsigned char>(n * 31 + i * 7); }

// A ring in memory of its own, cache-line aligned, as rings in a shared window are.
struct AlignedRing {
  AlignedRing(int slots, std::size_t capacity) : memory(SlotRing::bytes(slots, capacity) + stf::kLine) {
    char *base = memory.data() + (stf::kLine - reinterpret_cast<std::uintptr_t>(memory.data()) % stf::kLine);
    ring = SlotRing::at(base, slots, capacity);
  }
  std::vector<char> memory;
  SlotRing ring;
};

void exchange(int slots, std::size_t capacity, std::uint64_t messages) {
  const AlignedRing aligned(slots, capacity);
  const SlotRing &ring = aligned.ring;
  std::uint64_t bad = 0;
  std::thread receiver([&] {
    for (std::uint64_t n = 0; n < messages; n++) {
      while (!ring.arrived(n)) std::this_thread::yield();
      const std::size_t bytes = 1 + n % capacity;
      const unsigned char *r = reinterpret_cast<const unsigned char *>(ring.region(n));
      for (std::size_t i = 0; i < bytes; i++) bad += r[i] != pattern(n, i);
      ring.consumed(n);
    }
  });
  std::vector<std::uint64_t> last(slots, 0);  // the sender's bookkeeping (SendLink::take_turn)
  KnownCredits credits(slots);
  for (std::uint64_t n = 0; n < messages; n++) {
    const std::uint64_t previous = last[n % slots];
    while (!credits.writable(ring, n, previous)) std::this_thread::yield();
    unsigned char *w = reinterpret_cast<unsigned char *>(ring.region(n));
    for (std::size_t i = 0; i < 1 + n % capacity; i++) w[i] = pattern(n, i);
    ring.publish(n, 8);
    last[n % slots] = n + 1;
  }
  receiver.join();
  EXPECT_EQ(bad, 0u) << slots << " slots";
}

}  // namespace

TEST(SlotRing, EveryMessageWholeOneSlot) { exchange(1, 200, 20000); }
TEST(SlotRing, EveryMessageWholeFourSlots) { exchange(4, 200, 20000); }
TEST(SlotRing, EveryMessageWholeSixtyFourSlots) { exchange(64, 24, 20000); }

TEST(SlotRing, SignalsNameTheirSequence) {
  const AlignedRing aligned(2, 64);
  const SlotRing &ring = aligned.ring;
  ring.publish(0, 8);
  EXPECT_TRUE(ring.arrived(0));
  EXPECT_FALSE(ring.arrived(2));  // the same region's next message: not yet
  KnownCredits credits(2);
  EXPECT_TRUE(credits.writable(ring, 2, 0));
  EXPECT_FALSE(credits.writable(ring, 2, 1));  // message 0 not read yet
  ring.consumed(0);
  EXPECT_TRUE(credits.writable(ring, 2, 1));  // the copy read again
  ring.publish(2, 8);
  EXPECT_FALSE(ring.arrived(0));  // an old signal is never taken for the current one
  EXPECT_TRUE(ring.arrived(2));
  // The signal tells the message's size: a receiver expecting another notices.
  EXPECT_TRUE(ring.has_size(2, 8));
  EXPECT_FALSE(ring.has_size(2, 16));
  EXPECT_FALSE(ring.has_size(2, 4));
}

// With more than eight regions the credits span several lines; a miss
// reads the line that holds the region's credit.
TEST(SlotRing, KnownCreditsReadTheRegionsLine) {
  const int slots = 16;
  const AlignedRing aligned(slots, 64);
  const SlotRing &ring = aligned.ring;
  KnownCredits credits(slots);
  for (std::uint64_t n = 0; n < 16; n++) ring.consumed(n);
  EXPECT_TRUE(credits.writable(ring, 25, 10));  // region 9, second line: message 9 taken
  EXPECT_TRUE(credits.writable(ring, 16, 1));   // region 0, first line
  EXPECT_FALSE(credits.writable(ring, 32, 17));  // message 16 not taken yet
  ring.consumed(16);
  EXPECT_TRUE(credits.writable(ring, 32, 17));
  EXPECT_FALSE(credits.writable(ring, 41, 26));  // region 9 again: message 25 not taken
}

// A timeout comes on time however long a poll takes (through an RMA window
// a poll took milliseconds, and the clock was read every 1,024 polls only,
// from the 1,024th on: 7-10x late). Here every poll takes 20 ms, and the
// wait is in its spinning phase throughout.
TEST(Backoff, TimeoutOnTimeWhenPollsAreSlow) {
  const double timeout = 0.3;
  Backoff backoff(100000, timeout);
  const auto t0 = std::chrono::steady_clock::now();
  for (int polls = 0; polls < 100; polls++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the poll
    backoff.pause();
    if (backoff.expired()) break;
  }
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(waited, timeout);
  EXPECT_LT(waited, 1.1 * timeout + 0.02) << "a poll takes 0.02 s";
}

TEST(Backoff, NoTimeoutNeverExpires) {
  Backoff backoff(0, 0);
  for (int polls = 0; polls < 5000; polls++) {
    backoff.pause();
    EXPECT_FALSE(backoff.expired());
  }
}
