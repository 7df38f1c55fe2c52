// Messages in one direction, grouped by peer rank (ranks ascending): peer k
// is ranks[k], its entries are idx[offset[k] .. offset[k+1]) (local slots).
#pragma once

#include <vector>

#include "starforest.h"

namespace stf {

struct Messages {
  std::vector<int> ranks;
  std::vector<stf_int> offset{0};
  std::vector<stf_int> idx;
  int count() const { return static_cast<int>(ranks.size()); }
  stf_int size(int k) const { return offset[k + 1] - offset[k]; }
  // Appends peer `rank`'s entries [first, last), after the last peer's.
  template <class It>
  void add(int rank, It first, It last) {
    ranks.push_back(rank);
    idx.insert(idx.end(), first, last);
    offset.push_back(static_cast<stf_int>(idx.size()));
  }
};

}  // namespace stf
