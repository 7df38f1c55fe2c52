// Test graphs: a deterministic RNG, the local (per-rank) graph as handed to
// stf_set_graph, random and structured generators, and the global view of
// a graph (every rank's part, gathered to every rank) that the oracle uses.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "starforest.h"

namespace stft {

// splitmix64: tiny, deterministic on every platform, good enough for tests.
inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
inline std::uint64_t hash_key(std::uint64_t a, std::uint64_t b, std::uint64_t c = 0,
                              std::uint64_t d = 0) {
  return mix64(mix64(mix64(mix64(a) ^ b) ^ c) ^ d);
}

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() { return mix64(state_++ * 0x2545f4914f6cdd1dULL); }
  // Uniform in [0, n); n > 0.
  std::uint64_t below(std::uint64_t n) { return next() % n; }
  // Uniform in [lo, hi].
  long long range(long long lo, long long hi) {
    return lo + static_cast<long long>(below(static_cast<std::uint64_t>(hi - lo + 1)));
  }
  bool chance(double p) { return (next() >> 11) * (1.0 / 9007199254740992.0) < p; }

 private:
  std::uint64_t state_;
};

// One rank's part of a graph, exactly what stf_set_graph takes.
struct LocalGraph {
  stf_int nroots = 0;
  bool contiguous = true;        // ilocal == NULL (leaf i is slot i)
  std::vector<stf_int> ilocal;   // slots when !contiguous
  std::vector<stf_node> iremote; // root of each leaf

  stf_int nleaves() const { return static_cast<stf_int>(iremote.size()); }
  stf_int slot(stf_int i) const { return contiguous ? i : ilocal[i]; }
  const stf_int *ilocal_ptr() const { return contiguous ? nullptr : ilocal.data(); }
  // [minleaf, maxleaf]; 0, -1 without leaves (as stf_get_leaf_range).
  void leaf_range(stf_int *minleaf, stf_int *maxleaf) const;
};

struct NamedGraph {
  std::string name;
  LocalGraph local;
};

// Random graph number `index` for this seed. Global parameters (density,
// empty ranks, nroots of every rank, hot root, ilocal style) come from a
// stream shared by all ranks; the leaves of one rank come from a stream
// derived from (seed, index, rank). Covers: sparse..dense, empty ranks,
// degree-0 and high-degree roots, self edges, contiguous and permuted ilocal
// with gaps and a nonzero minleaf.
LocalGraph random_graph(std::uint64_t seed, int index, int rank, int size);

// Structured graphs.
LocalGraph empty_graph();                                   // nothing anywhere
LocalGraph roots_only_graph(int rank);                      // roots, no leaves
LocalGraph all_to_one_graph(std::uint64_t seed, int rank);  // every leaf -> (0, 0)
// 1D periodic halo: n cells per rank are roots; leaves are the two ghosts in
// slots n (left neighbour's last cell) and n+1 (right neighbour's first).
LocalGraph ring_graph(int rank, int size, int n);
// 2D periodic 5-point halo on an MPI_Dims_create process grid: nx*ny cells
// per rank; leaves are the side ghosts of the (nx+2)*(ny+2) padded block
// (interior and corners are holes), listed in a shuffled order.
LocalGraph grid2d_graph(std::uint64_t seed, int rank, int size, int nx, int ny);
// Every rank's leaves point to its own roots only (no neighbours but self).
LocalGraph self_only_graph(std::uint64_t seed, int rank);
// Only ranks 0 and 1 exchange data; the other ranks are isolated.
LocalGraph pair_only_graph(int rank, int size);

// The standard list used by the tests: structured graphs first, then
// `nrandom` random graphs.
std::vector<NamedGraph> standard_graphs(std::uint64_t seed, int nrandom, MPI_Comm comm);

// A leaf as seen from its root: the rank holding it and its slot.
struct LeafRef {
  int rank;
  stf_int slot;
  stf_int index;  // position in that rank's iremote
};

// The whole graph on every rank, plus everything derived from it that the
// oracle needs: leaves of every root in (rank, slot) order, degrees, and
// multi-root offsets.
struct GlobalGraph {
  MPI_Comm comm = MPI_COMM_NULL;  // the communicator it was gathered on
  int size = 0;
  std::vector<LocalGraph> ranks;
  // leaves_of[p][r]: leaves of root r of rank p, sorted by (rank, slot).
  std::vector<std::vector<std::vector<LeafRef>>> leaves_of;
  // position[p][i]: position of leaf i of rank p in its root's list.
  std::vector<std::vector<stf_int>> position;
  // multi_offset[p][r]: first multi-root of root r; multi_offset[p][nroots] = total.
  std::vector<std::vector<stf_int>> multi_offset;

  stf_int degree(int p, stf_int r) const {
    return static_cast<stf_int>(leaves_of[p][r].size());
  }
  stf_int nmulti(int p) const { return multi_offset[p].back(); }
};

// Collective: gathers every rank's LocalGraph (MPI_Allgatherv) and derives
// the rest. Requires a valid graph (root offsets < owner's nroots).
GlobalGraph gather_graph(const LocalGraph &local, MPI_Comm comm);

}  // namespace stft
