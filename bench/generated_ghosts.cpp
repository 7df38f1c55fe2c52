#include "generated_ghosts.h"

#include <stf_apps.h>

#include "check.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>

namespace bench {
namespace {

// "kind_N" -> N, or 0 when name is not kind followed by '_' and a number;
// -1 for a number past int64_t.
int64_t size_of(const std::string &name, const std::string &kind) {
  if (name.size() <= kind.size() + 1 || name.compare(0, kind.size() + 1, kind + "_") != 0) return 0;
  char *end = nullptr;
  errno = 0;
  const long long n = std::strtoll(name.c_str() + kind.size() + 1, &end, 10);
  if (*end != '\0' || n <= 0) return 0;
  return errno == ERANGE ? -1 : n;
}

bool refuse(MPI_Comm comm, const std::string &name, const char *why) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) std::fprintf(stderr, "generated matrix %s: %s\n", name.c_str(), why);
  return false;
}

// The grid's ghost SF without its leaves on the rank itself (the owned part
// of a local vector, which an SpMV's ghost exchange does not copy).
bool stencil(MPI_Comm comm, const std::string &name, int64_t n, bool box, GhostGraph *out) {
  int ranks;
  MPI_Comm_size(comm, &ranks);
  if (n < 0 || n > 1290) return refuse(comm, name, "more than 1290^3 points (an int counts them)");
  if (n * n * n < ranks) return refuse(comm, name, "fewer points than ranks");
  // basic: the grid's SF is only read for its graph, whatever STF_TYPE says.
  stf_grid_desc d = {3, {n, n, n}, {0, 0, 0}, {0, 0, 0}, box ? STF_STENCIL_BOX : STF_STENCIL_STAR, 1, 1,
                     "-stf_type basic"};
  stf_grid grid = nullptr;
  if (stf_grid_create(comm, &d, &grid) != STF_SUCCESS) return refuse(comm, name, stf_last_error_message());
  stf_sf sf = nullptr;
  CHECK_STF(stf_grid_get_sf(grid, &sf, nullptr));
  GhostGraph g = ghost_graph_of(sf);
  CHECK_STF(stf_grid_destroy(&grid));
  // Entries per direction: 3 for each of the n - 2 inner points, 2 for each end.
  const int64_t line = 3 * n - 2;
  g.rows = n * n * n;
  g.nnz = box ? line * line * line : 7 * n * n * n - 6 * n * n;
  *out = std::move(g);
  return true;
}

// A stream of 64-bit values from one seed: splitmix64 (G. L. Steele, D. Lea,
// C. H. Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014).
struct SplitMix {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double unit() { return static_cast<double>((next() >> 11) + 1) * 0x1.0p-53; }  // in (0, 1]
};

// Rows of rank r under an even split: [first(r), first(r + 1)).
struct EvenSplit {
  int64_t base, extra;
  EvenSplit(int64_t rows, int ranks) : base(rows / ranks), extra(rows % ranks) {}
  int64_t first(int r) const { return r * base + std::min<int64_t>(r, extra); }
  int owner(int64_t row) const {
    const int64_t big = (base + 1) * extra;  // rows of the ranks holding base + 1
    return static_cast<int>(row < big ? row / (base + 1) : extra + (row - big) / base);
  }
};

bool powerlaw(MPI_Comm comm, const std::string &name, int64_t n, GhostGraph *out) {
  int rank, ranks;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  if (n < 0 || n > INT_MAX) return refuse(comm, name, "more rows than an int counts");
  if (n < ranks) return refuse(comm, name, "fewer rows than ranks");
  const EvenSplit split(n, ranks);
  // Column of popularity k: (stride * k + n / 3) mod n, a permutation as
  // stride and n have no common factor (both below 2^31: no overflow).
  int64_t stride = static_cast<int64_t>(0.6180339887 * static_cast<double>(n)) | 1;
  while (std::gcd(stride, n) != 1) stride += 2;
  const double top = std::cbrt(static_cast<double>(n) + 1.0) - 1.0;
  const int64_t first = split.first(rank), last = split.first(rank + 1);
  std::vector<int64_t> ghosts, row;
  long long nnz = 0;
  for (int64_t i = first; i < last; ++i) {
    SplitMix rng{0x5eedULL + static_cast<uint64_t>(i) * 0x2545f4914f6cdd1dULL};
    const int64_t entries = std::min<int64_t>(1000, static_cast<int64_t>(std::pow(rng.unit(), -2.0 / 3.0)));
    row.assign(1, i);  // the diagonal
    for (int64_t e = 0; e < entries; ++e) {
      const double x = std::pow(1.0 + rng.unit() * top, 3.0);  // weight x^(-2/3) on [1, n + 1]
      const int64_t k = std::min<int64_t>(n - 1, static_cast<int64_t>(x) - 1);
      row.push_back((stride * k + n / 3) % n);
    }
    std::sort(row.begin(), row.end());
    row.erase(std::unique(row.begin(), row.end()), row.end());
    nnz += static_cast<long long>(row.size());
    for (int64_t c : row)
      if (c < first || c >= last) ghosts.push_back(c);
  }
  std::sort(ghosts.begin(), ghosts.end());
  ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
  GhostGraph g;
  g.nroots = static_cast<stf_int>(last - first);
  g.nleafspace = static_cast<stf_int>(ghosts.size());
  for (size_t l = 0; l < ghosts.size(); ++l) {
    const int owner = split.owner(ghosts[l]);
    g.ilocal.push_back(static_cast<stf_int>(l));
    g.iremote.push_back(stf_node{owner, static_cast<stf_int>(ghosts[l] - split.first(owner))});
  }
  g.rows = n;
  long long total = 0;
  MPI_Allreduce(&nnz, &total, 1, MPI_LONG_LONG, MPI_SUM, comm);
  g.nnz = total;
  *out = std::move(g);
  return true;
}

}  // namespace

GhostGraph ghost_graph_of(stf_sf sf) {
  MPI_Comm comm = MPI_COMM_NULL;
  CHECK_STF(stf_get_comm(sf, &comm));
  int rank;
  MPI_Comm_rank(comm, &rank);
  stf_int nleaves = 0;
  const stf_int *ilocal = nullptr;
  const stf_node *iremote = nullptr;
  GhostGraph g;
  CHECK_STF(stf_get_graph(sf, &g.nroots, &nleaves, &ilocal, &iremote));
  for (stf_int l = 0; l < nleaves; ++l) {
    if (iremote[l].rank == rank) continue;
    g.ilocal.push_back(ilocal ? ilocal[l] : l);
    g.iremote.push_back(iremote[l]);
    g.nleafspace = std::max(g.nleafspace, g.ilocal.back() + 1);
  }
  return g;
}

bool generated_ghosts(MPI_Comm comm, const std::string &name, GhostGraph *out) {
  const int64_t s7 = size_of(name, "stencil7"), s27 = size_of(name, "stencil27"), pl = size_of(name, "powerlaw");
  if (!s7 && !s27 && !pl) return false;
  if (!out) return true;
  if (s7 || s27) return stencil(comm, name, s7 ? s7 : s27, s27 != 0, out);
  return powerlaw(comm, name, pl, out);
}

}  // namespace bench
