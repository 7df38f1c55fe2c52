// autoselect: how well -stf_type auto chooses. For a fixed set of cases
// (the SpMV ghost exchange of every matrix in ../shared/matrices, and the
// structured-grid ghost exchanges of apps' stf_grid: 2D 5-point, 3D 7-point
// and the 3D 27-point box, whose 26 neighbours are the halo3d pattern), each
// at unit sizes of 8 and 64 bytes, every transport and strategy that
// applies is timed on the same graph (bcast, the slowest rank's median
// round, candidates taking turns: bench::time_rotating), beside
//   - the model's predicted time of each candidate at the case's unit size
//     (stf_explain of the auto SF, parsed),
//   - the model-only pick (-stf_type auto; the library predicts for 8-byte
//     units unless told the unit: --tell-unit passes -stf_auto_unit_bytes)
//     and the autotuned pick (-stf_autotune N, its trial in that unit),
//   - the same under a second profile (--baseline-profile), judged by the
//     same measurements.
// Before timing, every candidate's bcast must equal basic's.
// One JSON record per case and candidate; bench/autoselect_report.py
// combines the runs of several layouts into the table and the scatter plot.
#include <starforest.h>
#include <stf_apps.h>

#include "bench_common.h"
#include "check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#ifndef STF_MATRIX_DIR
#define STF_MATRIX_DIR "../shared/matrices"
#endif

namespace {

struct Options {
  std::string dir = STF_MATRIX_DIR, json, profile;
  std::string baseline;  // a second profile whose picks and predictions are recorded beside (model_pick_baseline, ...)
  std::vector<std::string> matrices;  // empty: every *.mtx.gz in dir
  std::vector<int> units = {8, 64};   // bytes per unit (multiples of 8)
  std::vector<std::string> grids = {"2d5", "3d7", "3d27"};
  int rounds = 5, autotune = 5;
  double seconds = 0.4;  // timed seconds per case (all candidates)
  long split_bytes = 16384;
  int64_t n2 = 512, n3 = 48;  // grid points per direction
  int ranks_per_node = 0;     // 0: the hosts are the nodes
  bool tell_unit = false;     // auto SFs get -stf_auto_unit_bytes of the case
  bench::Timing timing = bench::Timing::streamed;
};

void usage(const char *prog) {
  std::printf(
      "usage: mpiexec -n N %s [--matrices a,b] [--grids 2d5,3d7,3d27] [--units 8,64] [--rounds R]\n"
      "                  [--seconds S] [--autotune N] [--profile FILE] [--split-bytes B] [--tell-unit] [--dir DIR]\n"
      "                  [--timing streamed|isolated] [--json FILE]\n"
      "  every transport and strategy timed (bcast) on each case beside the model's predictions,\n"
      "  the model-only auto pick and the autotuned one.\n"
      "  --matrices L    names or paths; default every *.mtx.gz in DIR ('none': no matrix)\n"
      "  --grids L       structured grids among 2d5,3d7,3d27 ('none': no grid; default all)\n"
      "  --units L       unit sizes in bytes, multiples of 8 (default 8,64)\n"
      "  --rounds R      rounds in which the candidates take turns (default 5)\n"
      "  --seconds S     timed seconds per case, all candidates together (default 0.4)\n"
      "  --autotune N    rounds of -stf_autotune for the autotuned pick (default 5)\n"
      "  --profile FILE  machine profile (-stf_model_profile; default built-in values)\n"
      "  --baseline-profile FILE  also record the picks and predictions under this profile (the same\n"
      "                  measurements judge both; e.g. another model's parameters)\n"
      "  --split-bytes B -stf_split_bytes of split and auto (default 16384)\n"
      "  --n2 N --n3 N   grid points per direction in 2D (512) and 3D (48)\n"
      "  --ranks-per-node K  emulated nodes of K consecutive ranks (default: the hosts)\n"
      "  --tell-unit     tell auto each case's unit (-stf_auto_unit_bytes; default: auto assumes 8 B)\n"
      "  --dir DIR       matrix directory (default $STF_MATRIX_DIR, else %s)\n"
      "  --timing T      streamed: each round's calls back to back (default); isolated: each call alone\n"
      "                  after a barrier (one exchange from a common start, what the model predicts)\n"
      "  --json FILE     write the records as a JSON array\n",
      prog, STF_MATRIX_DIR);
}

std::vector<std::string> split_list(const std::string &s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string m; std::getline(ss, m, ',');)
    if (!m.empty() && m != "none") out.push_back(m);
  return out;
}

