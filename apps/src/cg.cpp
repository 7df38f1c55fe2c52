// Unpreconditioned conjugate gradient on a distributed CSR matrix.
#include <cmath>
#include <vector>

#include "apps_error.h"
#include "csr.h"

namespace {

// Global dot product: one allreduce, where the host waits.
int dot(stf_csr A, const std::vector<double> &a, const std::vector<double> &b, double *out, long long *syncs) {
  double local = 0.0;
  for (stf_int i = 0; i < A->nlocal; i++) local += a[i] * b[i];
  (*syncs)++;
  int rc = MPI_Allreduce(&local, out, 1, MPI_DOUBLE, MPI_SUM, A->comm);
  return rc == MPI_SUCCESS ? STF_SUCCESS : stf_apps::fail(STF_ERR_MPI, "MPI_Allreduce failed in CG");
}

}  // namespace

extern "C" int stf_cg_solve(stf_csr A, const double *b, double *x, double rtol, int maxit, stf_cg_result *result) try {
  using stf_apps::fail;
  if (!A) return fail(STF_ERR_NULL, "the matrix handle is NULL");
  if (!result) return fail(STF_ERR_NULL, "result is NULL");
  if (A->nlocal > 0 && (!b || !x)) return fail(STF_ERR_NULL, "b or x is NULL");
  if (!(rtol >= 0) || maxit < 0) return fail(STF_ERR_ARG, "need rtol >= 0 and maxit >= 0");
  *result = stf_cg_result{};
  const stf_int n = A->nlocal;
  std::vector<double> r(n), p(n), Ap(n), bv(b, b + n);
  if (int rc = stf_csr_mult(A, x, Ap.data())) return rc;
  for (stf_int i = 0; i < n; i++) r[i] = b[i] - Ap[i];
  p = r;
  double rr = 0, bb = 0;
  if (int rc = dot(A, r, r, &rr, &result->host_syncs)) return rc;
  if (int rc = dot(A, bv, bv, &bb, &result->host_syncs)) return rc;
  const double target = rtol * std::sqrt(bb);
  int it = 0;
  while (std::sqrt(rr) > target && it < maxit) {
    if (int rc = stf_csr_mult(A, p.data(), Ap.data())) return rc;
    double pAp = 0;
    if (int rc = dot(A, p, Ap, &pAp, &result->host_syncs)) return rc;
    if (!(pAp > 0)) return fail(STF_ERR_ARG, "p^T A p = %g <= 0 at iteration %d: the matrix is not SPD", pAp, it);
    const double alpha = rr / pAp;
    for (stf_int i = 0; i < n; i++) {
      x[i] += alpha * p[i];
      r[i] -= alpha * Ap[i];
    }
    double rr_new = 0;
    if (int rc = dot(A, r, r, &rr_new, &result->host_syncs)) return rc;
    const double beta = rr_new / rr;
    for (stf_int i = 0; i < n; i++) p[i] = r[i] + beta * p[i];
    rr = rr_new;
    it++;
  }
  result->iterations = it;
  result->residual_norm = std::sqrt(rr);
  result->converged = std::sqrt(rr) <= target;
  return STF_SUCCESS;
} STF_APPS_CATCH
