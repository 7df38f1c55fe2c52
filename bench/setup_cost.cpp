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
// Graphs (--graphs, default ring,grid3d,spmv): "ring" (one leaf per rank:
// set-up is almost nothing but discovery, so the allreduces weigh most),
// "grid3d" (the 27-point ghost graph of a periodic 3D grid of --n points
// per direction, or --block K: K^3 points per rank, stf_grid),
// "spmv" (the ghost graph of stf_csr_create on a shared matrix, when
// present) and "powerlaw" (each rank's leaves pick their owner rank i with
// probability proportional to 1/(i+1): a few hub ranks are read by almost
// every rank, as in the ghost graphs of power-law matrices).
//
// --baseline OPTS and --variant OPTS compare other option strings the same
// way (e.g. a node-aware strategy's set-up against basic's); --variant
// given again adds variants, each compared with the baseline. --types a,b,..
// is short for --baseline "-stf_type a" --variant "-stf_type b" ... (for
// launchers that split arguments at spaces, as SMPI's smpirun does).
//
// One SF stays alive on MPI_COMM_WORLD for the whole run, as in a program
// that keeps SFs: the timed ones share its private duplicate of the
// communicator and the node topology found on it. --alone drops it, so
// that every timed SF is the communicator's only one, and its set-up also
// finds the node topology again (its creation duplicates the communicator).
//
// usage: setup_cost [--rounds R] [--setups K] [--n N] [--matrix FILE] [--json FILE]
//                   [--block K] [--graphs a,b] [--baseline OPTS] [--variant OPTS]... [--types a,b]
//                   [--alone]
#include <starforest.h>
#include <stf_apps.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench_common.h"
#include "check.h"

