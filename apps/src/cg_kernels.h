// The device CG's kernels (cg_device.cpp), written once for every device
// (device_launch.h): functors holding device pointers by value.
#pragma once

#include <cmath>
#include <cstdint>

#include "device_launch.h"

namespace stf_apps {
namespace cg {

// Dot products are summed in kChunks partial sums, chunk c taking entries
// c, c + kChunks, ... (neighbouring work items read neighbouring entries, as
// a GPU's memory wants), then in chunk order: the result does not depend on
// how a device splits a kernel.
constexpr int kChunks = 256;

// The CG scalars. Async: in device memory, written by one-item kernels.
// Sync: in host memory, written by the host only after it waited for the
// stream, so no kernel still reads them.
struct Scalars {
  double local, global;  // this rank's dot product and the global sum
  double rr, bb, alpha, beta;
  long long iteration;   // history entries written - 1
  long long breakdown;   // 1 + iteration at which p^T A p <= 0 with r != 0
};

// What a finished dot product feeds.
enum class Step { rr0, bb, pAp, rr };

// The scalar updates, on the host (sync) or in a kernel (async).
STF_APPS_HD inline void apply(Scalars &s, Step step, double g, double *history) {
  switch (step) {
    case Step::rr0:
      s.rr = g;
      s.iteration = 0;
      if (history) history[0] = sqrt(g);
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
      if (history) history[s.iteration] = sqrt(g);
      break;
  }
}

STF_APPS_HD inline double sum_partials(const double *partial) {
  double s = 0.0;
  for (int c = 0; c < kChunks; c++) s += partial[c];
  return s;
}

struct ZeroScalars {
  Scalars *s;
  STF_APPS_HD void operator()(int64_t) const { *s = Scalars{}; }
};

// r = p = b - Ap
struct Residual {
  const double *b, *Ap;
  double *r, *p;
  STF_APPS_HD void operator()(int64_t i) const { r[i] = p[i] = b[i] - Ap[i]; }
};

// Chunk c of a . b (kChunks work items).
struct DotPartial {
  const double *a, *b;
  double *partial;
  int64_t n;
  STF_APPS_HD void operator()(int64_t c) const {
    double s = 0.0;
    for (int64_t i = c; i < n; i += kChunks) s += a[i] * b[i];
    partial[c] = s;
  }
};

// One item: this rank's dot product from the partial sums.
struct SumLocal {
  const double *partial;
  Scalars *s;
  STF_APPS_HD void operator()(int64_t) const { s->local = sum_partials(partial); }
};

// One item: the scalar update from the global sum.
struct Apply {
  Scalars *s;
  Step step;
  double *history;  // device array, or NULL
  STF_APPS_HD void operator()(int64_t) const { apply(*s, step, s->global, history); }
};

// An update's coefficient: known to the host when it launches (sync), or a
// scalar in device memory that earlier work on the stream writes (async).
struct Known {
  double value;
  STF_APPS_HD double operator()() const { return value; }
};
struct OnDevice {
  const double *at;
  STF_APPS_HD double operator()() const { return *at; }
};

// x += alpha p, r -= alpha Ap
template <class C>
struct UpdateXR {
  C alpha;
  const double *p, *Ap;
  double *x, *r;
  STF_APPS_HD void operator()(int64_t i) const {
    const double a = alpha();
    x[i] += a * p[i];
    r[i] -= a * Ap[i];
  }
};

// p = r + beta p
template <class C>
struct UpdateP {
  C beta;
  const double *r;
  double *p;
  STF_APPS_HD void operator()(int64_t i) const { p[i] = r[i] + beta() * p[i]; }
};

}  // namespace cg
}  // namespace stf_apps