int parse(int argc, char **argv, Options &o) {
  bool no_matrices = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool v = i + 1 < argc;
    if (a == "--help" || a == "-h") return 1;
    if (a == "--matrices" && v) {
      no_matrices = std::string(argv[i + 1]) == "none";
      o.matrices = split_list(argv[++i]);
    } else if (a == "--grids" && v) o.grids = split_list(argv[++i]);
    else if (a == "--units" && v) {
      o.units.clear();
      for (const std::string &u : split_list(argv[++i])) o.units.push_back(std::atoi(u.c_str()));
    } else if (a == "--rounds" && v) o.rounds = std::atoi(argv[++i]);
    else if (a == "--seconds" && v) o.seconds = std::atof(argv[++i]);
    else if (a == "--autotune" && v) o.autotune = std::atoi(argv[++i]);
    else if (a == "--profile" && v) o.profile = argv[++i];
    else if (a == "--baseline-profile" && v) o.baseline = argv[++i];
    else if (a == "--split-bytes" && v) o.split_bytes = std::atol(argv[++i]);
    else if (a == "--n2" && v) o.n2 = std::atoll(argv[++i]);
    else if (a == "--n3" && v) o.n3 = std::atoll(argv[++i]);
    else if (a == "--ranks-per-node" && v) o.ranks_per_node = std::atoi(argv[++i]);
    else if (a == "--tell-unit") o.tell_unit = true;
    else if (a == "--dir" && v) o.dir = argv[++i];
    else if (a == "--timing" && v && bench::parse_timing(argv[i + 1], &o.timing)) ++i;
    else if (a == "--json" && v) o.json = argv[++i];
    else {
      std::fprintf(stderr, "autoselect: bad argument '%s' (try --help)\n", a.c_str());
      return 2;
    }
  }
  bool units_ok = !o.units.empty();
  for (int u : o.units) units_ok &= u >= 8 && u % 8 == 0;
  for (const std::string &g : o.grids) units_ok &= g == "2d5" || g == "3d7" || g == "3d27";
  if (!units_ok || o.rounds < 1 || o.seconds <= 0 || o.autotune < 1 || o.split_bytes < 1 || o.n2 < 4 || o.n3 < 4 ||
      o.ranks_per_node < 0) {
    std::fprintf(stderr, "autoselect: --units must be multiples of 8, --grids among 2d5,3d7,3d27, --rounds, "
                         "--autotune, --split-bytes >= 1, --seconds > 0, --n2, --n3 >= 4\n");
    return 2;
  }
  if (no_matrices) o.matrices = {"none"};
  return 0;
}

// One exchange graph (leaf side), with the leaf array's extent.
struct Graph {
  std::string name, kind;  // kind: "matrix" or "grid"
  stf_int nroots = 0, nleafspace = 0;
  std::vector<stf_int> ilocal;
  std::vector<stf_node> iremote;
};

// Copies an SF's graph (the SF stays its owner's).
void copy_graph(stf_sf sf, Graph *g) {
  stf_int nleaves = 0;
  const stf_int *ilocal = nullptr;
  const stf_node *iremote = nullptr;
  CHECK_STF(stf_get_graph(sf, &g->nroots, &nleaves, &ilocal, &iremote));
  for (stf_int l = 0; l < nleaves; ++l) {
    g->ilocal.push_back(ilocal ? ilocal[l] : l);
    g->iremote.push_back(iremote[l]);
    g->nleafspace = std::max(g->nleafspace, g->ilocal.back() + 1);
  }
}

