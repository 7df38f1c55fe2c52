// What the node-aware planning (steps.cpp, connect.cpp) shares: keys of
// roots, lists to and from a node's leader, the chunk rule and the
// balancing of chunks over a node's ranks.
#pragma once

#include <vector>

#include "core/topology.h"
#include "sf/sf.h"

namespace stf {
namespace nodeaware {

static_assert(sizeof(stf_int) == sizeof(int), "lists travel as MPI_INT");

struct Key {
  stf_int rank, offset;  // a root: its owner and its offset there
};
inline bool operator<(const Key &a, const Key &b) { return a.rank != b.rank ? a.rank < b.rank : a.offset < b.offset; }
inline bool operator==(const Key &a, const Key &b) { return a.rank == b.rank && a.offset == b.offset; }

using Lists = std::vector<std::vector<stf_int>>;  // one list per local rank

// core/comm.h's agree over my node's ranks, naming them by their ranks in
// the SF. Only with -stf_validate (alike on every rank): without it a
// failure stays the rank's own, as elsewhere.
int agree_in_node(const Topology &t, bool validate, int rc);

// Variable-length lists to and from local rank 0 of my node.
// The node agrees (agree_in_node) before each collective whose buffers a rank
// had to allocate, so that a rank short of memory never leaves the others
// in one: where one failed (earlier, or here), every rank of the node
// returns the failure at that agreement (with -stf_validate, agree_in_node).
// After the last collective a failure is the rank's own.
int gather_lists(const Topology &t, bool validate, const std::vector<stf_int> &mine, Lists *all, int earlier);
int scatter_lists(const Topology &t, bool validate, const Lists &all, std::vector<stf_int> *mine, int earlier);

// The chunks of one node pair go to different ranks, so that each is a
// message of its own: pairs largest first (equal totals keep the caller's
// order), a pair's c chunks to the c least loaded of `ways` ranks (lowest
// index on ties), the larger chunks to the less loaded. group[i] names the
// pair of item i; no pair has more than `ways` items. Returns each item's
// owner and its offset in the owner's buffer.
struct Placed {
  int owner;
  stf_int offset;
};
std::vector<Placed> balance(const std::vector<stf_int> &sizes, const std::vector<int> &group, int ways);

// How many chunks the n keys one node reads from another travel in: as many
// as the cap (chunk_units, 0: none) asks for, but no more than either node
// has ranks, so that each chunk has its own sender and receiver. Chunk k
// holds keys [n k / c, n (k + 1) / c) of the pair's keys in (rank, offset)
// order. Both leaders of a pair compute it alike.
stf_int pair_chunks(stf_int n, stf_int chunk_units, int ranks_a, int ranks_b);
inline stf_int chunk_start(stf_int n, stf_int c, stf_int k) {
  return static_cast<stf_int>(static_cast<long long>(n) * k / c);
}

inline int global_rank(const Topology &t, int node, int local) { return t.node_ranks[t.node_offset[node] + local]; }

// A chunk this rank receives: where its keys are in its group list
// ((node, count, keys...) per chunk; at most one chunk per source node).
struct Wanted {
  int node;
  stf_int n;
  std::size_t keys;  // index of its first key in the group list
};
std::vector<Wanted> parse_group(const std::vector<stf_int> &group);

}  // namespace nodeaware
}  // namespace stf
