// CG on the emulated device (or $STF_DEVICE: the GPU checks run it on
// cuda): the synchronous device CG and CGAsync run the
// same fixed number of iterations with each SpMV variant and must give the
// same residual history and solution, close to the host CG's; CGAsync must
// converge when given enough iterations and find a non-SPD matrix. Host
// waits are checked against the design: the synchronous CG waits twice per
// dot product (the copy back, the allreduce), four times per iteration, plus
// the SpMV's waits; CGAsync's iterations contain no wait of their own, only
// the SpMV's. Then a Laplacian once more on the "host" device. Shared
// matrices: exit 77 after the generated cases when absent.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "check.h"
#include "device_matrices.h"

using namespace stft;

namespace {

const char *kVariantName[] = {"split", "event", "two-streams"};
const stf_csr_mult_variant kVariants[] = {STF_CSR_MULT_SPLIT, STF_CSR_MULT_EVENT, STF_CSR_MULT_TWO_STREAMS};

double b_of(int64_t i) { return static_cast<double>((i * 7919) % 101) / 64.0 - 0.5; }

double max_abs_diff(const std::vector<double> &a, const std::vector<double> &b, std::size_t n, double *norm) {
  double d = 0, m = 0;
  for (std::size_t i = 0; i < n; i++) {
    d = std::fmax(d, std::fabs(a[i] - b[i]));
    m = std::fmax(m, std::fabs(b[i]));
  }
  MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  *norm = m;
  return d;
}

struct Local {
  int64_t first;
  stf_int n;
  std::vector<double> b;
};

Local local_part(stf_csr A) {
  Local l;
  stf_csr_get_info(A, nullptr, &l.n, &l.first, nullptr, nullptr);
  for (stf_int i = 0; i < l.n; i++) l.b.push_back(b_of(l.first + i));
  l.b.push_back(0.0);  // never an empty vector
  return l;
}

// Fixed iterations: synchronous device CG, CGAsync and host CG agree.
// must_fall: ||r|| must halve (true for the Laplacian; an ill-conditioned
// matrix's residual may rise for a while in CG).
void compare(Checker &ck, stf_csr A, const std::string &name, int iters, bool must_fall) {
  const Local l = local_part(A);
  // The host CG, as the reference solution.
  std::vector<double> xh(l.n + 1, 0.0);
  stf_cg_result rh;
  ck.code(stf_cg_solve(A, l.b.data(), xh.data(), 0.0, iters, &rh), STF_SUCCESS, "stf_cg_solve");
  for (int v = 0; v < 3; v++) {
    ck.context(name + " " + kVariantName[v]);
    DeviceVec b(ck, l.b), xs(ck, std::vector<double>(l.n + 1, 0.0)), xa(ck, std::vector<double>(l.n + 1, 0.0));
    std::vector<double> hs(iters + 1, -1.0), ha(iters + 1, -2.0);
    stf_cg_result rs, ra;
    if (!ck.code(stf_cg_solve_device(A, b.data(), xs.data(), 0.0, iters, kVariants[v], hs.data(), &rs), STF_SUCCESS,
                 "stf_cg_solve_device"))
      continue;
    if (!ck.code(stf_cg_solve_async(A, b.data(), xa.data(), 0.0, iters, kVariants[v], ha.data(), &ra), STF_SUCCESS,
                 "stf_cg_solve_async"))
      continue;
    ck.check(rs.iterations == iters && ra.iterations == iters, "iterations %d and %d, want %d", rs.iterations,
             ra.iterations, iters);
    for (int k = 0; k <= iters; k++)
      if (!ck.check(std::fabs(hs[k] - ha[k]) <= 1e-12 * hs[0], "||r|| at iteration %d: sync %.17g async %.17g", k,
                    hs[k], ha[k]))
        break;
    ck.check(!must_fall || hs[iters] < 0.5 * hs[0], "the residual did not fall: %g -> %g", hs[0], hs[iters]);
    ck.check(std::fabs(ra.residual_norm - hs[iters]) <= 1e-12 * hs[0], "final ||r|| %g, history says %g",
             ra.residual_norm, hs[iters]);
    const std::vector<double> vs = xs.fetch(ck), va = xa.fetch(ck);
    double norm;
    double d = max_abs_diff(va, vs, l.n, &norm);
    ck.check(d <= 1e-12 * norm, "async x differs from sync x by %g (max |x| %g)", d, norm);
    d = max_abs_diff(vs, xh, l.n, &norm);
    ck.check(d <= 1e-6 * norm, "device x differs from host CG's by %g (max |x| %g)", d, norm);

    // Host waits: the synchronous CG 2 per dot product (2 at set-up, 2 per
    // iteration) + 1 final wait; CGAsync none in its iterations, 2 copies
    // back at the end; both plus their SpMVs' waits.
    ck.check(rs.loop_syncs == 4LL * iters, "sync CG: %lld waits in its iterations, want %d", rs.loop_syncs,
             4 * iters);
    ck.check(rs.host_syncs == 5 + rs.loop_syncs + rs.mult_syncs, "sync CG: %lld host waits, want 5 + %lld + %lld",
             rs.host_syncs, rs.loop_syncs, rs.mult_syncs);
    ck.check(ra.loop_syncs == 0, "CGAsync: %lld waits in its iterations", ra.loop_syncs);
    ck.check(ra.host_syncs == 2 + ra.mult_syncs, "CGAsync: %lld host waits, want 2 + %lld", ra.host_syncs,
             ra.mult_syncs);
    ck.check(ra.mult_syncs <= 2LL * (iters + 1), "CGAsync: %lld SpMV waits for %d multiplies", ra.mult_syncs,
             iters + 1);
    long long in[4] = {rs.host_syncs, rs.mult_syncs, ra.host_syncs, ra.mult_syncs}, out[4];
    MPI_Reduce(in, out, 4, MPI_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (ck.rank() == 0)
      std::printf("%s %-11s %d iterations: host waits per iteration (max over ranks): sync CG %.2f (SpMV %.2f), "
                  "CGAsync %.2f (SpMV %.2f)\n",
                  name.c_str(), kVariantName[v], iters, static_cast<double>(out[0]) / iters,
                  static_cast<double>(out[1]) / iters, static_cast<double>(out[2]) / iters,
                  static_cast<double>(out[3]) / iters);
  }
}

// Enough iterations: CGAsync converges where the synchronous CG does.
void converge(Checker &ck, stf_csr A) {
  ck.context("laplacian convergence");
  const Local l = local_part(A);
  DeviceVec b(ck, l.b), xs(ck, std::vector<double>(l.n + 1, 0.0)), xa(ck, std::vector<double>(l.n + 1, 0.0));
  stf_cg_result rs, ra;
  const double rtol = 1e-9;
  ck.code(stf_cg_solve_device(A, b.data(), xs.data(), rtol, 500, STF_CSR_MULT_SPLIT, nullptr, &rs), STF_SUCCESS,
          "stf_cg_solve_device");
  ck.check(rs.converged == 1 && rs.iterations < 500, "sync CG: converged %d after %d iterations", rs.converged,
           rs.iterations);
  const int iters = rs.iterations + 10;
  ck.code(stf_cg_solve_async(A, b.data(), xa.data(), rtol, iters, STF_CSR_MULT_EVENT, nullptr, &ra), STF_SUCCESS,
          "stf_cg_solve_async");
  ck.check(ra.converged == 1 && ra.iterations == iters, "CGAsync: converged %d after %d iterations", ra.converged,
           ra.iterations);
  ck.check(ra.host_syncs == 1 + ra.mult_syncs, "CGAsync without history: %lld host waits, want 1 + %lld",
           ra.host_syncs, ra.mult_syncs);
  double norm;
  const double d = max_abs_diff(xa.fetch(ck), xs.fetch(ck), l.n, &norm);
  ck.check(d <= 1e-7 * norm, "converged solutions differ by %g (max |x| %g)", d, norm);
}

// -A is negative definite: both CGs report it.
void not_spd(Checker &ck, stf_coo g) {
  ck.context("negative definite");
  for (int64_t k = 0; k < g.nnz; k++) g.val[k] = -g.val[k];
  stf_csr A = nullptr;
  if (!ck.code(stf_csr_create(MPI_COMM_WORLD, &g, STF_PARTITION_ROWS, &A), STF_SUCCESS, "stf_csr_create")) return;
  ck.code(stf_csr_to_device(A), STF_SUCCESS, "stf_csr_to_device");
  const Local l = local_part(A);
  DeviceVec b(ck, l.b), x(ck, std::vector<double>(l.n + 1, 0.0));
  stf_cg_result r;
  ck.code(stf_cg_solve_device(A, b.data(), x.data(), 0.0, 5, STF_CSR_MULT_SPLIT, nullptr, &r), STF_ERR_ARG,
          "sync CG on -A");
  ck.code(stf_cg_solve_async(A, b.data(), x.data(), 0.0, 5, STF_CSR_MULT_SPLIT, nullptr, &r), STF_ERR_ARG,
          "CGAsync on -A");
  ck.code(stf_cg_solve_async(A, b.data(), x.data(), -1.0, 5, STF_CSR_MULT_SPLIT, nullptr, &r), STF_ERR_ARG,
          "negative rtol");
  ck.code(stf_csr_destroy(&A), STF_SUCCESS, "stf_csr_destroy");
  for (int64_t k = 0; k < g.nnz; k++) g.val[k] = -g.val[k];
}

void run_matrix(Checker &ck, const stf_coo &g, const std::string &name, int iters, bool well_conditioned) {
  ck.context(name);
  stf_csr A = nullptr;
  if (!ck.code(stf_csr_create(MPI_COMM_WORLD, &g, STF_PARTITION_NNZ, &A), STF_SUCCESS, "stf_csr_create")) return;
  stf_cg_result r;
  ck.code(stf_cg_solve_async(A, nullptr, nullptr, 0.0, 1, STF_CSR_MULT_SPLIT, nullptr, &r), STF_ERR_STATE,
          "CGAsync before stf_csr_to_device");
  if (ck.code(stf_csr_to_device(A), STF_SUCCESS, "stf_csr_to_device")) {
    compare(ck, A, name, iters, well_conditioned);
    if (well_conditioned) converge(ck, A);
  }
  ck.code(stf_csr_destroy(&A), STF_SUCCESS, "stf_csr_destroy");
}

}  // namespace

int main(int argc, char **argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  Checker ck("test_cg_device", argc, argv, 0);
  if (!ck.check(provided == MPI_THREAD_MULTIPLE, "MPI gives thread level %d, CGAsync on a device needs MULTIPLE",
                provided)) {
    MPI_Finalize();
    return 1;
  }
  ck.code(stf_device_select(test_device()), STF_SUCCESS, test_device());
  {
    stf_coo g = laplacian_2d(20);
    run_matrix(ck, g, "laplacian", 25, true);
    not_spd(ck, g);
    stf_coo_free(&g);
  }
  const bool shared = shared_matrices_present();
  if (shared) {
    stf_coo g{};
    if (read_shared_matrix(ck, "1138_bus", &g)) run_matrix(ck, g, "1138_bus", 30, false);
    stf_coo_free(&g);
  }
  // The same code on "host", where kernels and reductions run inline.
  if (ck.code(stf_device_select("host"), STF_SUCCESS, "stf_device_select(host)")) {
    stf_coo g = laplacian_2d(12);
    run_matrix(ck, g, "laplacian on host", 20, true);
    stf_coo_free(&g);
  }
  int rc = ck.finish();
  if (rc == 0 && !shared) {
    if (ck.rank() == 0) std::printf("test_cg_device: shared matrices SKIPPED (none at %s)\n", matrix_dir().c_str());
    rc = 77;
  }
  MPI_Finalize();
  return rc;
}
