// The put-with-signal protocol alone, without a library around it: the
// floor that the putsignal transport's bookkeeping is measured against
// (sf_pingpong --bare) and the in-node protocol term that calibrate fits.
#pragma once

#include <mpi.h>
#include <sched.h>

#include <atomic>
#include <cstdint>
#include <cstring>

// The put-with-signal protocol alone. Each rank's part of a shared window
// holds a signal word (its own cache line) and a payload region. To send,
// copy the message into the receiver's region, then store the round trip's
// number into its signal (release); to receive, poll the own signal until
// it holds that number (acquire), then copy the payload out. A region is
// written again only after its owner has answered, so one region suffices.
class BarePutSignal {
 public:
  static constexpr MPI_Aint kLine = 64;

  // Collective over pair: two ranks that share memory. Rank 0 of pair
  // sends first.
  BarePutSignal(MPI_Comm pair, long max_bytes) {
    MPI_Comm_rank(pair, &rank_);
    MPI_Win_allocate_shared(kLine + max_bytes, 1, MPI_INFO_NULL, pair, &mine_, &win_);
    MPI_Aint bytes;
    int disp;
    MPI_Win_shared_query(win_, 1 - rank_, &bytes, &disp, &peer_);
    signal(mine_)->store(0, std::memory_order_relaxed);
    MPI_Barrier(pair);
  }
  ~BarePutSignal() { MPI_Win_free(&win_); }
  BarePutSignal(const BarePutSignal &) = delete;
  BarePutSignal &operator=(const BarePutSignal &) = delete;

  void operator()(char *buf, long size) {
    ++seq_;
    if (rank_ == 0) {
      send(buf, size);
      receive(buf, size);
    } else {
      receive(buf, size);
      send(buf, size);
    }
  }

 private:
  static std::atomic<std::uint64_t> *signal(char *base) {
    return reinterpret_cast<std::atomic<std::uint64_t> *>(base);
  }
  void send(const char *buf, long size) {
    std::memcpy(peer_ + kLine, buf, size);
    signal(peer_)->store(seq_, std::memory_order_release);
  }
  // Spins, yielding now and then: ranks may outnumber cores.
  void receive(char *buf, long size) {
    for (unsigned polls = 1; signal(mine_)->load(std::memory_order_acquire) != seq_; ++polls)
      if (polls % 256 == 0) sched_yield();
    std::memcpy(buf, mine_ + kLine, size);
  }

  int rank_ = 0;
  std::uint64_t seq_ = 0;
  MPI_Win win_ = MPI_WIN_NULL;
  char *mine_ = nullptr, *peer_ = nullptr;
};
