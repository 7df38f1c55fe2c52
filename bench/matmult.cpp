// matmult: SpMV on real matrices, every transport against a hand-written
// MPI exchange, and the local product against the memory-bandwidth bound.
//
// For each matrix (Matrix Market files, by default ../shared/matrices, and
// with --stencils generated 3D stencil matrices beyond the last-level cache)
// the rows are split over the ranks (by nonzeros) with stf_csr_create, once
// per transport the library accepts (the candidates that stf_set_type
// refuses are listed and skipped). Three measurements:
//   ghost  the ghost exchange alone: stf_bcast (MPI_REPLACE) of x over the
//          matrix's ghost SF, per transport;
//   spmv   the whole product, stf_csr_mult (exchange overlapped with the
//          diagonal block), per transport;
//   local  the local product alone (stf_csr_mult_local, ghost values at
//          hand), all ranks at once, against the baseline's plain row loop.
// The baseline (impl "mpi") is bench::MpiSpmv: the same partition, built from
// the matrix alone, with precomputed send index lists and MPI_Irecv/MPI_Isend
// and a plain CSR row loop. Before timing, the ghost values of every
// implementation must equal x at the ghost columns exactly, and every y must
// match a sequential product of the global matrix (relative 1e-12). Then the
// implementations alternate in --rounds rounds of --iters calls (fewer for
// matrices above 300,000 nonzeros); the table shows the median round (time
// per call on the slowest rank) with [min..max] and the ratio to MPI. For
// local it also shows GB/s, the bytes a CSR product must move
// (bench/bandwidth.h) over the time, and that as a fraction of the
// bandwidth of STREAM's triad, which takes turns with the local products in
// the same rounds on the same ranks.
#include <starforest.h>
#include <stf_apps.h>

#include "bandwidth.h"
#include "bench_common.h"
#include "check.h"
#include "matmult_mpi.h"
#include "stencils.h"

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

const char *const kCandidateTypes[] = {"basic", "neighbor", "window", "allgatherv", "alltoall", "gatherv", "putsignal"};

struct Options {
  std::string dir = STF_MATRIX_DIR;
  std::vector<std::string> matrices;  // empty: every *.mtx.gz in dir
  long stencils = 0;                  // > 0: also lap3d7_N and elast3d27_N/3
  stf_partition partition = STF_PARTITION_NNZ;
  int iters = 200, rounds = 7;
  std::string json;
};

