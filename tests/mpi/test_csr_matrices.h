// Generated matrices for the CSR tests, each aimed at one way the row-grouped
// CSR layout stores rows (apps/src/csr_block.h), and the simple row loop they
// are checked against.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stf_apps.h"

namespace stft {

struct TestMatrix {
  std::string name;
  stf_coo coo;  // free with stf_coo_free
};

// Square n x n matrices, the same on every rank (seeded):
//  random     lengths 0..12 drawn per row (empty rows, rows of one entry, no
//             two lengths alike for long): irregular, sorted by length
//  identical  every row with the same columns, spread over the whole
//             matrix: groups that share one column list, in both blocks
//  distinct   every row 6 entries, no two rows with the same columns:
//             groups with their own columns only, never a shared one
//  nodes      a mesh of nodes with 1..11 unknowns each, coupled to the
//             neighbouring nodes: inodes of every size, some above the
//             largest group (split)
//  long       rows of 16..300 entries (partial sums), some with duplicates
//             that the assembly sums
//  empty      mostly empty rows, the others one entry
std::vector<TestMatrix> csr_test_matrices(int64_t n, unsigned seed);

// Names of the *.mtx.gz files in dir (without the suffix), sorted.
std::vector<std::string> matrix_names(const char *dir);

// y = A x (or A^T x) by the simple row loop over A's rows, and per entry of y
// the sum of |a_ij x_j|, the scale of its rounding error.
void row_loop(const stf_coo &a, const std::vector<double> &x, bool transpose, std::vector<double> *y,
              std::vector<double> *scale);

}  // namespace stft
