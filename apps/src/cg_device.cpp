// CG on device vectors: a synchronous form (the host reads every dot
// product and decides) and CGAsync (dot products, their global sums and the
// scalar updates are work on the library stream; the host only enqueues).
// Both use the same kernels and the same summation order, so their residual
// histories agree.
#include <cmath>
#include <cstring>
#include <vector>

#include "apps_error.h"
#include "cg_kernels.h"
#include "csr.h"
#include "device_launch.h"

namespace {

using namespace stf_apps::cg;
using stf_apps::core;
using stf_apps::fail;

struct Vecs {
  stf_int n;
  const double *b;
  double *x, *r, *p, *Ap;
  double *partial;  // kChunks
  Scalars *s;       // async: in device memory; sync: unused
  double *history;  // async: device array; sync: unused
};

template <class F>
int launch(int64_t n, const F *f) {
  return stf_apps::launch(nullptr, n, f, "CG");
}

// The global sum of a dot product in stream order, in host staging memory
// (stf_apps::HostStage): copied there from the device scalars, summed over
// the ranks by a host function, copied back.
struct GlobalSum {
  double local, global;
  int failed;  // an allreduce failed (reported at the end)
  MPI_Comm comm;
  void operator()() {
    if (MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, comm) != MPI_SUCCESS) {
      failed = 1;
      global = NAN;
    }
  }
};

// Async: a finished dot product's partial sums become this rank's sum, the
// global sum and the scalar update, all enqueued.
int finish_async(const Vecs &v, const SumLocal &sum, GlobalSum *g, const Apply &update) {
  if (int rc = launch(1, &sum)) return rc;
  if (int rc = core(stf_device_memcpy_async(&g->local, &v.s->local, sizeof(double), nullptr), "CG")) return rc;
  if (int rc = stf_apps::launch_host(nullptr, g, "CG")) return rc;
  if (int rc = core(stf_device_memcpy_async(&v.s->global, &g->global, sizeof(double), nullptr), "CG")) return rc;
  return launch(1, &update);
}

// Device work vectors and scalars of one solve, freed after the device is done.
class Workspace {
 public:
  ~Workspace() {
    stf_device_synchronize();
    for (void *p : blocks_) stf_device_free(p);
  }
  template <class T>
  int alloc(std::size_t count, T **out) {
    void *p = nullptr;
    if (int rc = core(stf_device_malloc(count * sizeof(T), &p), "CG: device memory")) return rc;
    blocks_.push_back(p);
    *out = static_cast<T *>(p);
    return STF_SUCCESS;
  }

 private:
  std::vector<void *> blocks_;
};

// Declared after the kernel arguments of a solve: on every way out, the
// device finishes with them before they go.
struct Drain {
  ~Drain() { stf_device_synchronize(); }
};

int check_args(stf_csr A, const double *b, double *x, double rtol, int maxit, stf_cg_result *result) {
  if (!A) return fail(STF_ERR_NULL, "the matrix handle is NULL");
  if (!result) return fail(STF_ERR_NULL, "result is NULL");
  if (!A->dev) return fail(STF_ERR_STATE, "device CG: call stf_csr_to_device first");
  if (A->nlocal > 0 && (!b || !x)) return fail(STF_ERR_NULL, "b or x is NULL");
  if (!(rtol >= 0) || maxit < 0) return fail(STF_ERR_ARG, "need rtol >= 0 and maxit >= 0");
  *result = stf_cg_result{};
  return STF_SUCCESS;
}

