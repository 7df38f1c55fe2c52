// SpMV on real matrices: the ghost columns of one row partition
// (stf_csr_create, split by nonzeros) gathered by a PETSc VecScatter, by the
// starforest ghost SF and by hand-written MPI; the full product by PETSc
// MatMult (MPIAIJ on the same rows), stf_csr_mult and the hand-written MPI
// SpMV; the transposed product by MatMultTranspose and
// stf_csr_mult_transpose; and the local product alone (ghost values at
// hand, all ranks at once) by PETSc's own diagonal and off-diagonal SeqAIJ
// blocks (MatMult + MatMultAdd), stf_csr_mult_local and the hand-written
// plain row loop, with STREAM's triad in the same rounds as the bandwidth
// yardstick.
#include <starforest.h>
#include <stf_apps.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "bandwidth.h"
#include "check.h"
#include "matmult_mpi.h"
#include "compare.h"

namespace {

double x_value(int64_t j) { return 1.0 + (double)(j % 13) / 8.0; }

void require(long bad, const std::string &what) {
  long total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (total) {
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) std::fprintf(stderr, "petsc_compare scatter: %s: %ld wrong values\n", what.c_str(), total);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

// This rank's rows [first, first + nlocal) as a PETSc MPIAIJ matrix.
Mat petsc_matrix(const stf_coo &g, int64_t first, PetscInt nlocal) {
  std::vector<PetscInt> dnz(nlocal, 0), onz(nlocal, 0);
  for (int64_t k = 0; k < g.nnz; ++k) {
    int64_t r = g.row[k] - first;
    if (r < 0 || r >= nlocal) continue;
    bool diag = g.col[k] >= first && g.col[k] < first + nlocal;
    (diag ? dnz : onz)[r]++;  // duplicates overcount: an upper bound is fine
  }
  Mat A;
  CHECK_PETSC(MatCreateAIJ(PETSC_COMM_WORLD, nlocal, nlocal, (PetscInt)g.nrows, (PetscInt)g.ncols, 0, dnz.data(), 0,
                           onz.data(), &A));
  for (int64_t k = 0; k < g.nnz; ++k) {
    if (g.row[k] < first || g.row[k] >= first + nlocal) continue;
    PetscInt r = (PetscInt)g.row[k], c = (PetscInt)g.col[k];
    PetscScalar v = g.val[k];
    CHECK_PETSC(MatSetValues(A, 1, &r, 1, &c, &v, ADD_VALUES));  // ADD: duplicates are summed
  }
  CHECK_PETSC(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  CHECK_PETSC(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  return A;
}

// PETSc's local product: this rank's diagonal and off-diagonal SeqAIJ
// blocks of an MPIAIJ matrix (the diagonal block alone on one rank), on
// sequential vectors around the caller's arrays.
struct PetscLocal {
  Mat diag = nullptr, off = nullptr;
  Vec x = nullptr, ghost = nullptr, y = nullptr;
  PetscLocal(Mat A, int size, PetscInt nlocal, PetscInt nghost, const double *xa, const double *ga, double *ya,
             const int64_t *cols) {
    const PetscInt *garray = nullptr;
    if (size == 1) diag = A;
    else CHECK_PETSC(MatMPIAIJGetSeqAIJ(A, &diag, &off, &garray));
    PetscInt ncols = 0;
    if (off) CHECK_PETSC(MatGetSize(off, nullptr, &ncols));
    // Its off-diagonal columns must be our ghosts, in the same order.
    long differ = off ? ncols != nghost : nghost != 0;
    for (PetscInt k = 0; !differ && off && k < nghost; ++k) differ = garray[k] != cols[k];
    require(differ, "PETSc's off-diagonal columns differ from the ghost columns");
    CHECK_PETSC(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, nlocal, xa, &x));
    CHECK_PETSC(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, nghost, ga, &ghost));
    CHECK_PETSC(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, nlocal, ya, &y));
  }
  ~PetscLocal() {
    VecDestroy(&x);
    VecDestroy(&ghost);
    VecDestroy(&y);
  }
  void operator()() {
    CHECK_PETSC(MatMult(diag, x, y));
    if (off) CHECK_PETSC(MatMultAdd(off, ghost, y, y));
  }
};

void one_matrix(const CompareOptions &o, const std::string &path, bench::Triad &triad, bench::JsonLog &log) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::string name = path.substr(path.find_last_of('/') + 1);
  name = name.substr(0, name.find(".mtx"));
  stf_coo g{};
  CHECK_STF(stf_mm_read(path.c_str(), &g));
  stf_csr A;
  CHECK_STF(stf_csr_create(MPI_COMM_WORLD, &g, STF_PARTITION_NNZ, &A));
  int64_t first = 0;
  stf_int nlocal = 0, nghost = 0;
  int64_t nnz_local = 0;
  CHECK_STF(stf_csr_get_info(A, nullptr, &nlocal, &first, &nghost, &nnz_local));
  const int64_t *cols = nullptr;
  stf_sf sf = nullptr;
  CHECK_STF(stf_csr_get_ghost_columns(A, &cols));
  CHECK_STF(stf_csr_get_ghost_sf(A, &sf));
  std::vector<int64_t> firsts(size + 1);
  MPI_Allgather(&first, 1, MPI_INT64_T, firsts.data(), 1, MPI_INT64_T, MPI_COMM_WORLD);
  firsts[size] = g.nrows;
  auto mpi = std::make_unique<bench::MpiSpmv>(MPI_COMM_WORLD, g, firsts);

