// transports: the same exchanges with every transport, timed in one run.
//
// Graphs ("patterns"):
// - 2d5, 3d27: halos. Ranks form a non-periodic 2D or 3D process grid
//   (MPI_Dims_create); each owns an n^d block of doubles (the roots) and a
//   ghosted (n+2)^d array whose ghost cells are the leaves, pointing at the
//   neighbouring ranks' boundary cells (5-point: faces only; 27-point:
//   faces, edges and corners).
// - spmv: the ghost scatter of a distributed CSR matrix read from a Matrix
//   Market file (--matrix; rows split by nonzeros), roots = x entries,
//   leaves = ghost entries.
// - allgather: every rank gets every rank's --nag roots (the shape the
//   collective transports recognise).
// One iteration is a bcast (MPI_REPLACE, roots -> leaves) followed by a
// reduce (MPI_SUM, leaves -> an accumulator over the roots). The data is
// checked once per pattern and transport; then the transports take turns in
// --rounds rounds of --iters iterations (bench::time_rotating), and the table
// shows each one's median round (time per iteration, slowest rank) with
// [min..max] and the ratio to basic. Transports: basic, neighbor, window
// with each synchronisation, and collective on the allgather pattern
// (elsewhere it would fall back to basic entirely).
#include <starforest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "bench_common.h"
#include "check.h"
#include "stf_apps.h"