int setup(stf_csr A, const double *b, double *x, Workspace &ws, Vecs *v, ZeroScalars *zero) {
  const stf_int n = A->nlocal;
  *v = Vecs{n, b, x, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
  if (int rc = ws.alloc(n, &v->r)) return rc;
  if (int rc = ws.alloc(n, &v->p)) return rc;
  if (int rc = ws.alloc(n, &v->Ap)) return rc;
  if (int rc = ws.alloc(kChunks, &v->partial)) return rc;
  if (!zero) return STF_SUCCESS;
  if (int rc = ws.alloc(1, &v->s)) return rc;
  zero->s = v->s;
  return launch(1, zero);  // a kernel, not a copy: no host wait
}

long long mult_waits(stf_csr A) {
  stf_csr_sync_counts c;
  stf_csr_get_sync_counts(A, &c);
  return c.waits_in_begin + c.waits_in_end;
}

// Synchronous global dot product: the host waits for the local part (one
// copy back) and for the allreduce.
int dot_sync(stf_csr A, Vecs &v, const DotPartial &d, double *out, long long *waits) {
  if (int rc = launch(kChunks, &d)) return rc;
  double partial[kChunks];
  if (int rc = core(stf_device_memcpy(partial, v.partial, sizeof partial), "CG: reading a dot product")) return rc;
  const double local = sum_partials(partial);
  if (MPI_Allreduce(&local, out, 1, MPI_DOUBLE, MPI_SUM, A->comm) != MPI_SUCCESS)
    return fail(STF_ERR_MPI, "MPI_Allreduce failed in CG");
  *waits += 2;
  return STF_SUCCESS;
}

}  // namespace

extern "C" int stf_cg_solve_device(stf_csr A, const double *b, double *x, double rtol, int maxit,
                                   stf_csr_mult_variant variant, double *history, stf_cg_result *result) try {
  if (int rc = check_args(A, b, x, rtol, maxit, result)) return rc;
  const long long mult0 = mult_waits(A);
  Vecs v;  // kernel arguments: outlive the workspace's final wait
  Scalars s{};
  Workspace ws;
  if (int rc = setup(A, b, x, ws, &v, nullptr)) return rc;
  long long waits = 0, loop_waits = 0;
  const DotPartial rr_dot{v.r, v.r, v.partial, v.n}, bb_dot{b, b, v.partial, v.n}, pAp_dot{v.p, v.Ap, v.partial, v.n};
  const Residual residual{b, v.Ap, v.r, v.p};
  // Their coefficients change per iteration: the host waited for the stream
  // (dot_sync) since each one's last launch, so no kernel reads them then.
  UpdateXR<Known> update_xr{{0.0}, v.p, v.Ap, x, v.r};
  UpdateP<Known> update_p{{0.0}, v.r, v.p};
  Drain drain;
  if (int rc = stf_csr_mult_device(A, x, v.Ap, variant)) return rc;
  if (int rc = launch(v.n, &residual)) return rc;
  double g = 0;
  if (int rc = dot_sync(A, v, rr_dot, &g, &waits)) return rc;
  apply(s, Step::rr0, g, history);
  if (int rc = dot_sync(A, v, bb_dot, &g, &waits)) return rc;
  apply(s, Step::bb, g, nullptr);
  const double target = rtol * std::sqrt(s.bb);
  int it = 0;
  while (std::sqrt(s.rr) > target && it < maxit) {
    if (int rc = stf_csr_mult_device(A, v.p, v.Ap, variant)) return rc;
    if (int rc = dot_sync(A, v, pAp_dot, &g, &loop_waits)) return rc;
    apply(s, Step::pAp, g, nullptr);
    if (s.breakdown) return fail(STF_ERR_ARG, "p^T A p = %g <= 0 at iteration %d: the matrix is not SPD", g, it);
    update_xr.alpha.value = s.alpha;
    if (int rc = launch(v.n, &update_xr)) return rc;
    if (int rc = dot_sync(A, v, rr_dot, &g, &loop_waits)) return rc;
    apply(s, Step::rr, g, history);
    update_p.beta.value = s.beta;
    if (int rc = launch(v.n, &update_p)) return rc;
    it++;
  }
  if (int rc = core(stf_device_synchronize(), "CG")) return rc;  // x ready on return
  waits++;
  result->iterations = it;
  result->residual_norm = std::sqrt(s.rr);
  result->converged = std::sqrt(s.rr) <= target;
  result->mult_syncs = mult_waits(A) - mult0;
  result->loop_syncs = loop_waits;
  result->host_syncs = waits + loop_waits + result->mult_syncs;
  return STF_SUCCESS;
} STF_APPS_CATCH