  // PETSc: x distributed with the same ownership, a sequential ghost vector,
  // and a scatter from x's ghost columns into it.
  Vec px, pgh, py;
  CHECK_PETSC(VecCreateMPI(PETSC_COMM_WORLD, nlocal, (PetscInt)g.nrows, &px));
  CHECK_PETSC(VecDuplicate(px, &py));
  CHECK_PETSC(VecCreateSeq(PETSC_COMM_SELF, nghost, &pgh));
  std::vector<PetscInt> idx(cols, cols + nghost);
  IS is;
  CHECK_PETSC(ISCreateGeneral(PETSC_COMM_SELF, nghost, idx.data(), PETSC_COPY_VALUES, &is));
  VecScatter sc;
  CHECK_PETSC(VecScatterCreate(px, is, pgh, nullptr, &sc));
  Mat PA = petsc_matrix(g, first, nlocal);

  std::vector<double> x(nlocal), ghost(nghost), y(nlocal), want_ghost(nghost), want_y(nlocal, 0.0),
      scale(nlocal, 0.0), want_yt(nlocal, 0.0), scale_t(nlocal, 0.0);
  for (stf_int i = 0; i < nlocal; ++i) x[i] = x_value(first + i);
  PetscScalar *pa;
  CHECK_PETSC(VecGetArray(px, &pa));
  for (stf_int i = 0; i < nlocal; ++i) pa[i] = x[i];
  CHECK_PETSC(VecRestoreArray(px, &pa));
  for (stf_int i = 0; i < nghost; ++i) want_ghost[i] = x_value(cols[i]);
  for (int64_t k = 0; k < g.nnz; ++k) {
    int64_t r = g.row[k] - first, c = g.col[k] - first;
    if (r >= 0 && r < nlocal) {
      want_y[r] += g.val[k] * x_value(g.col[k]);
      scale[r] += std::fabs(g.val[k] * x_value(g.col[k]));
    }
    if (c >= 0 && c < nlocal) {
      want_yt[c] += g.val[k] * x_value(g.row[k]);
      scale_t[c] += std::fabs(g.val[k] * x_value(g.row[k]));
    }
  }

