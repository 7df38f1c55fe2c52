// Links to peers on other nodes through the SF's RMA window (net_choice.h):
// passive target, locked for the SF's life. The receiver's ring lies
// in its window and the sender's credit words in the sender's: the sender
// puts the message, flushes (the data is there before the signal), then
// writes the signal with MPI_Raccumulate(MPI_REPLACE), element-wise atomic;
// the receiver returns credits the same way. Each reads its own window
// memory after MPI_Win_sync.
#pragma once

#include <mpi.h>

#include <deque>

#include "transport/putsignal/link.h"
#include "transport/slot_ring.h"

namespace stf::putsignal {

// The window that all RMA links of an SF share, and the signals and
// credits on their way: their values stay here until MPI completes them.
class RmaWindow {
 public:
  MPI_Win win = MPI_WIN_NULL;  // allocated and freed by layout.cpp
  // A flush completes only once the target calls MPI (net_choice.h): MPICH
  // 4.0.2 without asynchronous progress, Open MPI's osc/pt2pt.
  bool flush_waits_for_target = false;

  // value into the word at disp of rank's window, complete locally on return.
  int accumulate(int rank, MPI_Aint disp, std::uint64_t value);
  int reap_signals();  // frees the signals MPI has completed, oldest first
  void wait_signals();  // all of them (destroy)

 private:
  struct Signal {
    std::uint64_t value;
    MPI_Request req;
  };
  std::deque<Signal> signals_;
};

class RmaSendLink final : public SendLink {
 public:
  RmaSendLink(int rank, stf_int units, std::size_t capacity, int slots, RmaWindow &window)
      : SendLink(rank, units, capacity, slots), slots_(slots), window_(window) {}
  // Set-up: where the receiver's ring lies in its window, and where the
  // credits it writes lie in mine.
  void place(MPI_Aint ring_disp, const std::uint64_t *credit_words) {
    ring_disp_ = ring_disp;
    credit_words_ = credit_words;
  }

  bool writable(std::uint64_t n, std::uint64_t previous) override;
  char *in_place(std::uint64_t, std::uint64_t) override { return nullptr; }  // the ring is not mine to store into
  int write(std::uint64_t n, const void *packed, std::size_t bytes) override;
  int mark(std::uint64_t n, std::size_t bytes) override;
  // Where a flush waits for the target to call MPI, a begin would wait as
  // long as its peer came late; where it does not, writing in begin lets
  // a message leave before the end.
  bool write_waits_for_peer() const override { return window_.flush_waits_for_target; }

 private:
  int signal(std::uint64_t n, std::size_t bytes, bool mark);

  const int slots_;
  RmaWindow &window_;
  MPI_Aint ring_disp_ = 0;
  const std::uint64_t *credit_words_ = nullptr;
};

class RmaReceiveLink final : public ReceiveLink {
 public:
  RmaReceiveLink(int rank, stf_int units, std::size_t capacity, int slots, RmaWindow &window)
      : ReceiveLink(rank, units, capacity), slots_(slots), window_(window) {}
  // Set-up: my ring for this sender, in my window, and where my credits
  // lie in the sender's.
  void place(const SlotRing &ring, MPI_Aint credit_disp) {
    ring_ = ring;
    credit_disp_ = credit_disp;
  }

  bool arrived(std::uint64_t n) override;
  int return_credit(std::uint64_t n) override;

 private:
  const int slots_;
  RmaWindow &window_;
  MPI_Aint credit_disp_ = 0;
};

}  // namespace stf::putsignal