namespace {

struct Options {
  int rounds = 11, setups = 20;
  long n = 32;     // grid points per direction
  long block = 0;  // if > 0: n = block * cbrt(ranks), rounded (same points per rank at any count)
  std::string matrix = STF_DEFAULT_MATRIX, json;
  std::string baseline = "-stf_validate 0";
  std::vector<std::string> variants;  // default: -stf_validate 1
  std::vector<std::string> graphs = {"ring", "grid3d", "spmv"};
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

// 64 roots and 64 leaves per rank; each leaf's owner is drawn with weight
// 1/(i+1) for rank i, its root uniformly, from a generator seeded by rank.
Graph powerlaw(int rank, int size) {
  const stf_int per_rank = 64;
  std::vector<double> weight(size);
  for (int i = 0; i < size; i++) weight[i] = 1.0 / (i + 1);
  std::discrete_distribution<int> owner(weight.begin(), weight.end());
  std::uniform_int_distribution<stf_int> root(0, per_rank - 1);
  std::mt19937 rng(1234u + static_cast<unsigned>(rank));
  Graph g{"powerlaw", per_rank, {}, {}};
  for (stf_int k = 0; k < per_rank; k++) g.iremote.push_back({owner(rng), root(rng)});
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
    else if (a == "--block" && v) o->block = std::atol(argv[++i]);
    else if (a == "--matrix" && v) o->matrix = argv[++i];
    else if (a == "--json" && v) o->json = argv[++i];
    else if (a == "--baseline" && v) o->baseline = argv[++i];
    else if (a == "--variant" && v) o->variants.push_back(argv[++i]);
    else if (a == "--graphs" && v) o->graphs = bench::split_list(argv[++i]);
    else if (a == "--types" && v) {
      const std::vector<std::string> types = bench::split_list(argv[++i]);
      if (types.size() < 2) return false;
      o->baseline = "-stf_type " + types[0];
      for (size_t t = 1; t < types.size(); t++) o->variants.push_back("-stf_type " + types[t]);
    }
    else if (a == "--alone") o->alone = true;
    else return false;
  }
  if (o->variants.empty()) o->variants.push_back("-stf_validate 1");
  for (const std::string &g : o->graphs)
    if (g != "ring" && g != "grid3d" && g != "spmv" && g != "powerlaw") return false;
  return o->rounds > 0 && o->setups > 0 && o->n > 2 && !o->graphs.empty();
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
                   "usage: setup_cost [--rounds R] [--setups K] [--n N] [--block K] [--matrix FILE] [--json FILE] "
                   "[--graphs ring,grid3d,spmv,powerlaw] [--baseline OPTS] [--variant OPTS]... [--types a,b] "
                   "[--alone]\n");
    MPI_Finalize();
    return 2;
  }
  if (o.block > 0) o.n = std::max(3L, std::lround(o.block * std::cbrt(static_cast<double>(size))));
  std::vector<Graph> graphs;
  for (const std::string &name : o.graphs) {
    Graph g;
    if (name == "ring") graphs.push_back(ring(rank, size));
    else if (name == "grid3d") graphs.push_back(grid3d(o.n));
    else if (name == "powerlaw") graphs.push_back(powerlaw(rank, size));
    else if (spmv(o.matrix, &g)) graphs.push_back(g);
    else if (rank == 0) std::printf("# spmv skipped: cannot read %s\n", o.matrix.c_str());
  }

  if (graphs.empty()) {  // spmv alone, without its matrix
    MPI_Finalize();
    return 77;
  }
  stf_sf kept = nullptr;  // see the top of the file
  if (!o.alone) {
    const Graph &first = graphs.front();
    CHECK_STF(stf_create(MPI_COMM_WORLD, &kept));
    CHECK_STF(stf_set_graph(kept, first.nroots, static_cast<stf_int>(first.iremote.size()), nullptr,
                            STF_COPY_VALUES, first.iremote.data(), STF_COPY_VALUES));
    CHECK_STF(stf_setup(kept));
  }
  std::vector<std::string> options = {o.baseline};  // [0] the baseline, then the variants
  options.insert(options.end(), o.variants.begin(), o.variants.end());
  const int nv = static_cast<int>(options.size());
  bench::JsonLog log;
  if (rank == 0) {
    std::printf("%d ranks, %d rounds of %d set-ups per variant; time of one stf_setup (slowest rank)%s; "
                "grid3d %ld^3\nbaseline: %s\n",
                size, o.rounds, o.setups, o.alone ? ", each SF alone on its communicator" : "", o.n,
                options[0].c_str());
    for (int v = 1; v < nv; v++)
      std::printf("variant%s: %s\n", nv > 2 ? std::to_string(v).c_str() : " ", options[v].c_str());
    std::printf("%-8s %8s %3s %26s %26s %7s %9s\n", "graph", "edges", "v", "baseline us [min..max]",
                "variant us [min..max]", "ratio", "diff us");
  }
  for (const Graph &gr : graphs) {
    long long edges = static_cast<long long>(gr.iremote.size());
    MPI_Allreduce(MPI_IN_PLACE, &edges, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    std::vector<std::vector<double>> samples(nv);
    for (int round = 0; round < o.rounds; round++)
      for (int k = 0; k < nv; k++) {
        const int v = (round + k) % nv;  // who goes first rotates
        samples[v].push_back(1e6 * time_setups(gr, options[v].c_str(), o.setups));
      }
    std::vector<bench::Stats> st(nv);
    for (int v = 0; v < nv; v++) st[v] = bench::summarize(samples[v], static_cast<long>(o.rounds) * o.setups);
    if (rank != 0) continue;
    for (int v = 1; v < nv; v++)
      std::printf("%-8s %8lld %3d %26s %26s %7.3f %9.1f\n", gr.name.c_str(), edges, v,
                  bench::range_text(st[0]).c_str(), bench::range_text(st[v]).c_str(), st[v].us / st[0].us,
                  st[v].us - st[0].us);
    for (int v = 0; v < nv; v++)
      log.add(bench::Record()
                  .timing("setup_cost", v ? "variant" : "baseline", edges, size, st[v])
                  .str("graph", gr.name)
                  .str("options", options[v])
                  .str("alone", o.alone ? "yes" : "no"));
  }
  if (kept) CHECK_STF(stf_destroy(&kept));
  if (rank == 0 && !o.json.empty() && !log.write(o.json)) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Finalize();
  return 0;
}
