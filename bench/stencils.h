// Sparse matrices of 3D stencils, generated alike on every rank, for SpMV
// benchmarks on matrices larger than the last-level cache.
#pragma once

#include <stf_apps.h>

#include <string>

namespace bench {

// "lap3d7_N": the 7-point Laplacian on N^3 points (rows of 4..7 entries, no
// two alike). "elast3d27_N": N^3 nodes with 3 unknowns each, every node
// coupled to its 27-point neighbourhood (rows of up to 81 entries; the 3 rows
// of a node have the same columns). Rows in lexicographic order. False for
// another name (out == nullptr: only the name is checked). Free with
// stf_coo_free.
bool stencil_matrix(const std::string &name, stf_coo *out);

}  // namespace bench