void usage(const char *prog) {
  std::printf(
      "usage: mpiexec -n N %s [--dir DIR] [--matrices a,b,..] [--stencils N] [--partition rows|nnz]\n"
      "                        [--iters I] [--rounds R] [--quick] [--json FILE]\n"
      "  SpMV ghost exchange and full SpMV, every starforest transport vs hand-written MPI;\n"
      "  local product vs the plain row loop and the STREAM triad bandwidth of this run.\n"
      "  --dir DIR        matrix directory (default $STF_MATRIX_DIR, else %s)\n"
      "  --matrices L     comma-separated names (bcsstk16 or bcsstk16.mtx.gz), paths, or\n"
      "                   generated stencils (lap3d7_N, elast3d27_N); default every *.mtx.gz in DIR\n"
      "  --stencils N     also lap3d7_N and elast3d27_<N/3> (N = 96: about 3 x 32 MiB each)\n"
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
    } else if (a == "--stencils" && v) {
      o.stencils = std::atol(argv[++i]);
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

// Calls per round: fewer for large matrices, so that a round stays short.
long iters_for(const Options &o, int64_t nnz) {
  return std::max(2L, std::lround(o.iters * std::min(1.0, 300000.0 / static_cast<double>(std::max<int64_t>(1, nnz)))));
}

void run_matrix(const Options &o, const std::string &name, stf_coo &g, const std::vector<std::string> &types,
                bench::Triad &triad, bench::JsonLog &log) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (g.nrows != g.ncols) {
    if (rank == 0) std::printf("# %s: not square, skipped\n", name.c_str());
    return;
  }

  std::vector<Impl> impls;
  for (const std::string &t : types) {
    Impl im{"starforest", t};
    CHECK_STF(stf_set_options(("-stf_type " + t).c_str()));
    CHECK_STF(stf_csr_create(MPI_COMM_WORLD, &g, o.partition, &im.A));
    impls.push_back(im);
  }
  CHECK_STF(stf_set_options("-stf_type basic"));

  // The row split the library chose; the baseline uses the same one.
  int64_t first_row = 0;
  stf_int nlocal = 0, nghost = 0;
  int64_t nnz_local = 0;
  CHECK_STF(stf_csr_get_info(impls[0].A, nullptr, &nlocal, &first_row, &nghost, &nnz_local));
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
      CHECK_STF(stf_csr_get_ghost_columns(im.A, &cols));
      long differ = (long)gcols.size() != (long)nghost;
      for (stf_int i = 0; !differ && i < nghost; ++i) differ = cols[i] != gcols[i];
      if (differ) {
        std::fprintf(stderr, "matmult: rank %d: %s: ghost columns differ from the baseline's\n", rank,
                     name.c_str());
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
      CHECK_STF(stf_csr_get_ghost_sf(im.A, &sf));
      CHECK_STF(stf_bcast(sf, MPI_DOUBLE, x.data(), ghost.data(), MPI_REPLACE));
      CHECK_STF(stf_csr_mult(im.A, x.data(), y.data()));
    }
    check("ghost values", who, ghost, ghost_want, {});
    check("A x", who, y, y_want, y_scale);
    std::fill(y.begin(), y.end(), -1.0);
    if (im.mpi) im.mpi->mult_local(x.data(), ghost_want.data(), y.data());
    else CHECK_STF(stf_csr_mult_local(im.A, x.data(), ghost_want.data(), y.data()));
    check("local A x", who, y, y_want, y_scale);
  }

  long ghosts_total = 0, ghosts_local = (long)gcols.size(), msgs = mpi->messages(), msgs_total = 0;
  MPI_Reduce(&ghosts_local, &ghosts_total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(&msgs, &msgs_total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  // The bytes of one product over all ranks, each rank's rows counted once.
  double bytes = bench::csr_product_bytes(nnz_local, nlocal, (int64_t)gcols.size());
  MPI_Allreduce(MPI_IN_PLACE, &bytes, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  const long long llc = bench::last_level_cache_bytes();
  const bool beyond_cache = llc > 0 && bytes > llc;
  const long iters = iters_for(o, g.nnz);
  if (rank == 0)
    std::printf("\n## %s: %lld rows, %lld nonzeros, %d ranks, %ld ghost entries in %ld messages; CSR product "
                "%.2f MB (%s the last-level cache); %ld calls per round\n",
                name.c_str(), (long long)g.nrows, (long long)g.nnz, size, ghosts_total, msgs_total, bytes / 1e6,
                beyond_cache ? "larger than" : "within", iters);
  if (rank == 0)
    std::printf("%-12s %-6s %-11s %-9s %28s %8s %8s %8s\n", "matrix", "phase", "impl", "transport", "us [min..max]",
                "ratio", "GB/s", "of bound");

  std::vector<double> ghost(gcols.size()), y(nlocal);
  for (const char *phase : {"ghost", "spmv", "local"}) {
    const std::string ph = phase;
    // The local product is the same for every transport: one of them, and
    // STREAM's triad among them (one call per round).
    const bool local = ph == "local";
    const size_t nimpl = local ? 2 : impls.size();
    std::vector<std::function<void()>> calls;
    std::vector<long> counts(nimpl, iters);
    std::vector<std::string> names, transports;
    for (size_t k = 0; k < nimpl; ++k) {
      Impl &im = impls[k];
      stf_sf sf = nullptr;
      if (im.A) CHECK_STF(stf_csr_get_ghost_sf(im.A, &sf));
      names.push_back(im.name);
      transports.push_back(local ? "none" : im.transport);
      calls.push_back([&im, sf, ph, &x, &y, &ghost, &ghost_want] {
        if (ph == "local" && im.mpi) im.mpi->mult_local(x.data(), ghost_want.data(), y.data());
        else if (ph == "local") CHECK_STF(stf_csr_mult_local(im.A, x.data(), ghost_want.data(), y.data()));
        else if (im.mpi && ph == "spmv") im.mpi->mult(x.data(), y.data());
        else if (im.mpi) im.mpi->scatter_begin(x.data(), ghost.data()), im.mpi->scatter_end();
        else if (ph == "spmv") CHECK_STF(stf_csr_mult(im.A, x.data(), y.data()));
        else CHECK_STF(stf_bcast(sf, MPI_DOUBLE, x.data(), ghost.data(), MPI_REPLACE));
      });
    }
    if (local) {
      calls.push_back([&triad] { triad(); });
      counts.push_back(1);
      names.push_back("stream");
      transports.push_back("none");
    }
    std::vector<bench::Stats> stats = bench::time_rotating(MPI_COMM_WORLD, o.rounds, counts, calls);
    const bench::Stats &base = stats[0];
    const double triad_gbps = local ? triad.bytes() / stats.back().us / 1e3 : 0;
    for (size_t k = 0; k < calls.size(); ++k) {
      const bench::Stats &s = stats[k];
      const bool is_triad = local && k == nimpl;
      const double gbps = (is_triad ? triad.bytes() : bytes) / s.us / 1e3;
      bench::Record rec;
      rec.timing("matmult", names[k], g.nrows, size, s)
          .str("matrix", name)
          .str("phase", phase)
          .str("transport", transports[k])
          .str("memory", "host")
          .str("partition", o.partition == STF_PARTITION_NNZ ? "nnz" : "rows")
          .integer("nnz", g.nnz)
          .integer("ghost_entries", ghosts_total);
      if (!is_triad) rec.num("ratio_to_mpi", s.us / base.us);
      if (local)
        rec.num("gbps", gbps)
            .num("bound_ratio", gbps / triad_gbps)
            .num("stream_gbps", triad_gbps)
            .num("product_bytes", bytes)
            .boolean("larger_than_llc", beyond_cache);
      log.add(rec);
      if (rank != 0) continue;
      const std::string ratio = is_triad ? "-" : std::to_string(s.us / base.us).substr(0, 4);
      if (local)
        std::printf("%-12s %-6s %-11s %-9s %28s %8s %8.2f %8.2f\n", name.c_str(), phase, names[k].c_str(),
                    transports[k].c_str(), bench::range_text(s).c_str(), ratio.c_str(), gbps, gbps / triad_gbps);
      else
        std::printf("%-12s %-6s %-11s %-9s %28s %8s %8s %8s\n", name.c_str(), phase, names[k].c_str(),
                    transports[k].c_str(), bench::range_text(s).c_str(), ratio.c_str(), "-", "-");
    }
  }
  if (!triad.correct()) {
    std::fprintf(stderr, "matmult: rank %d: the triad computed wrong values\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  for (Impl &im : impls)
    if (im.A) CHECK_STF(stf_csr_destroy(&im.A));
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
  // Names of generated stencils are generated; the rest are files.
  std::vector<std::string> paths, stencils;
  for (const std::string &m : opt.matrices) (bench::stencil_matrix(m, nullptr) ? stencils : paths).push_back(m);
  if (opt.stencils > 0) {
    stencils.push_back("lap3d7_" + std::to_string(opt.stencils));
    stencils.push_back("elast3d27_" + std::to_string(opt.stencils / 3));
  }
  bool have_dir = false;
  if (DIR *d = opendir(opt.dir.c_str())) have_dir = true, closedir(d);
  bool need_dir = opt.matrices.empty();
  for (const std::string &m : paths) need_dir |= m.find('/') == std::string::npos;
  if (!have_dir && need_dir) {
    // No matrices on this machine: a distinct code that CTest reports as skipped.
    if (rank == 0) std::fprintf(stderr, "matmult: no matrix directory %s (--dir or STF_MATRIX_DIR)\n", opt.dir.c_str());
    MPI_Finalize();
    return 77;
  }
  if (opt.matrices.empty())
    for (const std::string &f : bench::matrix_names(opt.dir)) paths.push_back(f);
  for (std::string &m : paths) m = path_of(opt, m);
  if (paths.empty() && stencils.empty()) {
    if (rank == 0) std::fprintf(stderr, "matmult: no *.mtx.gz in %s (use --dir or --matrices)\n", opt.dir.c_str());
    MPI_Finalize();
    return 1;
  }

  std::vector<std::string> types = accepted_types(rank);
  bench::Triad triad(MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("# matmult: %d ranks, partition %s; time per call (us), median of %d rounds of %d calls "
                "[min..max], slowest rank; ratio = time / mpi\n",
                size, opt.partition == STF_PARTITION_NNZ ? "nnz" : "rows", opt.rounds, opt.iters);
    std::printf("# local: all ranks at once, ghost values at hand; stream = STREAM triad in the same rounds "
                "(arrays of %.0f MiB per rank; last-level cache %.0f MiB); GB/s = CSR product bytes / time "
                "(triad: its bytes); of bound = GB/s / triad GB/s\n",
                triad.array_bytes() / 1048576.0, bench::last_level_cache_bytes() / 1048576.0);
  }
  bench::JsonLog log;
  for (const std::string &path : paths) {
    stf_coo g{};
    CHECK_STF(stf_mm_read(path.c_str(), &g));
    run_matrix(opt, short_name(path), g, types, triad, log);
    stf_coo_free(&g);
  }
  for (const std::string &name : stencils) {
    stf_coo g{};
    if (!bench::stencil_matrix(name, &g)) {
      std::fprintf(stderr, "matmult: cannot generate %s\n", name.c_str());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    run_matrix(opt, name, g, types, triad, log);
    stf_coo_free(&g);
  }

  int rc = 0;
  if (rank == 0 && !opt.json.empty() && !log.write(opt.json)) rc = 1;
  MPI_Finalize();
  return rc;
}
