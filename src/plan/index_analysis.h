// Index analysis at set-up: the cheapest description of the units one
// message (or the self part) touches, so that kernels loop over a pattern
// instead of reading an array, and contiguous messages need no copy at all.
// Pure functions: no MPI, no SF.
#pragma once

#include "kernels/kernels.h"

namespace stf {

// Classify idx[0..n) (in message order; the order is kept):
// - contiguous when idx[i] == idx[0] + i (no array is needed);
// - strided when it is exactly start + X*Y*k + X*j + i, i fastest, for a box
//   dx*dy*dz with dx < X and dy <= Y; dz == 1 (Y = dy) for one plane, and
//   dx == 1 for a single column (x faces, edges);
// - indexed otherwise, with has_duplicates telling whether a unit repeats.
// With optimise false every list is indexed (the -stf_pack_opt 0 baseline).
// The result points into idx when indexed: idx must outlive it.
IndexList analyze_indices(const stf_int *idx, stf_int n, bool optimise);

}  // namespace stf