namespace {

struct Transport {
  const char *name, *options;
};
const Transport kTransports[] = {{"basic", "-stf_type basic"},
                                 {"neighbor", "-stf_type neighbor"},
                                 {"win-fence", "-stf_type window -stf_window_sync fence"},
                                 {"win-lock", "-stf_type window -stf_window_sync lock"},
                                 {"win-pscw", "-stf_type window -stf_window_sync pscw"},
                                 {"collective", "-stf_type collective"}};
constexpr int kNumTransports = 6;

struct Options {
  int n2 = 128, n3 = 16, nag = 1000, iters = 200, rounds = 7;
  std::string matrix = STF_DEFAULT_MATRIX, json;
};

struct Pattern {
  const char *name;
  int dim;
  bool corners;  // 27-point (all ghost cells) or 5-point (faces only)
};

// The graph of one pattern on this rank: roots, leaf slots in a leaf array
// of nghosted units.
struct Halo {
  stf_int nroots = 0, nghosted = 0;
  std::vector<stf_int> ilocal;
  std::vector<stf_node> iremote;
  std::vector<int> dims, coords;
};

// Roots = owned cells (i fastest), leaf slots = positions in the ghosted array.
Halo make_halo(const Pattern &p, int n, int rank, int size) {
  Halo h;
  h.dims.assign(3, 1);
  std::vector<int> d(p.dim, 0);
  MPI_Dims_create(size, p.dim, d.data());
  for (int k = 0; k < p.dim; k++) h.dims[k] = d[k];
  h.coords = {rank % h.dims[0], (rank / h.dims[0]) % h.dims[1], rank / (h.dims[0] * h.dims[1])};
  const int g = n + 2, nz = p.dim == 3 ? n : 1, gz = p.dim == 3 ? g : 1;
  h.nroots = n * n * nz;
  h.nghosted = g * g * gz;
  for (int z = p.dim == 3 ? -1 : 0; z < (p.dim == 3 ? n + 1 : 1); z++)
    for (int y = -1; y <= n; y++)
      for (int x = -1; x <= n; x++) {
        int c[3] = {x, y, z}, o[3] = {0, 0, 0}, away = 0;
        for (int k = 0; k < 3; k++) {
          o[k] = c[k] < 0 ? -1 : (k < p.dim && c[k] >= n ? 1 : 0);
          away += o[k] != 0;
        }
        if (away == 0 || (!p.corners && away > 1)) continue;
        int nb[3], ok = 1;
        for (int k = 0; k < 3; k++) {
          nb[k] = h.coords[k] + o[k];
          ok &= nb[k] >= 0 && nb[k] < h.dims[k];
        }
        if (!ok) continue;  // domain boundary
        int r = nb[0] + h.dims[0] * (nb[1] + h.dims[1] * nb[2]);
        int lx = x - o[0] * n, ly = y - o[1] * n, lz = z - o[2] * n;
        h.ilocal.push_back((x + 1) + g * ((y + 1) + g * (p.dim == 3 ? z + 1 : 0)));
        h.iremote.push_back(stf_node{r, lx + n * (ly + n * lz)});
      }
  return h;
}

// The graph of an existing SF (leaves contiguous when ilocal is NULL).
Halo graph_of(stf_sf sf) {
  Halo h;
  stf_int nleaves = 0;
  const stf_int *ilocal = nullptr;
  const stf_node *iremote = nullptr;
  CHECK_STF(stf_get_graph(sf, &h.nroots, &nleaves, &ilocal, &iremote));
  for (stf_int i = 0; i < nleaves; i++) {
    h.ilocal.push_back(ilocal ? ilocal[i] : i);
    h.iremote.push_back(iremote[i]);
    h.nghosted = std::max(h.nghosted, h.ilocal.back() + 1);
  }
  return h;
}

Halo make_spmv(const std::string &path) {
  stf_coo coo;
  stf_csr A = nullptr;
  if (stf_mm_read(path.c_str(), &coo) != STF_SUCCESS) {
    std::fprintf(stderr, "transports: cannot read %s: %s\n", path.c_str(), stf_last_error_message());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  CHECK_STF(stf_csr_create(MPI_COMM_WORLD, &coo, STF_PARTITION_NNZ, &A));
  stf_coo_free(&coo);
  stf_sf ghost = nullptr;
  CHECK_STF(stf_csr_get_ghost_sf(A, &ghost));
  Halo h = graph_of(ghost);
  CHECK_STF(stf_csr_destroy(&A));
  return h;
}

Halo make_allgather(int nag) {
  stf_sf sf = nullptr;
  CHECK_STF(stf_create_from_pattern(MPI_COMM_WORLD, STF_PATTERN_ALLGATHER, nag, &sf));
  Halo h = graph_of(sf);
  CHECK_STF(stf_destroy(&sf));
  return h;
}

// Global value of an owned cell: unique per (rank, cell).
double value(int rank, stf_int cell) { return rank * 1e6 + cell; }

void verify(stf_sf sf, const Halo &h, int rank, const char *what) {
  std::vector<double> roots(h.nroots), ghosted(h.nghosted, -1.0);
  for (stf_int i = 0; i < h.nroots; i++) roots[i] = value(rank, i);
  CHECK_STF(stf_bcast(sf, MPI_DOUBLE, roots.data(), ghosted.data(), MPI_REPLACE));
  long bad = 0;
  for (std::size_t l = 0; l < h.ilocal.size(); l++)
    bad += ghosted[h.ilocal[l]] != value(h.iremote[l].rank, h.iremote[l].index);
  std::vector<double> acc(h.nroots, 0.0);
  CHECK_STF(stf_reduce(sf, MPI_DOUBLE, ghosted.data(), acc.data(), MPI_SUM));
  // Every ghost copy of my cell i holds value(rank, i): acc[i] is a multiple.
  for (stf_int i = 0; i < h.nroots; i++)
    if (acc[i] != 0) {
      double m = acc[i] / value(rank, i);
      bad += i != 0 && m != static_cast<double>(static_cast<long>(m));
    }
  long total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (total) {
    if (rank == 0) std::fprintf(stderr, "transports: %s: %ld wrong values\n", what, total);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

int parse(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    bool v = i + 1 < argc;
    if (a == "--help" || a == "-h") return 1;
    if (a == "--n2" && v) o.n2 = std::atoi(argv[++i]);
    else if (a == "--nag" && v) o.nag = std::atoi(argv[++i]);
    else if (a == "--matrix" && v) o.matrix = argv[++i];
    else if (a == "--n3" && v) o.n3 = std::atoi(argv[++i]);
    else if (a == "--iters" && v) o.iters = std::atoi(argv[++i]);
    else if (a == "--rounds" && v) o.rounds = std::atoi(argv[++i]);
    else if (a == "--json" && v) o.json = argv[++i];
    else {
      std::fprintf(stderr, "transports: bad argument '%s' (try --help)\n", a.c_str());
      return 2;
    }
  }
  if (o.n2 < 1 || o.n3 < 1 || o.nag < 1 || o.iters < 1 || o.rounds < 1) {
    std::fprintf(stderr, "transports: sizes, --iters and --rounds must be >= 1\n");
    return 2;
  }
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Options opt;
  if (const char *dir = std::getenv("STF_MATRIX_DIR")) opt.matrix = std::string(dir) + "/bcsstk16.mtx.gz";
  int p = parse(argc, argv, opt);
  if (p) {
    if (p == 1 && rank == 0)
      std::printf("usage: mpiexec -n N %s [--n2 N] [--n3 N] [--nag N] [--matrix FILE] [--iters I] [--rounds R] "
                  "[--json FILE]\n"
                  "  bcast (REPLACE) + reduce (SUM) with every transport: halos, SpMV ghosts, allgather.\n"
                  "  --n2 N  2D block edge (default 128)   --n3 N  3D block edge (default 16)\n"
                  "  --nag N  allgather roots per rank (1000)  --matrix FILE  for spmv (%s)\n"
                  "  --iters I  iterations per round (200)  --rounds R  rounds per transport (7)\n",
                  argv[0], opt.matrix.c_str());
    MPI_Finalize();
    return p == 1 ? 0 : 2;
  }

  const Pattern patterns[] = {{"2d5", 2, false}, {"3d27", 3, true}, {"spmv", 0, false}, {"allgather", 0, false}};
  bench::JsonLog log;
  if (rank == 0)
    std::printf("%-9s %5s %6s %-10s %12s %24s %8s\n", "pattern", "ranks", "n", "transport", "us/iter",
                "[min..max]", "ratio");
  for (const Pattern &pat : patterns) {
    const std::string pname = pat.name;
    const bool allgather = pname == "allgather";
    const int n = pat.dim == 2 ? opt.n2 : pat.dim == 3 ? opt.n3 : allgather ? opt.nag : 0;
    Halo h = pat.dim ? make_halo(pat, n, rank, size) : allgather ? make_allgather(n) : make_spmv(opt.matrix);
    // collective only where it has a pattern to serve
    const int ntransports = allgather ? kNumTransports : kNumTransports - 1;
    stf_sf sfs[kNumTransports] = {};
    for (int t = 0; t < ntransports; t++) {
      CHECK_STF(stf_create(MPI_COMM_WORLD, &sfs[t]));
      CHECK_STF(stf_set_sf_options(sfs[t], kTransports[t].options));
      CHECK_STF(stf_set_graph(sfs[t], h.nroots, static_cast<stf_int>(h.ilocal.size()), h.ilocal.data(),
                              STF_COPY_VALUES, h.iremote.data(), STF_COPY_VALUES));
      CHECK_STF(stf_setup(sfs[t]));
      verify(sfs[t], h, rank, (pname + " " + kTransports[t].name).c_str());
    }
    std::vector<double> roots(h.nroots, 1.0), ghosted(h.nghosted, 0.0), acc(h.nroots, 0.0);
    std::vector<std::function<void()>> calls;
    for (int t = 0; t < ntransports; t++)
      calls.push_back([&, t] {
        CHECK_STF(stf_bcast(sfs[t], MPI_DOUBLE, roots.data(), ghosted.data(), MPI_REPLACE));
        CHECK_STF(stf_reduce(sfs[t], MPI_DOUBLE, ghosted.data(), acc.data(), MPI_SUM));
      });
    for (auto &call : calls) bench::time_per_call(MPI_COMM_WORLD, std::max(1, opt.iters / 10), call);  // warm-up
    std::vector<bench::Stats> st = bench::time_rotating(MPI_COMM_WORLD, opt.rounds, opt.iters, calls);
    for (int t = 0; t < ntransports; t++) {
      const double ratio = st[t].us / st[0].us;
      if (rank == 0)
        std::printf("%-9s %5d %6d %-10s %12.2f %11.2f..%-11.2f %8.2f\n", pat.name, size, n, kTransports[t].name,
                    st[t].us, st[t].min_us, st[t].max_us, ratio);
      bench::Record rec;
      rec.timing("transports", "starforest", n, size, st[t])
          .str("pattern", pat.name)
          .integer("n", n)
          .str("transport", kTransports[t].name)
          .str("memory", "host")
          .num("ratio_to_basic", ratio);
      if (pname == "spmv") rec.str("matrix", opt.matrix);
      log.add(rec);
    }
    for (stf_sf &sf : sfs)
      if (sf) CHECK_STF(stf_destroy(&sf));
  }
  int rc = 0;
  if (rank == 0 && !opt.json.empty() && !log.write(opt.json)) rc = 1;
  MPI_Finalize();
  return rc;
}
