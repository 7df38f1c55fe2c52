// Per peer and region, the operations in flight that use it, oldest first:
// on the send side those whose message waits to be written there, on the
// receive side those that await their message there. A region carries its
// messages in operation order, so only the oldest of each can be written
// (its region's previous message is the one before it) or can have arrived
// (messages come in order): progress looks at S per peer instead of at
// every operation in flight, where thousands in flight made each poll cost
// thousands of looks (begin+end of 10,000 bcasts: 285 us each).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace stf::putsignal {

struct PutChannel;

// One queue: the operations (channel and number) in order. An entry whose
// channel has since moved on (another operation, or its message written or
// taken) is stale; its owner skips it.
class RegionQueue {
 public:
  struct Entry {
    PutChannel *c;
    std::uint64_t seq;
  };
  bool empty() const { return head_ == items_.size(); }
  const Entry &front() const { return items_[head_]; }
  void push(PutChannel *c, std::uint64_t seq) { items_.push_back({c, seq}); }
  void reserve(std::size_t n) { items_.reserve(n); }
  void reserve_one_more() { items_.reserve(items_.size() + 1); }  // the next push cannot throw
  void pop() {
    if (++head_ < items_.size() && head_ < items_.size() / 2) return;
    items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));  // amortised: half or all
    head_ = 0;
  }
  // From the oldest on, while f returns true.
  template <class F>
  void each(F f) const {
    for (std::size_t i = head_; i < items_.size() && f(items_[i]); i++) {
    }
  }
  // c goes (its channel is freed): no entry may point at it.
  void forget(const PutChannel *c) {
    for (std::size_t i = head_; i < items_.size(); i++)
      if (items_[i].c == c) items_[i].c = nullptr;
  }

 private:
  std::vector<Entry> items_;
  std::size_t head_ = 0;
};

// The queues of one side and direction: peer k's region j is k * slots + j.
class RegionQueues {
 public:
  // At set-up, with room for a few operations in flight per region, so
  // that a region's first use in steady state allocates nothing.
  void resize(std::size_t peers, int slots) {
    slots_ = static_cast<std::size_t>(slots);
    queues_.assign(peers * slots_, RegionQueue());
    for (RegionQueue &q : queues_) q.reserve(4);
  }
  RegionQueue &of(std::size_t k, std::uint64_t seq) { return queues_[k * slots_ + (seq & (slots_ - 1))]; }
  RegionQueue &at(std::size_t i) { return queues_[i]; }
  std::size_t size() const { return queues_.size(); }
  std::size_t peer_of(std::size_t i) const { return i / slots_; }
  void forget(const PutChannel *c) {
    for (RegionQueue &q : queues_) q.forget(c);
  }

 private:
  std::size_t slots_ = 1;
  std::vector<RegionQueue> queues_;
};

}  // namespace stf::putsignal
