// The measurements of bench/calibrate, each collective over MPI_COMM_WORLD:
// ranks that take no part wait in a barrier that sleeps (so that on an
// oversubscribed machine they leave the cores to the ranks measured).
#pragma once

#include <mpi.h>

#include <vector>

#include "model/maxrate.h"

namespace calibrate {

struct Settings {
  // Many short rounds: on a busy machine some of them run undisturbed.
  double round_seconds = 0.001;  // each timed round lasts about this long
  int rounds = 31;               // the fastest round is kept
};

// A barrier that sleeps between tests instead of spinning.
void sleeping_barrier(MPI_Comm comm);

// One-way time of a message of each size between ranks a and b (round trip
// / 2, MPI_Send/MPI_Recv). Meaningful on rank a; the others get zeros.
std::vector<double> pingpong(int a, int b, const std::vector<double> &sizes, const Settings &s);

// Round trips of k messages of 8 bytes from a to b, answered by one of 8
// bytes, for each k. On rank a.
std::vector<double> many_messages(int a, int b, const std::vector<double> &counts, const Settings &s);

// Node-pong with 1 .. pairs.size() concurrent pairs (first[i], second[i]):
// one-way time per message of each size, the slowest pair's. On every rank.
std::vector<stf::model::MaxRateSample> multi_pair(const std::vector<int> &first, const std::vector<int> &second,
                                                  const std::vector<double> &sizes, const Settings &s);

// One exchange step with every rank at once: each rank sends 8 bytes to
// to[rank] (none if negative) and receives 8 bytes from each rank that
// sends to it; steps back to back, seconds per step on the slowest rank,
// the median of the rounds (not the fastest: every rank busy is this
// measurement's point, and the exchanges it models are timed by medians).
// On every rank.
double busy_step(const std::vector<int> &to, const Settings &s);

// One-way time of the put-with-signal protocol alone (bare_putsignal.h)
// between ranks a and b of one node, for each size: the in-node term of the
// putsignal transport. On rank a. Not under SMPI (no shared memory).
std::vector<double> heap_pingpong(int a, int b, const std::vector<double> &sizes, const Settings &s);

// An 8-byte MPI_Put completed by MPI_Win_flush, from a to b, in seconds.
// On rank a.
double put_flush(int a, int b, const Settings &s);

// One MPI_Neighbor_alltoall of 8 bytes to each of two neighbours on a ring
// of all ranks, in seconds (the slowest rank's). On every rank.
double ring_neighbor_alltoall(const Settings &s);

// Pack (bcast to contiguous leaves) and unpack (reduce with MPI_REPLACE)
// of one-rank star forests through the public API, on rank 0, for each
// index pattern (contiguous, strided, indexed) and two sizes, in the
// active device's memory. Returns {small bytes, large bytes} and the times.
struct PackTimes {
  double small_bytes = 0, large_bytes = 0;
  double pack[3][2] = {}, unpack[3][2] = {};  // [pattern][small, large] seconds per call
};
PackTimes pack_times(bool device_memory, const Settings &s);
// Seconds per stf_device_synchronize with nothing queued, on rank 0.
double device_sync(const Settings &s);

}  // namespace calibrate
