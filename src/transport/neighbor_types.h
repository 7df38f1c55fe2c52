// One side (sends or receives) of a neighbourhood alltoallw: per neighbour
// of the graph communicator, the count, displacement and datatype of its
// message, each message being the peer's bytes followed by an 8-byte size
// word. A neighbourhood collective has no per-message status, so a message
// shorter than the receiver posted for (the ranks' units differ, the
// receiver's is the larger) would go unnoticed; with the word behind the
// bytes, such a message leaves the receiver's word as it was set before
// the operation, and a longer one is MPI's truncation (or, where MPI says
// nothing, puts data bytes where the word is).
//
// The datatypes (a struct of the bytes and the word, at absolute
// addresses) are kept while the same buffers, unit and direction come
// again, which is the steady state of an application: a begin then costs a
// comparison of pointers. Other buffers build them again, about a
// microsecond per peer.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "plan/messages.h"
#include "transport/large_count.h"

namespace stf {

class NeighborTypes {
 public:
  NeighborTypes() = default;
  NeighborTypes(const NeighborTypes &) = delete;
  NeighborTypes &operator=(const NeighborTypes &) = delete;
  ~NeighborTypes() { release(); }

  // The word a sender with units of `unit_bytes` bytes puts behind each
  // message: a fixed pattern in the high half, so that data bytes in its
  // place are unlikely to read as a valid word.
  static std::uint64_t word_for(std::size_t unit_bytes) {
    return (std::uint64_t{0x53464e42} << 32) | (unit_bytes & 0xffffffffu);
  }
  // A value no sender writes: a receive word not overwritten.
  static constexpr std::uint64_t kUnset = ~std::uint64_t{0};

  // The arrays for peers `peers` (the graph's neighbours in the order
  // `order`, or NULL: the peers' own) with buffers bufs[k], and the words
  // behind them, held here: one for every message where `sending` (the
  // sender's), else one per neighbour. Kept from the last call where
  // `key`, the unit and the buffers are the same.
  int describe(const Messages &peers, const std::vector<int> *order, std::size_t unit_bytes, int key,
               const void *const *bufs, bool sending);
  // Before the collective: every word (the sender's word_for; kUnset).
  void set_words(std::uint64_t value) { std::fill(words_.begin(), words_.end(), value); }
  // After it: the word received from neighbour k.
  std::uint64_t word(int k) const { return words_[k]; }

  const int *counts() const { return counts_.data(); }
  const MPI_Aint *displs() const { return displs_.data(); }
  const MPI_Datatype *types() const { return types_.data(); }
  // For neighbour k of the graph: the index of its peer in `peers`, or -1.
  int peer_of(int k) const { return peer_of_[k]; }
  int neighbours() const { return static_cast<int>(counts_.size()); }

 private:
  void release();

  std::size_t unit_ = 0;
  int key_ = -1;
  std::vector<const void *> bufs_;
  std::vector<std::uint64_t> words_;  // sized when the types are built, which hold their addresses
  std::vector<int> counts_, peer_of_;
  std::vector<MPI_Aint> displs_;
  std::vector<MPI_Datatype> types_;  // MPI_BYTE (no message) or a struct type owned here
};

}  // namespace stf
