// The first message of an operation whose size differs from what its other
// end expects (the ranks' units differ in size, or the other rank passes
// on the failure of a node-aware step), kept until the operation
// is complete and then reported as its error, so that the SF stays usable.
#pragma once

#include <cstddef>
#include <cstdio>

#include "core/error.h"

namespace stf {

class SizeMismatch {
 public:
  static constexpr std::size_t kUnknown = static_cast<std::size_t>(-1);
  void clear() { rank_ = -1; }
  // The message to or from `rank` has `actual` bytes (kUnknown where only
  // its size tag says it differs) where `expected` were expected.
  void note(int rank, bool to_rank, std::size_t expected, std::size_t actual = kUnknown) {
    if (rank_ >= 0) return;
    rank_ = rank;
    to_rank_ = to_rank;
    expected_ = expected;
    actual_ = actual;
  }
  // STF_ERR_ARG naming the first such message, then forgotten; STF_SUCCESS
  // where there was none.
  int report(const char *transport) {
    if (rank_ < 0) return STF_SUCCESS;
    const int rank = rank_;
    rank_ = -1;
    char size[48] = "another size";
    if (actual_ != kUnknown) std::snprintf(size, sizeof size, "%zu bytes", actual_);
    // A node-aware step passes its rank's failure on as units of another size
    // (sent, or announced as expected to a window's sender).
    return set_error(STF_ERR_ARG,
                     "%s transport: the message %s rank %d has %s, not the %zu expected (the ranks' units differ in "
                     "size, or that rank's operation failed in an earlier node-aware step; -stf_debug 1 checks the "
                     "units in every begin)",
                     transport, to_rank_ ? "to" : "from", rank, size, expected_);
  }

 private:
  int rank_ = -1;
  bool to_rank_ = false;
  std::size_t expected_ = 0, actual_ = kUnknown;
};

}  // namespace stf
