// Distributed CSR matrix and CG against serial computations on the same
// global matrix: y = A x, y = A^T x and the local product with both
// partitions, against the simple row loop, on generated matrices aimed at
// every way the row-grouped layout stores rows (test_csr_matrices.h) and on
// every shared matrix; the layout each rank reports; the ghost SF's shape;
// and CG's solution against a serial CG. Exits 77 (skipped) after the
// generated cases when the shared matrices are absent.
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "check.h"
#include "stf_apps.h"
#include "test_csr_matrices.h"

namespace {

double x_of(int64_t i, int call) { return 1.0 + static_cast<double>((i * 7919 + call * 31) % 101) / 64.0; }

// got must equal the row loop's want within the rounding of a reordered sum.
void compare(stft::Checker &ck, const char *what, int call, const double *got, const std::vector<double> &want,
             const std::vector<double> &scale, int64_t first, stf_int n) {
  for (stf_int i = 0; i < n; i++) {
    const double e = want[first + i], tol = 1e-13 * (scale[first + i] + 1e-300);
    if (!ck.check(std::fabs(got[i] - e) <= tol, "%s (call %d) row %lld: expected %.17g got %.17g", what, call,
                  static_cast<long long>(first + i), e, got[i]))
      return;
  }
}

// What the layout must say about this rank's rows, from the matrix alone.
void check_layout(stft::Checker &ck, stf_csr A, const stf_coo &g, const std::string &name, int64_t first,
                  stf_int nlocal, int size) {
  stf_csr_layout L{};
  if (!ck.code(stf_csr_get_layout(A, &L), STF_SUCCESS, "stf_csr_get_layout")) return;
  std::vector<char> has_off(nlocal, 0);
  for (int64_t k = 0; k < g.nnz; k++)
    if (g.row[k] >= first && g.row[k] < first + nlocal && (g.col[k] < first || g.col[k] >= first + nlocal))
      has_off[g.row[k] - first] = 1;
  const stf_int off_rows = static_cast<stf_int>(std::count(has_off.begin(), has_off.end(), 1));
  ck.check(L.off_rows == off_rows, "off-diagonal block stores %d rows, %d have entries", L.off_rows, off_rows);
  ck.check(L.diag_groups >= (nlocal + 7) / 8 && L.diag_groups <= nlocal, "%d diagonal groups for %d rows",
           L.diag_groups, nlocal);
  ck.check(L.off_groups >= (off_rows + 7) / 8 && L.off_groups <= off_rows, "%d off-diagonal groups for %d rows",
           L.off_groups, off_rows);
  ck.check(L.diag_shared_rows <= nlocal && L.off_shared_rows <= off_rows, "shared rows %d / %d out of range",
           L.diag_shared_rows, L.off_shared_rows);
  if (name == "identical") {  // all rows alike: shared groups (a window's last row may be alone)
    ck.check(L.diag_shared_rows >= nlocal - 1, "identical rows: %d of %d diagonal rows share columns",
             L.diag_shared_rows, nlocal);
    if (size > 1)
      ck.check(L.off_shared_rows >= off_rows - 1, "identical rows: %d of %d off-diagonal rows share columns",
               L.off_shared_rows, off_rows);
  }
  if (name == "distinct") {
    ck.check(L.diag_shared_rows == 0 && L.off_shared_rows == 0, "distinct rows: %d + %d rows share columns",
             L.diag_shared_rows, L.off_shared_rows);
    if (size == 1)  // one length everywhere: full groups of their own columns
      ck.check(L.diag_groups * 4 <= nlocal, "distinct rows: %d groups for %d rows", L.diag_groups, nlocal);
  }
  if (name == "nodes") ck.check(L.diag_shared_rows > nlocal / 2, "nodes: only %d of %d rows share columns",
                                L.diag_shared_rows, nlocal);
  if (name == "random" && size == 1)  // lengths sorted within windows: groups form
    ck.check(L.diag_groups * 2 <= nlocal, "random: %d groups for %d rows", L.diag_groups, nlocal);
}

void check_products(stft::Checker &ck, const stf_coo &g, const std::string &name, stf_partition how) {
  ck.context(name + (how == STF_PARTITION_ROWS ? " rows" : " nnz"));
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  stf_csr A = nullptr;
  if (!ck.code(stf_csr_create(MPI_COMM_WORLD, &g, how, &A), STF_SUCCESS, "stf_csr_create")) return;
  int64_t nglobal, first;
  stf_int nlocal, nghost;
  stf_csr_get_info(A, &nglobal, &nlocal, &first, &nghost, nullptr);
  const int64_t *ghosts = nullptr;
  stf_csr_get_ghost_columns(A, &ghosts);
  for (stf_int k = 0; k < nghost; k++)
    ck.check((ghosts[k] < first || ghosts[k] >= first + nlocal) && (k == 0 || ghosts[k] > ghosts[k - 1]),
             "ghost %d is column %lld: owned or not ascending", k, static_cast<long long>(ghosts[k]));
  stf_sf sf = nullptr;
  stf_int nleaves = -1;
  stf_csr_get_ghost_sf(A, &sf);
  stf_get_graph(sf, nullptr, &nleaves, nullptr, nullptr);
  ck.check(nleaves == nghost, "ghost SF has %d leaves, expected %d", nleaves, nghost);
  check_layout(ck, A, g, name, first, nlocal, size);

  // Two calls of each product with different x: the second finds whatever
  // the first left in the matrix's buffers.
  std::vector<double> xg(g.nrows), want, scale, y(nlocal + 1), ghost(nghost + 1);
  for (int call = 0; call < 2; call++) {
    for (int64_t i = 0; i < g.nrows; i++) xg[i] = x_of(i, call);
    for (bool transpose : {false, true}) {
      stft::row_loop(g, xg, transpose, &want, &scale);
      std::fill(y.begin(), y.end(), -1.0);
      const int rc = transpose ? stf_csr_mult_transpose(A, xg.data() + first, y.data())
                               : stf_csr_mult(A, xg.data() + first, y.data());
      ck.code(rc, STF_SUCCESS, transpose ? "mult_transpose" : "mult");
      compare(ck, transpose ? "A^T x" : "A x", call, y.data(), want, scale, first, nlocal);
    }
    // The local product from ghost values fetched by hand.
    stft::row_loop(g, xg, false, &want, &scale);
    for (stf_int k = 0; k < nghost; k++) ghost[k] = xg[ghosts[k]];
    std::fill(y.begin(), y.end(), -1.0);
    ck.code(stf_csr_mult_local(A, xg.data() + first, ghost.data(), y.data()), STF_SUCCESS, "mult_local");
    compare(ck, "local A x", call, y.data(), want, scale, first, nlocal);
  }
  ck.code(stf_csr_destroy(&A), STF_SUCCESS, "stf_csr_destroy");
}

// Serial CG with the same algorithm, as the oracle.
std::vector<double> serial_cg(const stf_coo &g, const std::vector<double> &b, double rtol, int maxit) {
  const int64_t n = g.nrows;
  std::vector<double> x(n, 0.0), r = b, p = b, Ap, scale;
  auto dot = [](const std::vector<double> &a, const std::vector<double> &c) {
    double s = 0;
    for (std::size_t i = 0; i < a.size(); i++) s += a[i] * c[i];
    return s;
  };
  double rr = dot(r, r), target = rtol * std::sqrt(dot(b, b));
  for (int it = 0; it < maxit && std::sqrt(rr) > target; it++) {
    stft::row_loop(g, p, false, &Ap, &scale);
    double alpha = rr / dot(p, Ap);
    for (int64_t i = 0; i < n; i++) x[i] += alpha * p[i], r[i] -= alpha * Ap[i];
    double rr_new = dot(r, r);
    for (int64_t i = 0; i < n; i++) p[i] = r[i] + rr_new / rr * p[i];
    rr = rr_new;
  }
  return x;
}

void check_cg(stft::Checker &ck, const stf_coo &g, const char *name) {
  ck.context(std::string(name) + " CG");
  stf_csr A = nullptr;
  if (!ck.code(stf_csr_create(MPI_COMM_WORLD, &g, STF_PARTITION_NNZ, &A), STF_SUCCESS, "stf_csr_create")) return;
  int64_t first;
  stf_int nlocal;
  stf_csr_get_info(A, nullptr, &nlocal, &first, nullptr, nullptr);
  std::vector<double> b(g.nrows);
  for (int64_t i = 0; i < g.nrows; i++) b[i] = x_of(i, 0) - 1.5;
  const double rtol = 1e-10;
  const int maxit = 20000;
  std::vector<double> x(nlocal + 1, 0.0);
  stf_cg_result res;
  ck.code(stf_cg_solve(A, b.data() + first, x.data(), rtol, maxit, &res), STF_SUCCESS, "stf_cg_solve");
  ck.check(res.converged == 1, "CG did not converge: %d iterations, residual %g", res.iterations, res.residual_norm);
  ck.check(res.host_syncs == 2 + 2LL * res.iterations, "expected 2 + 2 per iteration host syncs, got %lld",
           res.host_syncs);
  std::vector<double> xs = serial_cg(g, b, rtol, maxit);
  double diff = 0, norm = 0;
  for (stf_int i = 0; i < nlocal; i++) {
    diff = std::fmax(diff, std::fabs(x[i] - xs[first + i]));
    norm = std::fmax(norm, std::fabs(xs[first + i]));
  }
  MPI_Allreduce(MPI_IN_PLACE, &diff, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &norm, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  ck.check(diff <= 1e-6 * norm, "CG solution differs from serial CG by %g (max |x| %g)", diff, norm);
  if (ck.rank() == 0)
    std::printf("%s: CG %d iterations, %lld host syncs (%.1f per iteration)\n", name, res.iterations,
                res.host_syncs, res.iterations ? static_cast<double>(res.host_syncs) / res.iterations : 0.0);
  ck.code(stf_csr_destroy(&A), STF_SUCCESS, "stf_csr_destroy");
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  stft::Checker ck("test_csr", argc, argv, 20);
  for (stft::TestMatrix &m : stft::csr_test_matrices(1500, static_cast<unsigned>(ck.seed()))) {
    check_products(ck, m.coo, m.name, STF_PARTITION_ROWS);
    check_products(ck, m.coo, m.name, STF_PARTITION_NNZ);
    stf_coo_free(&m.coo);
  }
  struct stat st;
  if (stat(STF_MATRIX_DIR, &st) != 0) {
    int rc = ck.finish();
    if (ck.rank() == 0) std::printf("test_csr: shared matrices SKIPPED, none at %s\n", STF_MATRIX_DIR);
    MPI_Finalize();
    return rc ? rc : 77;
  }
  for (const std::string &name : stft::matrix_names(STF_MATRIX_DIR)) {
    stf_coo g{};
    std::string path = std::string(STF_MATRIX_DIR) + "/" + name + ".mtx.gz";
    if (!ck.code(stf_mm_read(path.c_str(), &g), STF_SUCCESS, path.c_str())) continue;
    // Both partitions for an unsymmetric and an SPD matrix; the rest by nonzeros.
    if (name == "Pd" || name == "1138_bus") check_products(ck, g, name, STF_PARTITION_ROWS);
    check_products(ck, g, name, STF_PARTITION_NNZ);
    if (name == "1138_bus") check_cg(ck, g, name.c_str());  // SPD
    stf_coo_free(&g);
  }
  int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
