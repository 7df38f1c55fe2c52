#include "bandwidth.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace bench {

long long last_level_cache_bytes() {
  long long best = 0;
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::FILE *f = std::fopen((dir + "size").c_str(), "r");
    if (!f) break;
    long long kib = 0;
    char unit = 'K';
    if (std::fscanf(f, "%lld%c", &kib, &unit) >= 1)
      best = std::max(best, kib * (unit == 'M' ? 1048576LL : unit == 'K' ? 1024LL : 1LL));
    std::fclose(f);
  }
#ifdef _SC_LEVEL3_CACHE_SIZE
  if (best == 0) best = std::max(0L, sysconf(_SC_LEVEL3_CACHE_SIZE));
#endif
  return best;
}

Triad::Triad(MPI_Comm comm) {
  int size;
  MPI_Comm_size(comm, &size);
  const long long llc = std::max(last_level_cache_bytes(), 8LL << 20);
  const std::size_t n = static_cast<std::size_t>(4 * llc / size / 8);
  a_.assign(n, 0.0);
  b_.assign(n, 1.0);
  c_.assign(n, 2.0);
  bytes_ = 24.0 * static_cast<double>(n) * size;
}

void Triad::operator()() {
  double *a = a_.data();
  const double *b = b_.data(), *c = c_.data();
  const std::size_t n = a_.size();
  for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + 3.0 * c[i];
}

bool Triad::correct() const {
  return std::all_of(a_.begin(), a_.end(), [](double v) { return v == 7.0; });
}

double csr_product_bytes(int64_t nnz, int64_t nrows, int64_t nghost) {
  return 12.0 * static_cast<double>(nnz) + 4.0 * static_cast<double>(nrows + 1) +
         8.0 * static_cast<double>(nrows + nghost) + 8.0 * static_cast<double>(nrows);
}

}  // namespace bench
