// Message timings of bench/calibrate (calibrate.h).
#include <time.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "bench_common.h"
#include "calibrate.h"
#if !defined(STF_SMPI)
#include "bare_putsignal.h"
#endif

namespace calibrate {

namespace {

constexpr int kTag = 29;

void nap() {
  timespec ts{0, 1000000};  // 1 ms: rarely enough not to disturb the ranks measured
  nanosleep(&ts, nullptr);
}

// Per-call seconds of f(item) for each of n items: the fastest of `rounds`
// rounds, each call count chosen to last round_seconds by a first estimate
// (the slowest rank's, so every rank of comm makes the same calls). Other
// work on the machine only ever adds time, so the fastest round is the
// closest to what the machine itself costs. The items take turns within a
// round, so that a disturbance lasting a while spoils one round of several
// items, not every round of one.
template <class F>
std::vector<double> timed_items(MPI_Comm comm, const Settings &s, int n, F &&f) {
  std::vector<long> iters(n);
  for (int i = 0; i < n; ++i) {
    f(i);  // warm-up: connections, buffers
    const double t0 = MPI_Wtime();
    for (int k = 0; k < 8; ++k) f(i);
    const double once = bench::max_over_ranks((MPI_Wtime() - t0) / 8, comm);
    iters[i] = std::max(1L, std::min(100000L, static_cast<long>(s.round_seconds / std::max(once, 1e-7))));
  }
  std::vector<std::vector<double>> per_call(n);
  for (int r = 0; r < s.rounds; ++r)
    for (int i = 0; i < n; ++i) {
      MPI_Barrier(comm);
      f(i);  // untimed: ranks leave a barrier at different times, a first exchange aligns them
      const double t0 = MPI_Wtime();
      for (long k = 0; k < iters[i]; ++k) f(i);
      per_call[i].push_back(bench::max_over_ranks((MPI_Wtime() - t0) / iters[i], comm));
    }
  std::vector<double> out(n);
  for (int i = 0; i < n; ++i) out[i] = *std::min_element(per_call[i].begin(), per_call[i].end());
  return out;
}

template <class F>
double timed(MPI_Comm comm, const Settings &s, F &&f) {
  return timed_items(comm, s, 1, [&](int) { f(); })[0];
}

// A communicator of the ranks where member is true (MPI_COMM_NULL elsewhere).
MPI_Comm subset(bool member) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm c;
  MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED, rank, &c);
  return c;
}

}  // namespace

void sleeping_barrier(MPI_Comm comm) {
  MPI_Request r;
  MPI_Ibarrier(comm, &r);
  for (int done = 0;;) {
    MPI_Test(&r, &done, MPI_STATUS_IGNORE);
    if (done) return;
    nap();
  }
}

std::vector<double> pingpong(int a, int b, const std::vector<double> &sizes, const Settings &s) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::vector<double> out(sizes.size(), 0);
  MPI_Comm pair = subset(rank == a || rank == b);
  if (pair != MPI_COMM_NULL) {
    const int me = rank == a ? 0 : 1;  // ranks of pair follow world order: a may be 1
    int prank;
    MPI_Comm_rank(pair, &prank);
    const int peer = 1 - prank;
    std::vector<char> buf(static_cast<size_t>(sizes.empty() ? 0 : sizes.back()) + 1, 1);
    const std::vector<double> rt = timed_items(pair, s, static_cast<int>(sizes.size()), [&](int i) {
      const int n = static_cast<int>(sizes[i]);
      if (me == 0) {
        MPI_Send(buf.data(), n, MPI_BYTE, peer, kTag, pair);
        MPI_Recv(buf.data(), n, MPI_BYTE, peer, kTag, pair, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buf.data(), n, MPI_BYTE, peer, kTag, pair, MPI_STATUS_IGNORE);
        MPI_Send(buf.data(), n, MPI_BYTE, peer, kTag, pair);
      }
    });
    for (size_t i = 0; i < sizes.size(); ++i) out[i] = rt[i] / 2;
    MPI_Comm_free(&pair);
  }
  sleeping_barrier(MPI_COMM_WORLD);
  return out;
}

