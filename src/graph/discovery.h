// Two-sided discovery: each rank knows whose roots its leaves point to; find
// out which ranks point to my roots and which root offsets they want.
#pragma once

#include <vector>

#include "core/options.h"
#include "starforest.h"

namespace stf {

// Messages in one direction, grouped by peer rank (ranks ascending):
// peer k is ranks[k], its entries are idx[offset[k] .. offset[k+1]).
struct Messages {
  std::vector<int> ranks;
  std::vector<stf_int> offset{0};
  std::vector<stf_int> idx;
  int count() const { return static_cast<int>(ranks.size()); }
  stf_int size(int k) const { return offset[k + 1] - offset[k]; }
};

// Collective. `wanted` lists, per root-owning rank (never this rank), the
// root offsets this rank's leaves point to. Returns, per leaf-owning rank,
// the offsets it asked for, in the order it listed them.
// NBX keeps memory O(neighbours); allreduce needs O(communicator size).
int discover(MPI_Comm comm, TwoSided algo, const Messages &wanted, Messages *asked);

}  // namespace stf
