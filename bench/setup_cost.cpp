// setup_cost: what validation (-stf_validate, on by default) adds to
// stf_setup. Its checks are three MPI_Allreduce calls with basic (the
// options alike, the root offsets, the transport made everywhere; other
// transports and the strategies agree a few more times); this times stf_setup
// of the same graph with -stf_validate 1 and with -stf_validate 0 (the
// baseline), in the same run: rounds alternate
// which goes first, each round sets up --setups fresh SFs per variant, and
// every set-up starts after a barrier and is timed on its own (its slowest
// rank). Reported: median round with [min..max], the ratio and the
// difference per set-up.
//
// Graphs: "ring" (one leaf per rank: set-up is almost nothing but
// discovery, so the allreduces weigh most), "grid3d" (the 27-point ghost
// graph of a periodic 3D grid, stf_grid), and "spmv" (the ghost graph of
// stf_csr_create on a shared matrix, when present).
//
// --baseline OPTS and --variant OPTS compare other option strings the same
// way (e.g. a node-aware strategy's set-up against basic's).
//
// One SF stays alive on MPI_COMM_WORLD for the whole run, as in a program
// that keeps SFs: the timed ones share its private duplicate of the
// communicator and the node topology found on it. --alone drops it, so
// that every timed SF is the communicator's only one, and its set-up also
// finds the node topology again (its creation duplicates the communicator).
//
// usage: setup_cost [--rounds R] [--setups K] [--n N] [--matrix FILE] [--json FILE]
//                   [--baseline OPTS] [--variant OPTS] [--alone]
#include <starforest.h>
#include <stf_apps.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_common.h"
#include "check.h"

namespace {

struct Options {
  int rounds = 11, setups = 20;
  long n = 32;  // grid points per direction
  std::string matrix = STF_DEFAULT_MATRIX, json;
  std::string baseline = "-stf_validate 0", variant = "-stf_validate 1";
  bool alone = false;  // no SF kept alive between the timed ones
};

// A graph as stf_set_graph takes it, copied out of an SF the apps built.
struct Graph {
  std::string name;
  stf_int nroots = 0;
  std::vector<stf_int> ilocal;
  std::vector<stf_node> iremote;
};

Graph copy_graph(const char *name, stf_sf sf) {
  Graph g{name, 0, {}, {}};
  stf_int nleaves = 0;
  const stf_int *ilocal = nullptr;
  const stf_node *iremote = nullptr;
  CHECK_STF(stf_get_graph(sf, &g.nroots, &nleaves, &ilocal, &iremote));
  g.iremote.assign(iremote, iremote + nleaves);
  if (ilocal) g.ilocal.assign(ilocal, ilocal + nleaves);
  return g;
}

Graph ring(int rank, int size) { return Graph{"ring", 1, {}, {{(rank + 1) % size, 0}}}; }

Graph grid3d(long n) {
  const int64_t m = n;
  stf_grid_desc d = {3, {m, m, m}, {0, 0, 0}, {1, 1, 1}, STF_STENCIL_BOX, 1, 1, nullptr};
  stf_grid grid = nullptr;
  stf_sf sf = nullptr;
  CHECK_STF(stf_grid_create(MPI_COMM_WORLD, &d, &grid));
  CHECK_STF(stf_grid_get_sf(grid, &sf, nullptr));
  Graph g = copy_graph("grid3d", sf);
  CHECK_STF(stf_grid_destroy(&grid));
  return g;
}

// The ghost graph of an SpMV on the matrix; false if it cannot be read.
bool spmv(const std::string &path, Graph *out) {
  stf_coo a{};
  if (stf_mm_read(path.c_str(), &a) != STF_SUCCESS) return false;
  stf_csr A = nullptr;
  stf_sf sf = nullptr;
  CHECK_STF(stf_csr_create(MPI_COMM_WORLD, &a, STF_PARTITION_NNZ, &A));
  CHECK_STF(stf_csr_get_ghost_sf(A, &sf));
  *out = copy_graph("spmv", sf);
  CHECK_STF(stf_csr_destroy(&A));
  stf_coo_free(&a);
  return true;
}

// Mean seconds of one stf_setup with these options on the slowest rank.
double time_setups(const Graph &g, const char *options, int setups) {
  double total = 0;
  for (int k = 0; k < setups; k++) {
    stf_sf sf = nullptr;
    CHECK_STF(stf_create(MPI_COMM_WORLD, &sf));
    CHECK_STF(stf_set_sf_options(sf, options));
    CHECK_STF(stf_set_graph(sf, g.nroots, static_cast<stf_int>(g.iremote.size()),
                            g.ilocal.empty() ? nullptr : g.ilocal.data(), STF_COPY_VALUES, g.iremote.data(),
                            STF_COPY_VALUES));
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    CHECK_STF(stf_setup(sf));
    total += MPI_Wtime() - t0;
    CHECK_STF(stf_destroy(&sf));
  }
  return bench::max_over_ranks(total / setups, MPI_COMM_WORLD);
}

bool parse(int argc, char **argv, Options *o) {
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--rounds" && v) o->rounds = std::atoi(argv[++i]);
    else if (a == "--setups" && v) o->setups = std::atoi(argv[++i]);
    else if (a == "--n" && v) o->n = std::atol(argv[++i]);
    else if (a == "--matrix" && v) o->matrix = argv[++i];
    else if (a == "--json" && v) o->json = argv[++i];
    else if (a == "--baseline" && v) o->baseline = argv[++i];
    else if (a == "--variant" && v) o->variant = argv[++i];
    else if (a == "--alone") o->alone = true;
    else return false;
  }
  return o->rounds > 0 && o->setups > 0 && o->n > 2;
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Options o;
  if (!parse(argc, argv, &o)) {
    if (rank == 0)
      std::fprintf(stderr,
                   "usage: setup_cost [--rounds R] [--setups K] [--n N] [--matrix FILE] [--json FILE] "
                   "[--baseline OPTS] [--variant OPTS] [--alone]\n");
    MPI_Finalize();
    return 2;
  }
  std::vector<Graph> graphs = {ring(rank, size), grid3d(o.n)};
  Graph g;
  if (spmv(o.matrix, &g)) graphs.push_back(g);
  else if (rank == 0) std::printf("# spmv skipped: cannot read %s\n", o.matrix.c_str());