// The SpMV ghost exchange of a matrix split by nonzeros (as bench/nodeaware).
bool matrix_graph(const std::string &path, Graph *g) {
  stf_coo coo{};
  if (stf_mm_read(path.c_str(), &coo) != STF_SUCCESS) {
    std::fprintf(stderr, "autoselect: cannot read %s: %s\n", path.c_str(), stf_last_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const bool square = coo.nrows == coo.ncols;
  if (square) {
    stf_csr A = nullptr;
    CHECK_STF(stf_csr_create(MPI_COMM_WORLD, &coo, STF_PARTITION_NNZ, &A));
    stf_sf ghost = nullptr;
    CHECK_STF(stf_csr_get_ghost_sf(A, &ghost));
    copy_graph(ghost, g);
    CHECK_STF(stf_csr_destroy(&A));
  }
  stf_coo_free(&coo);
  std::string n = path.substr(path.find_last_of('/') + 1);
  g->name = n.substr(0, n.find(".mtx"));
  g->kind = "matrix";
  return square;
}

// The ghost exchange of a periodic structured grid (one value per point).
bool grid_graph(const Options &o, const std::string &which, Graph *g) {
  stf_grid_desc desc{};
  desc.dim = which == "2d5" ? 2 : 3;
  desc.n[0] = desc.n[1] = desc.n[2] = desc.dim == 2 ? o.n2 : o.n3;
  for (int a = 0; a < 3; a++) desc.periodic[a] = 1;
  desc.stencil = which == "3d27" ? STF_STENCIL_BOX : STF_STENCIL_STAR;
  desc.width = 1;
  desc.dof = 1;
  stf_grid grid = nullptr;
  if (stf_grid_create(MPI_COMM_WORLD, &desc, &grid) != STF_SUCCESS) return false;
  stf_sf sf = nullptr;
  MPI_Datatype unit;
  CHECK_STF(stf_grid_get_sf(grid, &sf, &unit));
  copy_graph(sf, g);
  CHECK_STF(stf_grid_destroy(&grid));
  g->name = "grid" + which + "_" + std::to_string(desc.n[0]);
  g->kind = "grid";
  return true;
}

// type: a method, or "strategy/transport" for a node-aware strategy whose
// steps in a node run that transport (as stf_explain labels them).
stf_sf make_sf(const Options &o, const Graph &g, const std::string &type, int autotune,
               const std::string &profile = "", int unit_bytes = 8) {
  const size_t slash = type.find('/');
  std::string opts = "-stf_type " + type.substr(0, slash) + " -stf_split_bytes " + std::to_string(o.split_bytes) +
                     " -stf_ranks_per_node " + std::to_string(o.ranks_per_node);
  if (slash != std::string::npos) opts += " -stf_node_transport " + type.substr(slash + 1);
  if (type == "auto") {
    if (!profile.empty()) opts += " -stf_model_profile " + profile;
    opts += " -stf_autotune " + std::to_string(autotune);
    if (o.tell_unit) opts += " -stf_auto_unit_bytes " + std::to_string(unit_bytes);
  }
  stf_sf sf = nullptr;
  CHECK_STF(stf_create(MPI_COMM_WORLD, &sf));
  if (stf_set_sf_options(sf, opts.c_str()) != STF_SUCCESS) {
    std::fprintf(stderr, "autoselect: the library refuses '%s': %s\n", opts.c_str(), stf_last_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  CHECK_STF(stf_set_graph(sf, g.nroots, static_cast<stf_int>(g.ilocal.size()), g.ilocal.data(), STF_COPY_VALUES,
                          g.iremote.data(), STF_COPY_VALUES));
  CHECK_STF(stf_setup(sf));
  return sf;
}

// What stf_explain says of an auto SF for units of `unit` (on rank 0; the
// other ranks get the type alone and no predictions): the method it runs,
// labelled as the "<- in use" line does ("3step/putsignal" where auto gave
// a strategy putsignal steps), and the predicted microseconds per bcast by
// candidate.
struct Explained {
  std::string label;
  std::map<std::string, double> predicted;
};

Explained explain(stf_sf sf, MPI_Datatype unit) {
  const char *t = "";
  CHECK_STF(stf_get_type(sf, &t));
  Explained out{t, {}};
  char *text = nullptr;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  CHECK_STF(stf_explain(sf, unit, f));
  std::fclose(f);
  std::istringstream lines(text ? text : "");
  for (std::string line; std::getline(lines, line);) {
    char name[64];
    double us = 0;
    if (line.find(" us  dominant:") != std::string::npos && std::sscanf(line.c_str(), " %63s %lf us", name, &us) == 2)
      out.predicted[name] = us;
    if (line.find("<- in use") != std::string::npos && std::sscanf(line.c_str(), " %63s", name) == 1) out.label = name;
  }
  std::free(text);
  return out;
}

// The transports this build can run: SMPI lacks what neighbor, window and
// putsignal need (transport/registry.cpp refuses them there).
#if defined(STF_SMPI)
const std::vector<std::string> kTransports = {"basic", "collective"};
#else
const std::vector<std::string> kTransports = {"basic", "neighbor", "window", "putsignal", "collective"};
#endif

// The library's auto_candidate (sf/choice.cpp), which a benchmark of the
// public API cannot call.
bool auto_candidate(const std::string &t) {
  const bool runs = std::find(kTransports.begin(), kTransports.end(), t) != kTransports.end();
  const std::string strategy = t.substr(0, t.find('/'));
  return (runs && (t == "basic" || t == "neighbor" || t == "putsignal")) || strategy == "2step" ||
         strategy == "3step" || strategy == "split";
}

// Times every candidate on one graph at one unit size and adds the records.
void run_case(const Options &o, const Graph &g, int unit_bytes, int nnodes, bench::JsonLog &log) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int width = unit_bytes / 8;
  MPI_Datatype unit = MPI_DOUBLE;
  if (width > 1) {
    MPI_Type_contiguous(width, MPI_DOUBLE, &unit);
    MPI_Type_commit(&unit);
  }
  std::vector<std::string> types = kTransports;
  if (nnodes > 1) types.insert(types.end(), {"2step", "3step", "split"});
#if !defined(STF_SMPI)
  // auto's candidates with putsignal for the steps in a node (where the
  // profile has the protocol measured; timed in any case).
  if (nnodes > 1) types.insert(types.end(), {"2step/putsignal", "3step/putsignal", "split/putsignal"});
#endif
  std::vector<stf_sf> sfs;
  for (const std::string &t : types) sfs.push_back(make_sf(o, g, t, 0));
  // The picks and predictions under the profile (0) and the baseline one (1).
  std::string model_pick[2], tuned_pick[2];
  std::map<std::string, double> predicted[2];
  for (int b = 0; b < (o.baseline.empty() ? 1 : 2); ++b) {
    const std::string &profile = b ? o.baseline : o.profile;
    stf_sf model_sf = make_sf(o, g, "auto", 0, profile, unit_bytes);
    stf_sf tuned_sf = make_sf(o, g, "auto", o.autotune, profile, unit_bytes);
    Explained model = explain(model_sf, unit);
    model_pick[b] = model.label, tuned_pick[b] = explain(tuned_sf, unit).label;
    predicted[b] = std::move(model.predicted);
    CHECK_STF(stf_destroy(&model_sf));
    CHECK_STF(stf_destroy(&tuned_sf));
  }

  // Every candidate's bcast equals basic's (integer values: exact).
  std::vector<double> x(static_cast<size_t>(g.nroots) * width), want, got;
  for (size_t i = 0; i < x.size(); ++i) x[i] = 1e6 * rank + static_cast<double>(i);
  long bad = 0;
  for (size_t s = 0; s < sfs.size(); ++s) {
    got.assign(static_cast<size_t>(g.nleafspace) * width, -1.0);
    CHECK_STF(stf_bcast(sfs[s], unit, x.data(), got.data(), MPI_REPLACE));
    if (s == 0) want = got;
    else bad += got != want;
  }
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (bad) {
    if (rank == 0) std::fprintf(stderr, "autoselect: %s: a candidate's bcast differs from basic's\n", g.name.c_str());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  std::vector<std::function<void()>> calls;
  for (stf_sf sf : sfs)
    calls.push_back([sf, unit, &x, &got] { CHECK_STF(stf_bcast(sf, unit, x.data(), got.data(), MPI_REPLACE)); });
  double per_round = 0;
  for (auto &call : calls) per_round += bench::time_per_call(MPI_COMM_WORLD, 2, call);
  const long iters = std::clamp(std::lround(o.seconds / (o.rounds * per_round)), 1L, 100000L);
  const std::vector<bench::Stats> st = bench::time_rotating(MPI_COMM_WORLD, o.rounds, iters, calls, o.timing);
  for (stf_sf &sf : sfs) CHECK_STF(stf_destroy(&sf));
  if (width > 1) MPI_Type_free(&unit);
  if (rank != 0) return;

  size_t fastest = 0;  // among auto's candidates
  for (size_t k = 0; k < types.size(); ++k)
    if (auto_candidate(types[k]) && st[k].us < st[fastest].us) fastest = k;
  const std::string case_name = g.name + "/" + std::to_string(unit_bytes) + "B";
  std::printf("%-22s", case_name.c_str());
  for (size_t k = 0; k < types.size(); ++k) {
    auto pred_of = [&](int b) {
      const auto p = predicted[b].find(types[k]);
      return p == predicted[b].end() ? -1.0 : p->second;
    };
    const double pred = pred_of(0);
    std::printf(" %s %.1f(%.1f)%s", types[k].c_str(), st[k].us, pred, k == fastest ? "*" : "");
    bench::Record rec;
    rec.timing("autoselect", types[k], unit_bytes, size, st[k])
        .str("case", case_name)
        .str("graph", g.name)
        .str("kind", g.kind)
        .integer("unit_bytes", unit_bytes)
        .integer("nodes", nnodes)
        .str("candidate", types[k])
        .boolean("auto_candidate", auto_candidate(types[k]))
        .num("predicted_us", pred)
        .str("model_pick", model_pick[0])
        .str("autotune_pick", tuned_pick[0])
        .integer("autotune_rounds", o.autotune)
        .boolean("auto_told_unit", o.tell_unit)
        .str("timing", bench::timing_name(o.timing))
        .str("profile", o.profile.empty() ? "built-in" : o.profile);
    if (!o.baseline.empty())
      rec.num("predicted_baseline_us", pred_of(1))
          .str("model_pick_baseline", model_pick[1])
          .str("autotune_pick_baseline", tuned_pick[1])
          .str("baseline_profile", o.baseline);
    log.add(rec);
  }
  std::printf("  | model %s, autotune %s", model_pick[0].c_str(), tuned_pick[0].c_str());
  if (!o.baseline.empty())
    std::printf("; baseline profile: model %s, autotune %s", model_pick[1].c_str(), tuned_pick[1].c_str());
  std::printf("\n");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Options opt;
  if (const char *d = std::getenv("STF_MATRIX_DIR")) opt.dir = d;
  const int p = parse(argc, argv, opt);
  if (p == 1 && rank == 0) usage(argv[0]);
  if (p != 0) {
    MPI_Finalize();
    return p == 1 ? 0 : 2;
  }
  std::vector<std::string> paths;
  if (opt.matrices.empty()) paths = bench::matrix_names(opt.dir);
  else if (opt.matrices[0] != "none") paths = opt.matrices;
  for (std::string &m : paths)
    if (m.find('/') == std::string::npos) m = opt.dir + "/" + m + (m.find(".mtx") != std::string::npos ? "" : ".mtx.gz");
  if (opt.matrices.empty() && paths.empty() && rank == 0)
    std::fprintf(stderr, "autoselect: no *.mtx.gz in %s: grids only\n", opt.dir.c_str());

  bench::set_host_layout(bench::layout_of(bench::host_of_ranks(MPI_COMM_WORLD)));
  const bench::HostLayout layout = bench::host_layout(size);
  if (rank == 0)
    std::printf("# autoselect: %d ranks on %d host(s) (%s); profile %s; bcast us per call, slowest rank, median of "
                "%d rounds, %s; (predicted us); * fastest of auto's candidates\n",
                size, layout.hosts, layout.ranks_per_host.c_str(), opt.profile.empty() ? "built-in" : opt.profile.c_str(),
                opt.rounds, bench::timing_name(opt.timing));
  bench::JsonLog log;
  std::vector<Graph> graphs;
  for (const std::string &path : paths) {
    Graph g;
    if (matrix_graph(path, &g)) graphs.push_back(std::move(g));
    else if (rank == 0) std::printf("# %s: not square, skipped\n", path.c_str());
  }
  for (const std::string &w : opt.grids) {
    Graph g;
    if (grid_graph(opt, w, &g)) graphs.push_back(std::move(g));
    else if (rank == 0) std::printf("# grid %s: %s, skipped\n", w.c_str(), stf_last_error_message());
  }
  for (const Graph &g : graphs) {
    // The nodes as the library sees them (the hosts, or emulated ones).
    stf_sf probe = make_sf(opt, g, "basic", 0);
    int node = 0, nnodes = 0;
    CHECK_STF(stf_get_node_layout(probe, &node, &nnodes, nullptr, nullptr));
    CHECK_STF(stf_destroy(&probe));
    for (int u : opt.units) run_case(opt, g, u, nnodes, log);
  }
  int rc = 0;
  if (rank == 0 && !opt.json.empty() && !log.write(opt.json)) rc = 1;
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return rc;
}
