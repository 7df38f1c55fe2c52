// SpMV communication on real matrices: the ghost columns of one row
// partition (stf_csr_create, split by nonzeros) gathered by a PETSc
// VecScatter, by the starforest ghost SF and by hand-written MPI; and the
// full product by PETSc MatMult (MPIAIJ on the same rows), stf_csr_mult and
// the hand-written MPI SpMV.
#include <starforest.h>
#include <stf_apps.h>

#include <cmath>
#include <cstdio>
#include <memory>

#include "check.h"
#include "matmult_mpi.h"
#include "compare.h"

namespace {

#define CHECK_APPS(call)                                                                         \
  do {                                                                                           \
    int rc_ = (call);                                                                            \
    if (rc_ != STF_SUCCESS) {                                                                    \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, stf_apps_last_error_message()); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                              \
    }                                                                                            \
  } while (0)

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

void one_matrix(const CompareOptions &o, const std::string &path, bench::JsonLog &log) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::string name = path.substr(path.find_last_of('/') + 1);
  name = name.substr(0, name.find(".mtx"));
  stf_coo g{};
  CHECK_APPS(stf_mm_read(path.c_str(), &g));
  stf_csr A;
  CHECK_APPS(stf_csr_create(MPI_COMM_WORLD, &g, STF_PARTITION_NNZ, &A));
  int64_t first = 0;
  stf_int nlocal = 0, nghost = 0;
  CHECK_APPS(stf_csr_get_info(A, nullptr, &nlocal, &first, &nghost, nullptr));
  const int64_t *cols = nullptr;
  stf_sf sf = nullptr;
  CHECK_APPS(stf_csr_get_ghost_columns(A, &cols));
  CHECK_APPS(stf_csr_get_ghost_sf(A, &sf));
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
      scale(nlocal, 0.0);
  for (stf_int i = 0; i < nlocal; ++i) x[i] = x_value(first + i);
  PetscScalar *pa;
  CHECK_PETSC(VecGetArray(px, &pa));
  for (stf_int i = 0; i < nlocal; ++i) pa[i] = x[i];
  CHECK_PETSC(VecRestoreArray(px, &pa));
  for (stf_int i = 0; i < nghost; ++i) want_ghost[i] = x_value(cols[i]);
  for (int64_t k = 0; k < g.nnz; ++k) {
    int64_t r = g.row[k] - first;
    if (r < 0 || r >= nlocal) continue;
    want_y[r] += g.val[k] * x_value(g.col[k]);
    scale[r] += std::fabs(g.val[k] * x_value(g.col[k]));
  }

  auto petsc_scatter = [&] {
    CHECK_PETSC(VecScatterBegin(sc, px, pgh, INSERT_VALUES, SCATTER_FORWARD));
    CHECK_PETSC(VecScatterEnd(sc, px, pgh, INSERT_VALUES, SCATTER_FORWARD));
  };
  auto stf_scatter = [&] { CHECK_STF(stf_bcast(sf, MPI_DOUBLE, x.data(), ghost.data(), MPI_REPLACE)); };
  auto mpi_scatter = [&] { mpi->scatter_begin(x.data(), ghost.data()), mpi->scatter_end(); };
  auto petsc_mult = [&] { CHECK_PETSC(MatMult(PA, px, py)); };
  auto stf_mult = [&] { CHECK_APPS(stf_csr_mult(A, x.data(), y.data())); };
  auto mpi_mult = [&] { mpi->mult(x.data(), y.data()); };

  // Verify all six before timing.
  auto ghost_wrong = [&](const double *v) {
    long bad = 0;
    for (stf_int i = 0; i < nghost; ++i) bad += v[i] != want_ghost[i];
    return bad;
  };
  auto y_wrong = [&](const double *v) {
    long bad = 0;
    for (stf_int i = 0; i < nlocal; ++i) bad += !(std::fabs(v[i] - want_y[i]) <= 1e-12 * scale[i]);
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

  const char *impl[3] = {"mpi", "petsc", "starforest"};
  const char *transport[3] = {"none", "petscsf-basic", "basic"};
  for (const char *phase : {"ghost", "spmv"}) {
    bool spmv = phase[0] == 's';
    std::vector<bench::Stats> st =
        spmv ? bench::time_rotating(MPI_COMM_WORLD, o.rounds, o.iters, {mpi_mult, petsc_mult, stf_mult})
             : bench::time_rotating(MPI_COMM_WORLD, o.rounds, o.iters, {mpi_scatter, petsc_scatter, stf_scatter});
    for (int k = 0; k < 3; ++k) {
      bench::Record r;
      r.timing("petsc_scatter", impl[k], g.nrows, size, st[k])
          .str("matrix", name)
          .str("phase", phase)
          .str("memory", "host")
          .str("transport", transport[k])
          .integer("nnz", g.nnz)
          .num("ratio_to_petsc", st[k].us / st[1].us);
      log.add(r);
    }
    if (rank == 0)
      std::printf("%-12s %-6s %24s %24s %24s %9.2f %9.2f\n", name.c_str(), phase, bench::range_text(st[0]).c_str(),
                  bench::range_text(st[1]).c_str(), bench::range_text(st[2]).c_str(), st[2].us / st[1].us,
                  st[2].us / st[0].us);
  }

  CHECK_PETSC(MatDestroy(&PA));
  CHECK_PETSC(VecScatterDestroy(&sc));
  CHECK_PETSC(ISDestroy(&is));
  CHECK_PETSC(VecDestroy(&px));
  CHECK_PETSC(VecDestroy(&py));
  CHECK_PETSC(VecDestroy(&pgh));
  CHECK_APPS(stf_csr_destroy(&A));
  stf_coo_free(&g);
}

}  // namespace

void compare_scatter(const CompareOptions &o, bench::JsonLog &log) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    std::printf("\n# scatter: ghost exchange (VecScatter / ghost-SF bcast / MPI) and SpMV (MatMult / stf_csr_mult / "
                "MPI), rows split by nonzeros; us per call (slowest rank), median of %d rounds of %d\n",
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
      one_matrix(o, path, log);
    } else if (rank == 0) {
      std::printf("%-12s skipped: cannot open %s\n", m.c_str(), path.c_str());
    }
  }
}