  auto petsc_scatter = [&] {
    CHECK_PETSC(VecScatterBegin(sc, px, pgh, INSERT_VALUES, SCATTER_FORWARD));
    CHECK_PETSC(VecScatterEnd(sc, px, pgh, INSERT_VALUES, SCATTER_FORWARD));
  };
  auto stf_scatter = [&] { CHECK_STF(stf_bcast(sf, MPI_DOUBLE, x.data(), ghost.data(), MPI_REPLACE)); };
  auto mpi_scatter = [&] { mpi->scatter_begin(x.data(), ghost.data()), mpi->scatter_end(); };
  auto petsc_mult = [&] { CHECK_PETSC(MatMult(PA, px, py)); };
  auto stf_mult = [&] { CHECK_STF(stf_csr_mult(A, x.data(), y.data())); };
  auto mpi_mult = [&] { mpi->mult(x.data(), y.data()); };
  auto petsc_mult_t = [&] { CHECK_PETSC(MatMultTranspose(PA, px, py)); };
  auto stf_mult_t = [&] { CHECK_STF(stf_csr_mult_transpose(A, x.data(), y.data())); };
  PetscLocal petsc_local_product(PA, size, nlocal, nghost, x.data(), want_ghost.data(), y.data(), cols);
  auto petsc_local = [&] { petsc_local_product(); };
  auto stf_local = [&] { CHECK_STF(stf_csr_mult_local(A, x.data(), want_ghost.data(), y.data())); };
  auto mpi_local = [&] { mpi->mult_local(x.data(), want_ghost.data(), y.data()); };

  // Verify all six before timing.
  auto ghost_wrong = [&](const double *v) {
    long bad = 0;
    for (stf_int i = 0; i < nghost; ++i) bad += v[i] != want_ghost[i];
    return bad;
  };
  auto y_wrong = [&](const double *v, bool transposed = false) {
    const std::vector<double> &want = transposed ? want_yt : want_y, &sc = transposed ? scale_t : scale;
    long bad = 0;
    for (stf_int i = 0; i < nlocal; ++i) bad += !(std::fabs(v[i] - want[i]) <= 1e-12 * sc[i]);
    return bad;
  };
  petsc_scatter();
  const PetscScalar *ra;
  CHECK_PETSC(VecGetArrayRead(pgh, &ra));
  require(ghost_wrong(ra), name + ": petsc VecScatter");
  CHECK_PETSC(VecRestoreArrayRead(pgh, &ra));
  stf_scatter();
  require(ghost_wrong(ghost.data()), name + ": starforest bcast");
  mpi_scatter();
  require(ghost_wrong(ghost.data()), name + ": mpi scatter");
  petsc_mult();
  CHECK_PETSC(VecGetArrayRead(py, &ra));
  require(y_wrong(ra), name + ": petsc MatMult");
  CHECK_PETSC(VecRestoreArrayRead(py, &ra));
  stf_mult();
  require(y_wrong(y.data()), name + ": stf_csr_mult");
  mpi_mult();
  require(y_wrong(y.data()), name + ": mpi spmv");
  petsc_mult_t();
  CHECK_PETSC(VecGetArrayRead(py, &ra));
  require(y_wrong(ra, true), name + ": petsc MatMultTranspose");
  CHECK_PETSC(VecRestoreArrayRead(py, &ra));
  stf_mult_t();
  require(y_wrong(y.data(), true), name + ": stf_csr_mult_transpose");
  const std::pair<std::function<void()>, const char *> locals[] = {
      {petsc_local, "petsc local"}, {stf_local, "stf_csr_mult_local"}, {mpi_local, "mpi local"}};
  for (const auto &[local, who] : locals) {
    std::fill(y.begin(), y.end(), -1.0);
    local();
    require(y_wrong(y.data()), name + ": " + who);
  }