  stf_sf kept = nullptr;  // see the top of the file
  if (!o.alone) {
    const Graph &first = graphs.front();
    CHECK_STF(stf_create(MPI_COMM_WORLD, &kept));
    CHECK_STF(stf_set_graph(kept, first.nroots, static_cast<stf_int>(first.iremote.size()), nullptr,
                            STF_COPY_VALUES, first.iremote.data(), STF_COPY_VALUES));
    CHECK_STF(stf_setup(kept));
  }
  const char *variants[2] = {o.baseline.c_str(), o.variant.c_str()};
  bench::JsonLog log;
  if (rank == 0)
    std::printf("%d ranks, %d rounds of %d set-ups per variant; time of one stf_setup (slowest rank)%s\n"
                "baseline: %s\nvariant:  %s\n%-7s %8s %26s %26s %7s %9s\n",
                size, o.rounds, o.setups, o.alone ? ", each SF alone on its communicator" : "", variants[0],
                variants[1], "graph", "edges", "baseline us [min..max]",
                "variant us [min..max]", "ratio", "diff us");
  for (const Graph &gr : graphs) {
    long long edges = static_cast<long long>(gr.iremote.size());
    MPI_Allreduce(MPI_IN_PLACE, &edges, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    std::vector<double> samples[2];
    for (int round = 0; round < o.rounds; round++)
      for (int k = 0; k < 2; k++) {
        const int v = (round + k) % 2;  // who goes first alternates
        samples[v].push_back(1e6 * time_setups(gr, variants[v], o.setups));
      }
    bench::Stats st[2];
    for (int v = 0; v < 2; v++) st[v] = bench::summarize(samples[v], static_cast<long>(o.rounds) * o.setups);
    if (rank == 0) {
      std::printf("%-7s %8lld %26s %26s %7.3f %9.1f\n", gr.name.c_str(), edges, bench::range_text(st[0]).c_str(),
                  bench::range_text(st[1]).c_str(), st[1].us / st[0].us, st[1].us - st[0].us);
      for (int v = 0; v < 2; v++)
        log.add(bench::Record()
                    .timing("setup_cost", v ? "variant" : "baseline", edges, size, st[v])
                    .str("graph", gr.name)
                    .str("options", variants[v])
                    .str("alone", o.alone ? "yes" : "no"));
    }
  }
  if (kept) CHECK_STF(stf_destroy(&kept));
  if (rank == 0 && !o.json.empty() && !log.write(o.json)) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Finalize();
  return 0;
}