std::vector<double> many_messages(int a, int b, const std::vector<double> &counts, const Settings &s) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::vector<double> out(counts.size(), 0);
  MPI_Comm pair = subset(rank == a || rank == b);
  if (pair != MPI_COMM_NULL) {
    const bool sender = rank == a;
    int prank;
    MPI_Comm_rank(pair, &prank);
    const int peer = 1 - prank;
    const int most = static_cast<int>(*std::max_element(counts.begin(), counts.end()));
    std::vector<double> data(most, 1.0);  // one 8-byte message per slot
    std::vector<MPI_Request> req(most);
    double reply = 0;
    out = timed_items(pair, s, static_cast<int>(counts.size()), [&](int i) {
      const int k = static_cast<int>(counts[i]);
      for (int j = 0; j < k; ++j) {
        if (sender)
          MPI_Isend(&data[j], 1, MPI_DOUBLE, peer, kTag, pair, &req[j]);
        else
          MPI_Irecv(&data[j], 1, MPI_DOUBLE, peer, kTag, pair, &req[j]);
      }
      MPI_Waitall(k, req.data(), MPI_STATUSES_IGNORE);
      if (sender)
        MPI_Recv(&reply, 1, MPI_DOUBLE, peer, kTag + 1, pair, MPI_STATUS_IGNORE);
      else
        MPI_Send(&reply, 1, MPI_DOUBLE, peer, kTag + 1, pair);
    });
    MPI_Comm_free(&pair);
  }
  sleeping_barrier(MPI_COMM_WORLD);
  return out;
}

std::vector<stf::model::MaxRateSample> multi_pair(const std::vector<int> &first, const std::vector<int> &second,
                                                  const std::vector<double> &sizes, const Settings &s) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::vector<stf::model::MaxRateSample> out;
  const size_t pairs = std::min(first.size(), second.size());
  std::vector<char> buf(static_cast<size_t>(sizes.empty() ? 0 : sizes.back()) + 1, 1);
  for (size_t p = 1; p <= pairs; ++p) {
    // My pair among the first p, if any: its index and my peer.
    int peer = -1, sends_first = 0;
    for (size_t i = 0; i < p; ++i) {
      if (first[i] == rank) peer = second[i], sends_first = 1;
      if (second[i] == rank) peer = first[i];
    }
    MPI_Comm active = subset(peer >= 0);
    if (active != MPI_COMM_NULL) {
      const std::vector<double> rt = timed_items(active, s, static_cast<int>(sizes.size()), [&](int i) {
        const int n = static_cast<int>(sizes[i]);
        if (sends_first) {
          MPI_Send(buf.data(), n, MPI_BYTE, peer, kTag, MPI_COMM_WORLD);
          MPI_Recv(buf.data(), n, MPI_BYTE, peer, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(buf.data(), n, MPI_BYTE, peer, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(buf.data(), n, MPI_BYTE, peer, kTag, MPI_COMM_WORLD);
        }
      });
      for (size_t i = 0; i < sizes.size(); ++i) out.push_back({static_cast<int>(p), sizes[i], rt[i] / 2});
      MPI_Comm_free(&active);
    }
    sleeping_barrier(MPI_COMM_WORLD);
  }
  // Rank 0 is always in the first pair: everyone gets its samples.
  int count = static_cast<int>(out.size());
  MPI_Bcast(&count, 1, MPI_INT, 0, MPI_COMM_WORLD);
  out.resize(count);
  MPI_Bcast(out.data(), static_cast<int>(count * sizeof(out[0])), MPI_BYTE, 0, MPI_COMM_WORLD);
  return out;
}

double busy_step(const std::vector<int> &to, const Settings &s) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<int> from;
  for (int r = 0; r < size; ++r)
    if (to[r] == rank) from.push_back(r);
  std::vector<double> in(from.size() + 1), out(1, 1.0);
  std::vector<MPI_Request> req(from.size() + 1);
  const auto exchange = [&] {
    int n = 0;
    for (size_t i = 0; i < from.size(); ++i)
      MPI_Irecv(&in[i], 1, MPI_DOUBLE, from[i], kTag, MPI_COMM_WORLD, &req[n++]);
    if (to[rank] >= 0) MPI_Isend(out.data(), 1, MPI_DOUBLE, to[rank], kTag, MPI_COMM_WORLD, &req[n++]);
    MPI_Waitall(n, req.data(), MPI_STATUSES_IGNORE);
  };
  exchange();  // warm-up: connections
  const double t0 = MPI_Wtime();
  for (int k = 0; k < 8; ++k) exchange();
  const double once = bench::max_over_ranks((MPI_Wtime() - t0) / 8, MPI_COMM_WORLD);
  const long iters = std::max(1L, std::min(100000L, static_cast<long>(s.round_seconds / std::max(once, 1e-7))));
  std::vector<double> per_step;
  for (int r = 0; r < s.rounds; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    exchange();
    const double start = MPI_Wtime();
    for (long k = 0; k < iters; ++k) exchange();
    per_step.push_back(bench::max_over_ranks((MPI_Wtime() - start) / iters, MPI_COMM_WORLD));
  }
  std::sort(per_step.begin(), per_step.end());
  sleeping_barrier(MPI_COMM_WORLD);
  return per_step[per_step.size() / 2];
}

