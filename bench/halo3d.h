// halo3d's pieces shared by its variants (halo3d.cpp): directions, the
// rank's box with its message zone lists, phase timers and the variant
// interface, and the two MPI baselines (halo3d_mpi.cpp on host memory,
// halo3d_mpi_device.cpp on device memory).
#pragma once

#include <starforest.h>

#include <array>
#include <vector>

namespace halo3d {

constexpr int kDirs = 27;  // direction (dx, dy, dz) in {-1,0,1}^3 is (dz+1)*9 + (dy+1)*3 + (dx+1); 13 is the box itself
constexpr int kSelf = 13;
enum Phase { kPackPost, kPostRecv, kWaitUnpack, kWaitSend, kCycle, kNumPhases };

inline int offset(int dir, int axis) { return (axis == 0 ? dir % 3 : axis == 1 ? dir / 3 % 3 : dir / 9) - 1; }
inline int opposite(int dir) { return kDirs - 1 - dir; }

// This rank's box, its neighbours and the zones each message carries.
struct Box {
  int n, w, vars, E;  // E = n + 2w zones per direction of the ghosted box
  long G;             // zones of one variable's ghosted box
  int P[3], c[3];
  bool periodic, mock;
  int rank;
  int nbr[kDirs];                      // neighbour rank per direction, -1 if none
  std::vector<long> recv[kDirs];       // ghost zones filled from direction d (one variable)
  std::vector<long> send[kDirs];       // owned zones the neighbour at d needs, in its order

  // Zone (i, j, k) in ghosted-box coordinates: -w <= i < n + w.
  long zone(int i, int j, int k) const { return (static_cast<long>(k + w) * E + (j + w)) * E + (i + w); }
  long message_doubles(int d) const { return static_cast<long>(recv[d].size()) * vars; }
};

using Times = std::array<double, kNumPhases>;  // seconds

// A variant: one implementation with one grouping.
class Variant {
 public:
  virtual ~Variant() = default;
  virtual void cycle(double *data, Times &t) = 0;
  // starforest's counters summed over the variant's SFs (false: none kept).
  virtual bool stats(stf_stats &) { return false; }
  virtual void reset_stats() {}
};

// Where a hand-written MPI baseline keeps its messages and how it packs
// them: message d (the owned zones my neighbour at opposite(d) needs) and
// the ghosts of direction d. Host memory (halo3d_mpi.cpp), or device memory
// staged through pinned host buffers (halo3d_mpi_device.cpp).
class MpiMessages {
 public:
  virtual ~MpiMessages() = default;
  virtual double *send_buffer(int d) = 0;  // what MPI sends of message d
  virtual double *recv_buffer(int d) = 0;  // where MPI receives message d
  virtual void pack(int d, double *data) = 0;
  // The packed messages are in their send buffers (device: a stream wait).
  virtual void ready() {}
  virtual void unpack(int d, double *data) = 0;
  // --mock: message d, packed here, is also the one received.
  virtual void unpack_own(int d, double *data) = 0;
  // Every unpack is done (device: a stream wait).
  virtual void finish() {}
};

// Hand-written MPI: Irecv all; per group pack and Isend; per group wait and
// unpack (each: MPI_Waitany, unpack what arrived); wait sends. Message d
// fills the receiver's ghosts of direction d (tag d). On host memory
// (packing loops on the host) and on device memory (pack and unpack
// kernels, staged through host buffers).
Variant *make_mpi_halo(const Box &b, std::vector<std::vector<int>> groups, bool each, MpiMessages *messages);
MpiMessages *host_messages(const Box &b);
MpiMessages *device_messages(const Box &b);

}  // namespace halo3d