extern "C" int stf_cg_solve_async(stf_csr A, const double *b, double *x, double rtol, int iterations,
                                  stf_csr_mult_variant variant, double *history, stf_cg_result *result) try {
  if (int rc = check_args(A, b, x, rtol, iterations, result)) return rc;
  const char *device = nullptr;
  stf_device_get_name(&device);
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  if (std::strcmp(device, "host") != 0 && level < MPI_THREAD_MULTIPLE)
    return fail(STF_ERR_UNSUPPORTED,
                "stf_cg_solve_async on device '%s' sums dot products from the device's threads: initialise MPI "
                "with MPI_THREAD_MULTIPLE",
                device);
  const long long mult0 = mult_waits(A);
  long long waits = 0;
  Scalars s{};
  stf_apps::HostStage stage;  // the global sums' staging memory: outlives the workspace's wait
  if (int rc = stage.alloc(sizeof(GlobalSum), "CG")) return rc;
  GlobalSum *sum = static_cast<GlobalSum *>(stage.data());
  sum->comm = A->comm;
  {
    Vecs v;
    ZeroScalars zero{nullptr};
    Workspace ws;  // its destructor waits for the device before freeing
    if (int rc = setup(A, b, x, ws, &v, &zero)) return rc;
    if (int rc = ws.alloc(static_cast<std::size_t>(iterations) + 1, &v.history)) return rc;
    const DotPartial rr_dot{v.r, v.r, v.partial, v.n}, bb_dot{b, b, v.partial, v.n},
        pAp_dot{v.p, v.Ap, v.partial, v.n};
    const Residual residual{b, v.Ap, v.r, v.p};
    const SumLocal local{v.partial, v.s};
    const Apply rr0{v.s, Step::rr0, v.history}, bb{v.s, Step::bb, nullptr}, pAp{v.s, Step::pAp, nullptr},
        rr{v.s, Step::rr, v.history};
    const UpdateXR<OnDevice> update_xr{{&v.s->alpha}, v.p, v.Ap, x, v.r};
    const UpdateP<OnDevice> update_p{{&v.s->beta}, v.r, v.p};
    Drain drain;
    // Everything below only enqueues; no host wait until the loop is over.
    if (int rc = stf_csr_mult_device(A, x, v.Ap, variant)) return rc;
    if (int rc = launch(v.n, &residual)) return rc;
    if (int rc = launch(kChunks, &rr_dot)) return rc;
    if (int rc = finish_async(v, local, sum, rr0)) return rc;
    if (int rc = launch(kChunks, &bb_dot)) return rc;
    if (int rc = finish_async(v, local, sum, bb)) return rc;
    for (int it = 0; it < iterations; it++) {
      if (int rc = stf_csr_mult_device(A, v.p, v.Ap, variant)) return rc;
      if (int rc = launch(kChunks, &pAp_dot)) return rc;
      if (int rc = finish_async(v, local, sum, pAp)) return rc;
      if (int rc = launch(v.n, &update_xr)) return rc;
      if (int rc = launch(kChunks, &rr_dot)) return rc;
      if (int rc = finish_async(v, local, sum, rr)) return rc;
      if (int rc = launch(v.n, &update_p)) return rc;
    }
    // After the loop: the scalars and the history come back (each copy
    // waits for the stream), which also makes x ready.
    if (int rc = core(stf_device_memcpy(&s, v.s, sizeof s), "CG")) return rc;
    if (history)
      if (int rc = core(stf_device_memcpy(history, v.history, (iterations + 1) * sizeof(double)), "CG")) return rc;
    waits += history ? 2 : 1;
  }
  if (sum->failed) return fail(STF_ERR_MPI, "MPI_Allreduce failed in CGAsync");
  if (s.breakdown)
    return fail(STF_ERR_ARG, "p^T A p <= 0 at iteration %lld: the matrix is not SPD", s.breakdown - 1);
  result->iterations = iterations;
  result->residual_norm = std::sqrt(s.rr);
  result->converged = std::sqrt(s.rr) <= rtol * std::sqrt(s.bb);
  result->mult_syncs = mult_waits(A) - mult0;
  result->loop_syncs = 0;
  result->host_syncs = waits + result->mult_syncs;
  return STF_SUCCESS;
} STF_APPS_CATCH