#if !defined(STF_SMPI)
std::vector<double> heap_pingpong(int a, int b, const std::vector<double> &sizes, const Settings &s) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::vector<double> out(sizes.size(), 0);
  MPI_Comm pair = subset(rank == a || rank == b);
  if (pair != MPI_COMM_NULL) {
    std::vector<char> buf(static_cast<size_t>(sizes.empty() ? 0 : sizes.back()) + 1, 1);
    {
      BarePutSignal bare(pair, static_cast<long>(buf.size()));
      const std::vector<double> rt = timed_items(pair, s, static_cast<int>(sizes.size()),
                                                 [&](int i) { bare(buf.data(), static_cast<long>(sizes[i])); });
      for (size_t i = 0; i < sizes.size(); ++i) out[i] = rt[i] / 2;
    }
    MPI_Comm_free(&pair);
  }
  sleeping_barrier(MPI_COMM_WORLD);
  return out;
}
#endif

double put_flush(int a, int b, const Settings &s) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double t = 0;
  MPI_Comm pair = subset(rank == a || rank == b);
  if (pair != MPI_COMM_NULL) {
    int prank;
    MPI_Comm_rank(pair, &prank);
    const int target = rank == a ? 1 - prank : -1;
    double *base = nullptr, value = 1;
    MPI_Win win;
    MPI_Win_allocate(sizeof(double), sizeof(double), MPI_INFO_NULL, pair, &base, &win);
    MPI_Win_lock_all(0, win);
    t = timed(pair, s, [&] {
      if (target < 0) return;
      MPI_Put(&value, 1, MPI_DOUBLE, target, 0, 1, MPI_DOUBLE, win);
      MPI_Win_flush(target, win);
    });
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Comm_free(&pair);
  }
  sleeping_barrier(MPI_COMM_WORLD);
  return t;
}

double ring_neighbor_alltoall(const Settings &s) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  const int peers[2] = {left, right};
  MPI_Comm ring;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, peers, MPI_UNWEIGHTED, 2, peers, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                 &ring);
  double send[2] = {1, 2}, recv[2];
  const double t = timed(ring, s, [&] { MPI_Neighbor_alltoall(send, 1, MPI_DOUBLE, recv, 1, MPI_DOUBLE, ring); });
  MPI_Comm_free(&ring);
  return t;
}

}  // namespace calibrate
