// Distributed CSR matrix and CG against serial computations on the same
// global matrix: y = A x, y = A^T x with both partitions, the ghost SF's
// shape, and CG's solution against a serial CG. Exits 77 (skipped) when the
// shared matrices are absent.
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "check.h"
#include "stf_apps.h"

namespace {

double x_of(int64_t i) { return 1.0 + static_cast<double>((i * 7919) % 101) / 64.0; }

std::vector<double> serial_mult(const stf_coo &g, const std::vector<double> &x, bool transpose) {
  std::vector<double> y(g.nrows, 0.0);
  for (int64_t k = 0; k < g.nnz; k++) {
    if (transpose) y[g.col[k]] += g.val[k] * x[g.row[k]];
    else y[g.row[k]] += g.val[k] * x[g.col[k]];
  }
  return y;
}

void check_products(stft::Checker &ck, const stf_coo &g, const char *name, stf_partition how) {
  ck.context(std::string(name) + (how == STF_PARTITION_ROWS ? " rows" : " nnz"));
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

  std::vector<double> xg(g.nrows);
  for (int64_t i = 0; i < g.nrows; i++) xg[i] = x_of(i);
  for (bool transpose : {false, true}) {
    std::vector<double> expect = serial_mult(g, xg, transpose), y(nlocal + 1, -1.0);
    int rc = transpose ? stf_csr_mult_transpose(A, xg.data() + first, y.data())
                       : stf_csr_mult(A, xg.data() + first, y.data());
    ck.code(rc, STF_SUCCESS, transpose ? "mult_transpose" : "mult");
    for (stf_int i = 0; i < nlocal; i++) {
      double e = expect[first + i];
      if (!ck.check(std::fabs(y[i] - e) <= 1e-12 * (1.0 + std::fabs(e)), "%s row %lld: expected %.17g got %.17g",
                    transpose ? "A^T x" : "A x", static_cast<long long>(first + i), e, y[i]))
        break;
    }
  }
  ck.code(stf_csr_destroy(&A), STF_SUCCESS, "stf_csr_destroy");
}

// Serial CG with the same algorithm, as the oracle.
std::vector<double> serial_cg(const stf_coo &g, const std::vector<double> &b, double rtol, int maxit) {
  const int64_t n = g.nrows;
  std::vector<double> x(n, 0.0), r = b, p = b, Ap;
  auto dot = [](const std::vector<double> &a, const std::vector<double> &c) {
    double s = 0;
    for (std::size_t i = 0; i < a.size(); i++) s += a[i] * c[i];
    return s;
  };
  double rr = dot(r, r), target = rtol * std::sqrt(dot(b, b));
  for (int it = 0; it < maxit && std::sqrt(rr) > target; it++) {
    Ap = serial_mult(g, p, false);
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
  for (int64_t i = 0; i < g.nrows; i++) b[i] = x_of(i) - 1.5;
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
  stft::Checker ck("test_csr", 0);
  struct stat st;
  if (stat(STF_MATRIX_DIR, &st) != 0) {
    if (ck.rank() == 0) std::printf("test_csr: SKIPPED, no shared matrices at %s\n", STF_MATRIX_DIR);
    MPI_Finalize();
    return 77;
  }
  // Pd: unsymmetric (A^T differs from A); 1138_bus: SPD, for CG.
  for (const char *name : {"Pd", "1138_bus"}) {
    stf_coo g{};
    std::string path = std::string(STF_MATRIX_DIR) + "/" + name + ".mtx.gz";
    if (!ck.code(stf_mm_read(path.c_str(), &g), STF_SUCCESS, path.c_str())) continue;
    check_products(ck, g, name, STF_PARTITION_ROWS);
    check_products(ck, g, name, STF_PARTITION_NNZ);
    if (std::string(name) == "1138_bus") check_cg(ck, g, name);
    stf_coo_free(&g);
  }
  int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
