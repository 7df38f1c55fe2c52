// A ring SF for the robustness tests, and the check that it still works
// after a failure.
#pragma once

#include "check.h"
#include "starforest.h"

namespace stft {

// On MPI_COMM_WORLD: leaf i of each rank reads root i of the next rank (n
// roots and n leaves per rank); options, where given, set before the graph.
stf_sf ring_sf(Checker &ck, stf_int n, const char *options = nullptr);
// A bcast and a reduce over such an SF give the right values.
void check_ring_works(Checker &ck, stf_sf sf, stf_int n);

}  // namespace stft
