// matmult: SpMV communication on real matrices, every transport against a
// hand-written MPI exchange.
//
// For each matrix (Matrix Market files, by default ../shared/matrices) the
// rows are split over the ranks (by nonzeros) with stf_csr_create, once per
// transport the library accepts (the candidates that stf_set_type refuses are
// listed and skipped). Two measurements per transport:
//   ghost  the ghost exchange alone: stf_bcast (MPI_REPLACE) of x over the
//          matrix's ghost SF;
//   spmv   the whole product, stf_csr_mult (exchange overlapped with the
//          diagonal block).
// The baseline (impl "mpi") is bench::MpiSpmv: the same partition, built from
// the matrix alone, with precomputed send index lists and MPI_Irecv/MPI_Isend.
// Before timing, the ghost values of every implementation must equal x at the
// ghost columns exactly, and every y must match a sequential product of the
// global matrix (relative 1e-12). Then the implementations alternate in
// --rounds rounds of --iters calls; the table shows the median round (time
// per call on the slowest rank) with [min..max] and the ratio to MPI.
#include <starforest.h>
#include <stf_apps.h>

#include "bench_common.h"
#include "check.h"
#include "matmult_mpi.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#ifndef STF_MATRIX_DIR
#define STF_MATRIX_DIR "../shared/matrices"
#endif

namespace {

const char *const kCandidateTypes[] = {"basic", "neighbor", "window", "allgatherv", "alltoall", "gatherv"};

struct Options {
  std::string dir = STF_MATRIX_DIR;
  std::vector<std::string> matrices;  // empty: every *.mtx.gz in dir
  stf_partition partition = STF_PARTITION_NNZ;
  int iters = 200, rounds = 7;
  std::string json;
};

#define CHECK_APPS(call)                                                                      \
  do {                                                                                        \
    int rc_ = (call);                                                                         \
    if (rc_ != STF_SUCCESS) {                                                                 \
      std::fprintf(stderr, "%s:%d: %s failed: %s: %s\n", __FILE__, __LINE__, #call,            \
                   stf_error_name(rc_), stf_apps_last_error_message());                       \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                           \
    }                                                                                         \
  } while (0)

void usage(const char *prog) {
  std::printf(
      "usage: mpiexec -n N %s [--dir DIR] [--matrices a,b,..] [--partition rows|nnz]\n"
      "                        [--iters I] [--rounds R] [--quick] [--json FILE]\n"
      "  SpMV ghost exchange and full SpMV, every starforest transport vs hand-written MPI.\n"
      "  --dir DIR        matrix directory (default $STF_MATRIX_DIR, else %s)\n"
      "  --matrices L     comma-separated names (bcsstk16 or bcsstk16.mtx.gz) or paths;\n"
      "                   default every *.mtx.gz in DIR\n"
      "  --partition P    row split: nnz (default) or rows\n"
      "  --iters I        calls per round (default 200); --rounds R (default 7)\n"
      "  --quick          --iters 20 --rounds 3\n"
      "  --json FILE      also write the results as a JSON array\n",
      prog, STF_MATRIX_DIR);
}

int parse(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    bool v = i + 1 < argc;
    if (a == "--help" || a == "-h") return 1;
    if (a == "--dir" && v) o.dir = argv[++i];
    else if (a == "--matrices" && v) {
      std::stringstream ss(argv[++i]);
      for (std::string m; std::getline(ss, m, ',');)
        if (!m.empty()) o.matrices.push_back(m);
    } else if (a == "--partition" && v) {
      std::string p = argv[++i];
      if (p != "rows" && p != "nnz") {
        std::fprintf(stderr, "matmult: --partition rows|nnz, got '%s'\n", p.c_str());
        return 2;
      }
      o.partition = p == "rows" ? STF_PARTITION_ROWS : STF_PARTITION_NNZ;
    } else if (a == "--iters" && v) o.iters = std::atoi(argv[++i]);
    else if (a == "--rounds" && v) o.rounds = std::atoi(argv[++i]);
    else if (a == "--quick") o.iters = 20, o.rounds = 3;
    else if (a == "--json" && v) o.json = argv[++i];
    else {
      std::fprintf(stderr, "matmult: bad argument '%s' (try --help)\n", a.c_str());
      return 2;
    }
  }
  if (o.iters < 1 || o.rounds < 1) {
    std::fprintf(stderr, "matmult: --iters and --rounds must be >= 1\n");
    return 2;
  }
  return 0;
}

std::vector<std::string> list_dir(const std::string &dir) {
  std::vector<std::string> out;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > 7 && n.compare(n.size() - 7, 7, ".mtx.gz") == 0) out.push_back(n);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string path_of(const Options &o, const std::string &m) {
  if (m.find('/') != std::string::npos) return m;
  bool has_ext = m.size() > 4 && (m.find(".mtx") != std::string::npos);
  return o.dir + "/" + m + (has_ext ? "" : ".mtx.gz");
}

std::string short_name(const std::string &path) {
  std::string n = path.substr(path.find_last_of('/') + 1);
  return n.substr(0, n.find(".mtx"));
}

