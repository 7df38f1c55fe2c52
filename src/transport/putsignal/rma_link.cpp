// The RMA links (rma_link.h): puts, flushes and accumulates on the SF's
// window, and the receiver's loads after MPI_Win_sync.
#include "transport/putsignal/rma_link.h"

#include "core/error.h"

namespace stf::putsignal {

int RmaWindow::accumulate(int rank, MPI_Aint disp, std::uint64_t value) {
  STF_CHECK(reap_signals());
  Signal &s = signals_.emplace_back(Signal{value, MPI_REQUEST_NULL});
  const int rc = MPI_Raccumulate(&s.value, 1, MPI_UINT64_T, rank, disp, 1, MPI_UINT64_T, MPI_REPLACE, win, &s.req);
  if (rc != MPI_SUCCESS) {
    signals_.pop_back();
    return mpi_error(rc, "MPI_Raccumulate");
  }
  // Open MPI's osc/pt2pt (between hosts) sends an operation only at a
  // synchronisation; a local flush returns without the target.
  STF_MPI(MPI_Win_flush_local(rank, win));
  return STF_SUCCESS;
}

int RmaWindow::reap_signals() {
  for (int done = 1; done && !signals_.empty();) {
    STF_MPI(MPI_Test(&signals_.front().req, &done, MPI_STATUS_IGNORE));
    if (done) signals_.pop_front();
  }
  return STF_SUCCESS;
}

void RmaWindow::wait_signals() {
  for (Signal &s : signals_) MPI_Wait(&s.req, MPI_STATUS_IGNORE);
}

bool RmaSendLink::writable(std::uint64_t n, std::uint64_t previous) {
  if (previous == 0) return true;
  MPI_Win_sync(window_.win);
  const std::uint64_t *credit = credit_words_ + (n & (slots_ - 1)) * (kLine / sizeof(std::uint64_t));
  return __atomic_load_n(credit, __ATOMIC_ACQUIRE) >= previous;
}

// The message first, complete at the target (flush), then its signal.
int RmaSendLink::write(std::uint64_t n, const void *packed, std::size_t bytes) {
  const std::size_t stride = SlotRing::round_up(capacity);
  const MPI_Aint region = ring_disp_ + static_cast<MPI_Aint>((n & (slots_ - 1)) * stride);
  STF_MPI(MPI_Put(packed, static_cast<int>(bytes), MPI_BYTE, rank, region, static_cast<int>(bytes), MPI_BYTE,
                  window_.win));
  STF_MPI(MPI_Win_flush(rank, window_.win));
  return signal(n, bytes, false);
}

int RmaSendLink::mark(std::uint64_t n, std::size_t bytes) { return signal(n, bytes, true); }

int RmaSendLink::signal(std::uint64_t n, std::size_t bytes, bool mark) {
  const std::size_t stride = SlotRing::round_up(capacity);
  const MPI_Aint signal = ring_disp_ + static_cast<MPI_Aint>(slots_ * stride + (n & (slots_ - 1)) * kLine);
  return window_.accumulate(rank, signal, SlotRing::signal_value(n, bytes, mark));
}

bool RmaReceiveLink::arrived(std::uint64_t n) {
  MPI_Win_sync(window_.win);
  return ring_.arrived(n);
}

int RmaReceiveLink::return_credit(std::uint64_t n) {
  return window_.accumulate(rank, credit_disp_ + static_cast<MPI_Aint>((n & (slots_ - 1)) * kLine), n + 1);
}

}  // namespace stf::putsignal
