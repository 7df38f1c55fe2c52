// Memory-bandwidth yardsticks for the SpMV benchmarks: STREAM's triad
// measured in the same run, the last-level cache size, and the bytes a CSR
// product must move at least, so that a product's time can be set against
// the time that bandwidth allows.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "bench_common.h"

namespace bench {

// STREAM's triad a[i] = b[i] + s * c[i] (J. D. McCalpin, "Memory bandwidth
// and machine balance in current high performance computers", IEEE TCCA
// Newsletter, 1995): each rank of comm runs it on its own arrays, whose total
// over the ranks is at least four times the last-level cache each, so that
// timing it on all ranks at once (among the implementations of a
// time_rotating measurement) gives the machine's bandwidth under the same
// conditions. 24 bytes counted per element, as STREAM does.
class Triad {
 public:
  explicit Triad(MPI_Comm comm);
  void operator()();
  double bytes() const { return bytes_; }         // one call on all ranks
  long long array_bytes() const { return 8LL * static_cast<long long>(a_.size()); }  // per array and rank
  bool correct() const;                           // a = b + 3 c after a call

 private:
  std::vector<double> a_, b_, c_;
  double bytes_ = 0;
};

// Size of the largest cache (Linux sysfs, else sysconf), 0 if unknown.
long long last_level_cache_bytes();

// Bytes one product y = A x with CSR storage moves at least: values and
// column indices (8 + 4 per nonzero), row pointers (4 per row, plus one),
// x and the ghost values read once (8 each), y written once (8 per row).
double csr_product_bytes(int64_t nnz, int64_t nrows, int64_t nghost);

}  // namespace bench