// The transports stf_set_type accepts, in candidate order; the refused ones
// are named with the library's message.
std::vector<std::string> accepted_types(int rank) {
  std::vector<std::string> ok;
  stf_sf probe = nullptr;
  CHECK_STF(stf_create(MPI_COMM_SELF, &probe));
  for (const char *t : kCandidateTypes) {
    if (stf_set_type(probe, t) == STF_SUCCESS) ok.push_back(t);
    else if (rank == 0) std::printf("# transport '%s' skipped: %s\n", t, stf_last_error_message());
  }
  CHECK_STF(stf_destroy(&probe));
  return ok;
}

double x_value(int64_t j) { return 1.0 + (double)(j % 17) / 16.0; }

// Aborts unless got == want exactly (ghosts) or within 1e-12 of the row's
// magnitude (products; summation order may differ).
void check(const char *what, const std::string &who, const std::vector<double> &got,
           const std::vector<double> &want, const std::vector<double> &scale) {
  long bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double tol = scale.empty() ? 0.0 : 1e-12 * scale[i];
    bad += !(std::fabs(got[i] - want[i]) <= tol);
  }
  long total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (total) {
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) std::fprintf(stderr, "matmult: %s: %s: %ld wrong values\n", who.c_str(), what, total);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

// One implementation of the two measured calls.
struct Impl {
  std::string name, transport;
  stf_csr A = nullptr;        // starforest only
  bench::MpiSpmv *mpi = nullptr;  // baseline only
};