  // The bytes of one local product over all ranks.
  double bytes = bench::csr_product_bytes(nnz_local, nlocal, nghost);
  MPI_Allreduce(MPI_IN_PLACE, &bytes, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  const char *impl[3] = {"mpi", "petsc", "starforest"};
  const char *transport[3] = {"none", "petscsf-basic", "basic"};
  for (const std::string phase : {"ghost", "spmv", "spmvT", "local"}) {
    // spmvT has no hand-written baseline; local times STREAM's triad with
    // the three (one call per round).
    std::vector<std::function<void()>> calls;
    if (phase == "ghost") calls = {mpi_scatter, petsc_scatter, stf_scatter};
    if (phase == "spmv") calls = {mpi_mult, petsc_mult, stf_mult};
    if (phase == "spmvT") calls = {[] {}, petsc_mult_t, stf_mult_t};
    if (phase == "local") calls = {mpi_local, petsc_local, stf_local, [&triad] { triad(); }};
    std::vector<long> counts(calls.size(), o.iters);
    if (phase == "local") counts.back() = 1;
    std::vector<bench::Stats> st = bench::time_rotating(MPI_COMM_WORLD, o.rounds, counts, calls);
    const bool local = phase == "local";
    const double triad_gbps = local ? triad.bytes() / st.back().us / 1e3 : 0;
    for (int k = phase == "spmvT" ? 1 : 0; k < 3; ++k) {
      bench::Record r;
      r.timing("petsc_scatter", impl[k], g.nrows, size, st[k])
          .str("matrix", name)
          .str("phase", phase)
          .str("memory", "host")
          .str("transport", local ? "none" : transport[k])
          .integer("nnz", g.nnz)
          .num("ratio_to_petsc", st[k].us / st[1].us);
      if (local)
        r.num("gbps", bytes / st[k].us / 1e3)
            .num("bound_ratio", bytes / st[k].us / 1e3 / triad_gbps)
            .num("stream_gbps", triad_gbps);
      log.add(r);
    }
    if (rank != 0) continue;
    const std::string mpi_text = phase == "spmvT" ? "-" : bench::range_text(st[0]);
    const std::string stf_mpi = phase == "spmvT" ? "-" : std::to_string(st[2].us / st[0].us).substr(0, 4);
    std::printf("%-12s %-6s %24s %24s %24s %9.2f %9s", name.c_str(), phase.c_str(), mpi_text.c_str(),
                bench::range_text(st[1]).c_str(), bench::range_text(st[2]).c_str(), st[2].us / st[1].us,
                stf_mpi.c_str());
    if (local)
      std::printf("  stf %.2f GB/s = %.2f, petsc %.2f = %.2f of triad %.2f GB/s", bytes / st[2].us / 1e3,
                  bytes / st[2].us / 1e3 / triad_gbps, bytes / st[1].us / 1e3, bytes / st[1].us / 1e3 / triad_gbps,
                  triad_gbps);
    std::printf("\n");
  }

  CHECK_PETSC(MatDestroy(&PA));
  CHECK_PETSC(VecScatterDestroy(&sc));
  CHECK_PETSC(ISDestroy(&is));
  CHECK_PETSC(VecDestroy(&px));
  CHECK_PETSC(VecDestroy(&py));
  CHECK_PETSC(VecDestroy(&pgh));
  CHECK_STF(stf_csr_destroy(&A));
  stf_coo_free(&g);
}

}  // namespace

void compare_scatter(const CompareOptions &o, bench::JsonLog &log) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  bench::Triad triad(MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("\n# scatter: ghost exchange (VecScatter / ghost-SF bcast / MPI), SpMV (MatMult / stf_csr_mult / "
                "MPI), transposed SpMV (MatMultTranspose / stf_csr_mult_transpose) and local product (PETSc's "
                "SeqAIJ blocks / stf_csr_mult_local / plain row loop), rows split by nonzeros; us per call "
                "(slowest rank), median of %d rounds of %d; local: GB/s = CSR product bytes / time, against "
                "STREAM's triad in the same rounds\n",
                o.rounds, o.iters);
    std::printf("%-12s %-6s %24s %24s %24s %9s %9s\n", "matrix", "phase", "mpi", "petsc", "starforest",
                "stf/petsc", "stf/mpi");
  }
  for (const std::string &m : o.matrices) {
    std::string path = m.find('/') != std::string::npos ? m : o.dir + "/" + m + ".mtx.gz";
    // Every rank sees the same files; a missing one is skipped, not an error,
    // so that the quick test passes on machines without the matrices.
    if (FILE *f = std::fopen(path.c_str(), "rb")) {
      std::fclose(f);
      one_matrix(o, path, triad, log);
    } else if (rank == 0) {
      std::printf("%-12s skipped: cannot open %s\n", m.c_str(), path.c_str());
    }
  }
}
