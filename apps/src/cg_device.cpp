// CG on device vectors: a synchronous form (the host reads every dot
// product and decides) and CGAsync (dot products, their global sums and the
// scalar updates are work on the library stream; the host only enqueues).
// Both use the same kernels and the same summation order, so their residual
// histories agree.
#include <cmath>
#include <cstring>
#include <vector>

#include "apps_error.h"
#include "csr.h"

namespace {

using stf_apps::core;
using stf_apps::fail;

// Dot products are summed in kChunks fixed chunks, then in chunk order:
// the result does not depend on how the device splits a kernel.
constexpr int kChunks = 16;

// The CG scalars. Async: in device memory, written by one-item kernels.
// Sync: in host memory, written by the host only after it waited for the
// stream, so no kernel still reads them.
struct Scalars {
  double local, global;  // this rank's dot product and the global sum
  double rr, bb, alpha, beta;
  long long iteration;   // history entries written - 1
  long long breakdown;   // 1 + iteration at which p^T A p <= 0 with r != 0
  long long mpi_failed;  // an allreduce in a kernel failed (reported at the end)
};

struct Vecs {
  stf_int n;
  const double *b;
  double *x, *r, *p, *Ap;
  double *partial;  // kChunks
  Scalars *s;
  double *history;  // async: device array; sync: unused
};

struct Dot {
  const Vecs *v;
  const double *a, *b;
};

// What a finished dot product feeds.
enum class Step { rr0, bb, pAp, rr };

struct Finish {
  const Vecs *v;
  Step step;
  MPI_Comm comm;
};

void k_zero_scalars(int64_t, int64_t, void *ctx) { *static_cast<const Vecs *>(ctx)->s = Scalars{}; }

void k_residual(int64_t begin, int64_t end, void *ctx) {
  const Vecs &v = *static_cast<const Vecs *>(ctx);
  for (int64_t i = begin; i < end; i++) v.r[i] = v.p[i] = v.b[i] - v.Ap[i];
}

void k_dot_partial(int64_t begin, int64_t end, void *ctx) {
  const Dot &d = *static_cast<const Dot *>(ctx);
  const int64_t n = d.v->n;
  for (int64_t c = begin; c < end; c++) {
    double s = 0.0;
    for (int64_t i = n * c / kChunks; i < n * (c + 1) / kChunks; i++) s += d.a[i] * d.b[i];
    d.v->partial[c] = s;
  }
}

double sum_partials(const double *partial) {
  double s = 0.0;
  for (int c = 0; c < kChunks; c++) s += partial[c];
  return s;
}

// The scalar updates, on the host (sync) or in a kernel (async).
void apply(Scalars &s, Step step, double g, double *history) {
  switch (step) {
    case Step::rr0:
      s.rr = g;
      s.iteration = 0;
      if (history) history[0] = std::sqrt(g);
      break;
    case Step::bb:
      s.bb = g;
      break;
    case Step::pAp:
      if (g > 0) s.alpha = s.rr / g;
      else {
        s.alpha = 0.0;  // r == 0 already: stay; otherwise remember the breakdown
        if (s.rr != 0 && !s.breakdown) s.breakdown = 1 + s.iteration;
      }
      break;
    case Step::rr:
      s.beta = s.rr != 0 ? g / s.rr : 0.0;
      s.rr = g;
      s.iteration++;
      if (history) history[s.iteration] = std::sqrt(g);
      break;
  }
}

// One item: this rank's sum, the global sum (MPI on device-resident
// scalars, in stream order), the scalar update.
void k_finish(int64_t, int64_t, void *ctx) {
  const Finish &f = *static_cast<const Finish *>(ctx);
  Scalars &s = *f.v->s;
  s.local = sum_partials(f.v->partial);
  if (MPI_Allreduce(&s.local, &s.global, 1, MPI_DOUBLE, MPI_SUM, f.comm) != MPI_SUCCESS) {
    s.mpi_failed = 1;
    s.global = NAN;
  }
  apply(s, f.step, s.global, f.v->history);
}

void k_update_xr(int64_t begin, int64_t end, void *ctx) {
  const Vecs &v = *static_cast<const Vecs *>(ctx);
  const double alpha = v.s->alpha;
  for (int64_t i = begin; i < end; i++) {
    v.x[i] += alpha * v.p[i];
    v.r[i] -= alpha * v.Ap[i];
  }
}

void k_update_p(int64_t begin, int64_t end, void *ctx) {
  const Vecs &v = *static_cast<const Vecs *>(ctx);
  const double beta = v.s->beta;
  for (int64_t i = begin; i < end; i++) v.p[i] = v.r[i] + beta * v.p[i];
}

int launch(int64_t n, stf_kernel_fn fn, const void *ctx) {
  return core(stf_device_launch(nullptr, n, fn, const_cast<void *>(ctx)), "CG: launch");
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

int setup(stf_csr A, const double *b, double *x, Workspace &ws, Vecs *v, bool scalars_on_device) {
  const stf_int n = A->nlocal;
  *v = Vecs{n, b, x, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
  if (int rc = ws.alloc(n, &v->r)) return rc;
  if (int rc = ws.alloc(n, &v->p)) return rc;
  if (int rc = ws.alloc(n, &v->Ap)) return rc;
  if (int rc = ws.alloc(kChunks, &v->partial)) return rc;
  if (!scalars_on_device) return STF_SUCCESS;
  if (int rc = ws.alloc(1, &v->s)) return rc;
  return launch(1, k_zero_scalars, v);  // a kernel, not a copy: no host wait
}

long long mult_waits(stf_csr A) {
  stf_csr_sync_counts c;
  stf_csr_get_sync_counts(A, &c);
  return c.waits_in_begin + c.waits_in_end;
}

// Synchronous global dot product: the host waits for the local part (one
// copy back) and for the allreduce.
int dot_sync(stf_csr A, Vecs &v, const Dot &d, double *out, long long *waits) {
  if (int rc = launch(kChunks, k_dot_partial, &d)) return rc;
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
  Vecs v;        // kernel arguments: outlive the workspace's final wait
  Scalars s{};
  Workspace ws;
  if (int rc = setup(A, b, x, ws, &v, false)) return rc;
  v.s = &s;
  long long waits = 0, loop_waits = 0;
  const Dot rr_dot{&v, v.r, v.r}, bb_dot{&v, b, b}, pAp_dot{&v, v.p, v.Ap};
  Drain drain;
  if (int rc = stf_csr_mult_device(A, x, v.Ap, variant)) return rc;
  if (int rc = launch(v.n, k_residual, &v)) return rc;
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
    if (int rc = launch(v.n, k_update_xr, &v)) return rc;
    if (int rc = dot_sync(A, v, rr_dot, &g, &loop_waits)) return rc;
    apply(s, Step::rr, g, history);
    if (int rc = launch(v.n, k_update_p, &v)) return rc;
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
  {
    Vecs v;
    Workspace ws;  // its destructor waits for the device before freeing
    if (int rc = setup(A, b, x, ws, &v, true)) return rc;
    if (int rc = ws.alloc(static_cast<std::size_t>(iterations) + 1, &v.history)) return rc;
    const Dot rr_dot{&v, v.r, v.r}, bb_dot{&v, b, b}, pAp_dot{&v, v.p, v.Ap};
    const Finish rr0{&v, Step::rr0, A->comm}, bb{&v, Step::bb, A->comm}, pAp{&v, Step::pAp, A->comm},
        rr{&v, Step::rr, A->comm};
    Drain drain;
    // Everything below only enqueues; no host wait until the loop is over.
    if (int rc = stf_csr_mult_device(A, x, v.Ap, variant)) return rc;
    if (int rc = launch(v.n, k_residual, &v)) return rc;
    if (int rc = launch(kChunks, k_dot_partial, &rr_dot)) return rc;
    if (int rc = launch(1, k_finish, &rr0)) return rc;
    if (int rc = launch(kChunks, k_dot_partial, &bb_dot)) return rc;
    if (int rc = launch(1, k_finish, &bb)) return rc;
    for (int it = 0; it < iterations; it++) {
      if (int rc = stf_csr_mult_device(A, v.p, v.Ap, variant)) return rc;
      if (int rc = launch(kChunks, k_dot_partial, &pAp_dot)) return rc;
      if (int rc = launch(1, k_finish, &pAp)) return rc;
      if (int rc = launch(v.n, k_update_xr, &v)) return rc;
      if (int rc = launch(kChunks, k_dot_partial, &rr_dot)) return rc;
      if (int rc = launch(1, k_finish, &rr)) return rc;
      if (int rc = launch(v.n, k_update_p, &v)) return rc;
    }
    // After the loop: the scalars and the history come back (each copy
    // waits for the stream), which also makes x ready.
    if (int rc = core(stf_device_memcpy(&s, v.s, sizeof s), "CG")) return rc;
    if (history)
      if (int rc = core(stf_device_memcpy(history, v.history, (iterations + 1) * sizeof(double)), "CG")) return rc;
    waits += history ? 2 : 1;
  }
  if (s.mpi_failed) return fail(STF_ERR_MPI, "MPI_Allreduce failed in CGAsync");
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
