// Ghost graphs of generated matrices, built by each rank for its own rows
// only: under a simulator one process holds every rank, so a whole matrix
// per rank, as the Matrix Market matrices are read, would not fit at
// thousands of ranks.
#pragma once

#include <starforest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace bench {

// An SpMV's ghost exchange: roots are this rank's entries of x, leaves the
// entries of other ranks that its rows read (no leaf on the rank itself).
struct GhostGraph {
  stf_int nroots = 0, nleafspace = 0;
  std::vector<stf_int> ilocal;
  std::vector<stf_node> iremote;
  int64_t rows = 0, nnz = 0;  // the whole matrix's
};

// The graph of sf (the CSR's ghost SF, a grid's) as an SpMV's ghost
// exchange has it: its leaves on other ranks only; rows and nnz left 0.
GhostGraph ghost_graph_of(stf_sf sf);

// True when name is one of:
// - "stencil7_N", "stencil27_N": the 7- or 27-point stencil on N^3 points
//   (not periodic), split in boxes over a 3D process grid (stf_grid with
//   MPI_Dims_create's grid), rows numbered box by box;
// - "powerlaw_N": N rows split evenly in row order; row i has floor(1/u^(2/3))
//   off-diagonal draws (u uniform in (0, 1]: Pareto index 1.5, density of
//   exponent -2.5, mean 2.55, at most 1,000), each in a column drawn with weight
//   (k + 1)^(-2/3) for the column of popularity k, whose columns are
//   scattered over the rows by a fixed permutation (so that every rank
//   holds a few of the most read entries). Every row's entries come from
//   its own seed: any split gives the same matrix.
// With out == nullptr only the name is checked; else collective over comm,
// and false on every rank where the matrix cannot be made (fewer rows or
// points than ranks, more than an int counts, a process grid stf_grid
// refuses), with a message on rank 0.
bool generated_ghosts(MPI_Comm comm, const std::string &name, GhostGraph *out);

}  // namespace bench