void run_matrix(const Options &o, const std::string &path, const std::vector<std::string> &types,
                bench::JsonLog &log) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string name = short_name(path);
  stf_coo g{};
  CHECK_APPS(stf_mm_read(path.c_str(), &g));
  if (g.nrows != g.ncols) {
    if (rank == 0) std::printf("# %s: not square, skipped\n", name.c_str());
    stf_coo_free(&g);
    return;
  }

  std::vector<Impl> impls;
  for (const std::string &t : types) {
    Impl im{"starforest", t};
    CHECK_STF(stf_set_options(("-stf_type " + t).c_str()));
    CHECK_APPS(stf_csr_create(MPI_COMM_WORLD, &g, o.partition, &im.A));
    impls.push_back(im);
  }
  CHECK_STF(stf_set_options("-stf_type basic"));

  // The row split the library chose; the baseline uses the same one.
  int64_t first_row = 0;
  stf_int nlocal = 0, nghost = 0;
  int64_t nnz_local = 0;
  CHECK_APPS(stf_csr_get_info(impls[0].A, nullptr, &nlocal, &first_row, &nghost, &nnz_local));
  std::vector<int64_t> first(size + 1);
  MPI_Allgather(&first_row, 1, MPI_INT64_T, first.data(), 1, MPI_INT64_T, MPI_COMM_WORLD);
  first[size] = g.nrows;
  auto mpi = std::make_unique<bench::MpiSpmv>(MPI_COMM_WORLD, g, first);
  impls.insert(impls.begin(), Impl{"mpi", "none", nullptr, mpi.get()});

  // Sequential oracle: my rows of A x from the global matrix.
  std::vector<double> x(nlocal), y_want(nlocal, 0.0), y_scale(nlocal, 0.0);
  for (stf_int i = 0; i < nlocal; ++i) x[i] = x_value(first_row + i);
  for (int64_t k = 0; k < g.nnz; ++k) {
    int64_t r = g.row[k] - first_row;
    if (r < 0 || r >= nlocal) continue;
    y_want[r] += g.val[k] * x_value(g.col[k]);
    y_scale[r] += std::fabs(g.val[k] * x_value(g.col[k]));
  }
  const std::vector<int64_t> &gcols = mpi->ghost_columns();
  std::vector<double> ghost_want(gcols.size());
  for (size_t i = 0; i < gcols.size(); ++i) ghost_want[i] = x_value(gcols[i]);

  // Verify every implementation; the library's ghost columns must be the
  // baseline's, so that both exchanges move the same entries.
  for (Impl &im : impls) {
    std::string who = im.name + "/" + im.transport;
    std::vector<double> ghost(gcols.size(), -1.0), y(nlocal, -1.0);
    if (im.mpi) {
      im.mpi->scatter_begin(x.data(), ghost.data());
      im.mpi->scatter_end();
      im.mpi->mult(x.data(), y.data());
    } else {
      const int64_t *cols = nullptr;
      stf_sf sf = nullptr;
      CHECK_APPS(stf_csr_get_ghost_columns(im.A, &cols));
      long differ = (long)gcols.size() != (long)nghost;
      for (stf_int i = 0; !differ && i < nghost; ++i) differ = cols[i] != gcols[i];
      if (differ) {
        std::fprintf(stderr, "matmult: rank %d: %s: ghost columns differ from the baseline's\n", rank,
                     name.c_str());
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
      CHECK_APPS(stf_csr_get_ghost_sf(im.A, &sf));
      CHECK_STF(stf_bcast(sf, MPI_DOUBLE, x.data(), ghost.data(), MPI_REPLACE));
      CHECK_APPS(stf_csr_mult(im.A, x.data(), y.data()));
    }
    check("ghost values", who, ghost, ghost_want, {});
    check("A x", who, y, y_want, y_scale);
  }

  long ghosts_total = 0, ghosts_local = (long)gcols.size(), msgs = mpi->messages(), msgs_total = 0;
  MPI_Reduce(&ghosts_local, &ghosts_total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(&msgs, &msgs_total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("\n## %s: %lld rows, %lld nonzeros, %d ranks, %ld ghost entries in %ld messages\n",
                name.c_str(), (long long)g.nrows, (long long)g.nnz, size, ghosts_total, msgs_total);
  if (rank == 0)
    std::printf("%-12s %-6s %-11s %-9s %28s %8s\n", "matrix", "phase", "impl", "transport", "us [min..max]",
                "ratio");

  std::vector<double> ghost(gcols.size()), y(nlocal);
  for (const char *phase : {"ghost", "spmv"}) {
    bool spmv = std::string(phase) == "spmv";
    std::vector<std::function<void()>> calls;
    for (Impl &im : impls) {
      stf_sf sf = nullptr;
      if (im.A) CHECK_APPS(stf_csr_get_ghost_sf(im.A, &sf));
      calls.push_back([&im, sf, spmv, &x, &y, &ghost] {
        if (im.mpi && spmv) im.mpi->mult(x.data(), y.data());
        else if (im.mpi) im.mpi->scatter_begin(x.data(), ghost.data()), im.mpi->scatter_end();
        else if (spmv) CHECK_APPS(stf_csr_mult(im.A, x.data(), y.data()));
        else CHECK_STF(stf_bcast(sf, MPI_DOUBLE, x.data(), ghost.data(), MPI_REPLACE));
      });
    }
    std::vector<bench::Stats> stats = bench::time_rotating(MPI_COMM_WORLD, o.rounds, o.iters, calls);
    const bench::Stats &base = stats[0];
    for (size_t k = 0; k < impls.size(); ++k) {
      const bench::Stats &s = stats[k];
      bench::Record rec;
      rec.timing("matmult", impls[k].name, g.nrows, size, s)
          .str("matrix", name)
          .str("phase", phase)
          .str("transport", impls[k].transport)
          .str("memory", "host")
          .str("partition", o.partition == STF_PARTITION_NNZ ? "nnz" : "rows")
          .integer("nnz", g.nnz)
          .integer("ghost_entries", ghosts_total)
          .num("ratio_to_mpi", s.us / base.us);
      log.add(rec);
      if (rank == 0)
        std::printf("%-12s %-6s %-11s %-9s %28s %8.2f\n", name.c_str(), phase, impls[k].name.c_str(),
                    impls[k].transport.c_str(), bench::range_text(s).c_str(), s.us / base.us);
    }
  }
  for (Impl &im : impls)
    if (im.A) CHECK_APPS(stf_csr_destroy(&im.A));
  stf_coo_free(&g);
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Options opt;
  if (const char *d = std::getenv("STF_MATRIX_DIR")) opt.dir = d;
  int p = parse(argc, argv, opt);
  if (p == 1 && rank == 0) usage(argv[0]);
  if (p != 0) {
    MPI_Finalize();
    return p == 1 ? 0 : 1;
  }
  std::vector<std::string> paths;
  bool have_dir = false;
  if (DIR *d = opendir(opt.dir.c_str())) have_dir = true, closedir(d);
  bool only_paths = !opt.matrices.empty();
  for (const std::string &m : opt.matrices) only_paths &= m.find('/') != std::string::npos;
  if (!have_dir && !only_paths) {
    // No matrices on this machine: a distinct code that CTest reports as skipped.
    if (rank == 0) std::fprintf(stderr, "matmult: no matrix directory %s (--dir or STF_MATRIX_DIR)\n", opt.dir.c_str());
    MPI_Finalize();
    return 77;
  }
  if (opt.matrices.empty())
    for (const std::string &f : list_dir(opt.dir)) paths.push_back(opt.dir + "/" + f);
  else
    for (const std::string &m : opt.matrices) paths.push_back(path_of(opt, m));
  if (paths.empty()) {
    if (rank == 0) std::fprintf(stderr, "matmult: no *.mtx.gz in %s (use --dir or --matrices)\n", opt.dir.c_str());
    MPI_Finalize();
    return 1;
  }

  std::vector<std::string> types = accepted_types(rank);
  if (rank == 0) {
    std::printf("# matmult: %d ranks, partition %s; time per call (us), median of %d rounds of %d calls "
                "[min..max], slowest rank; ratio = time / mpi\n",
                size, opt.partition == STF_PARTITION_NNZ ? "nnz" : "rows", opt.rounds, opt.iters);
  }
  bench::JsonLog log;
  for (const std::string &path : paths) run_matrix(opt, path, types, log);

  int rc = 0;
  if (rank == 0 && !opt.json.empty() && !log.write(opt.json)) rc = 1;
  MPI_Finalize();
  return rc;
}
