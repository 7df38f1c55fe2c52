// Mesh redistribution: test point sets, recursive coordinate bisection, and
// moving points with the migration SF.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "apps_error.h"

namespace stf_apps {
namespace {

// Coordinates of label g: a scrambled but fixed point of the unit cube.
double coord_of(int64_t g, int axis) {
  uint64_t x = static_cast<uint64_t>(g) * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(axis + 1) * 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 31;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 29;
  return static_cast<double>(x >> 11) / 9007199254740992.0;
}

int allocate(stf_points *p, stf_int n, int dim) {
  p->n = n;
  p->dim = dim;
  p->coords = static_cast<double *>(std::malloc(sizeof(double) * (static_cast<std::size_t>(n) * dim + 1)));
  p->labels = static_cast<int64_t *>(std::malloc(sizeof(int64_t) * (n + 1)));
  if (p->coords && p->labels) return STF_SUCCESS;
  stf_points_free(p);
  return fail(STF_ERR_MEMORY, "cannot allocate %d points", n);
}

int mpi(int rc, const char *what) { return rc == MPI_SUCCESS ? STF_SUCCESS : fail(STF_ERR_MPI, "%s failed", what); }

// One bisection level for every group at once: the groups are rank ranges
// [lo, hi); a point in a group of more than one rank moves to its left or
// right half. Collective arrays are per group, O(communicator size).
int bisect_level(MPI_Comm comm, const stf_points &p, std::vector<int> &lo, std::vector<int> &hi, int size) {
  const int dim = p.dim;
  std::vector<double> box(2 * dim * size);  // per group: -min, max per axis (one MAX allreduce)
  std::fill(box.begin(), box.end(), -HUGE_VAL);
  std::vector<double> count(size, 0.0);
  for (stf_int i = 0; i < p.n; i++) {
    int g = lo[i];
    count[g] += 1;
    for (int a = 0; a < dim; a++) {
      double c = p.coords[static_cast<std::size_t>(i) * dim + a];
      box[2 * dim * g + a] = std::max(box[2 * dim * g + a], -c);
      box[2 * dim * g + dim + a] = std::max(box[2 * dim * g + dim + a], c);
    }
  }
  if (int rc = mpi(MPI_Allreduce(MPI_IN_PLACE, box.data(), 2 * dim * size, MPI_DOUBLE, MPI_MAX, comm), "allreduce"))
    return rc;
  if (int rc = mpi(MPI_Allreduce(MPI_IN_PLACE, count.data(), size, MPI_DOUBLE, MPI_SUM, comm), "allreduce"))
    return rc;
  // Group g is identified by its first rank; hi is the same for all its points.
  std::vector<int> axis(size, 0), group_hi(size, -1);
  std::vector<double> left(size), right(size), want(size);
  for (stf_int i = 0; i < p.n; i++) group_hi[lo[i]] = hi[i];
  if (int rc = mpi(MPI_Allreduce(MPI_IN_PLACE, group_hi.data(), size, MPI_INT, MPI_MAX, comm), "allreduce")) return rc;
  for (int g = 0; g < size; g++) {
    if (group_hi[g] - g < 2) continue;
    double best = -1;
    for (int a = 0; a < dim; a++) {
      double extent = box[2 * dim * g + dim + a] + box[2 * dim * g + a];
      if (extent > best) best = extent, axis[g] = a;
    }
    left[g] = -box[2 * dim * g + axis[g]];
    right[g] = box[2 * dim * g + dim + axis[g]];
    const int nranks = group_hi[g] - g, nleft = nranks / 2;
    want[g] = count[g] * nleft / nranks;
  }
  // Bisection on the cut value: 50 halvings of the bounding box.
  std::vector<double> below(size);
  for (int step = 0; step < 50; step++) {
    std::fill(below.begin(), below.end(), 0.0);
    for (stf_int i = 0; i < p.n; i++) {
      int g = lo[i];
      if (hi[i] - g < 2) continue;
      double mid = 0.5 * (left[g] + right[g]);
      below[g] += p.coords[static_cast<std::size_t>(i) * dim + axis[g]] < mid;
    }
    if (int rc = mpi(MPI_Allreduce(MPI_IN_PLACE, below.data(), size, MPI_DOUBLE, MPI_SUM, comm), "allreduce"))
      return rc;
    for (int g = 0; g < size; g++) {
      if (group_hi[g] - g < 2) continue;
      double mid = 0.5 * (left[g] + right[g]);
      (below[g] < want[g] ? left[g] : right[g]) = mid;
    }
  }
  for (stf_int i = 0; i < p.n; i++) {
    int g = lo[i];
    if (hi[i] - g < 2) continue;
    int split = g + (hi[i] - g) / 2;
    if (p.coords[static_cast<std::size_t>(i) * dim + axis[g]] < right[g]) hi[i] = split;
    else lo[i] = split;
  }
  return STF_SUCCESS;
}

}  // namespace
}  // namespace stf_apps

using stf_apps::fail;

extern "C" void stf_points_free(stf_points *p) {
  if (!p) return;
  std::free(p->coords);
  std::free(p->labels);
  *p = stf_points{};
}

extern "C" int stf_points_create_test(MPI_Comm comm, int64_t nglobal, int dim, stf_point_dist dist, unsigned seed,
                                      stf_points *points) try {
  if (!points) return fail(STF_ERR_NULL, "output points are NULL");
  *points = stf_points{};
  if (nglobal < 0 || nglobal > 0x7fffffff || dim < 1 || dim > 3)
    return fail(STF_ERR_ARG, "need 0 <= nglobal < 2^31 and 1 <= dim <= 3");
  if (dist != STF_DIST_SEQ && dist != STF_DIST_CHUNKS && dist != STF_DIST_RAND)
    return fail(STF_ERR_ARG, "unknown distribution %d", dist);
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::vector<int64_t> mine;
  std::mt19937_64 rng(seed);
  for (int64_t g = 0; g < nglobal; g++) {
    int owner = dist == STF_DIST_SEQ ? 0
                : dist == STF_DIST_CHUNKS ? static_cast<int>(g * size / nglobal)
                                          : static_cast<int>(rng() % static_cast<uint64_t>(size));
    if (owner == rank) mine.push_back(g);
  }
  if (int rc = stf_apps::allocate(points, static_cast<stf_int>(mine.size()), dim)) return rc;
  for (stf_int i = 0; i < points->n; i++) {
    points->labels[i] = mine[i];
    for (int a = 0; a < dim; a++) points->coords[static_cast<std::size_t>(i) * dim + a] = stf_apps::coord_of(mine[i], a);
  }
  return STF_SUCCESS;
} STF_APPS_CATCH

extern "C" int stf_rcb_partition(MPI_Comm comm, const stf_points *points, int *target) try {
  if (!points || (points->n > 0 && (!target || !points->coords)))
    return fail(STF_ERR_NULL, "points, coordinates or target is NULL");
  int size, dim = points->dim;
  MPI_Comm_size(comm, &size);
  if (int rc = stf_apps::mpi(MPI_Allreduce(MPI_IN_PLACE, &dim, 1, MPI_INT, MPI_MAX, comm), "allreduce")) return rc;
  if (dim < 1 || dim > 3 || (points->n > 0 && points->dim != dim))
    return fail(STF_ERR_ARG, "points need the same dim (1..3) on every rank");
  stf_points p = *points;
  p.dim = dim;
  std::vector<int> lo(p.n, 0), hi(p.n, size);
  for (int levels = 0; (1 << levels) < size; levels++)
    if (int rc = stf_apps::bisect_level(comm, p, lo, hi, size)) return rc;
  std::copy(lo.begin(), lo.end(), target);
  return STF_SUCCESS;
} STF_APPS_CATCH

extern "C" int stf_points_migrate(MPI_Comm comm, const stf_points *in, const int *target, stf_points *out,
                                  stf_sf *sfout) try {
  if (!in || !out) return fail(STF_ERR_NULL, "input or output points are NULL");
  *out = stf_points{};
  if (sfout) *sfout = nullptr;
  int dim = in->dim;
  if (int rc = stf_apps::mpi(MPI_Allreduce(MPI_IN_PLACE, &dim, 1, MPI_INT, MPI_MAX, comm), "allreduce")) return rc;
  stf_sf sf = nullptr;
  stf_int nnew = 0;
  if (int rc = stf_create_migration(comm, in->n, target, &sf, &nnew))
    return fail(rc, "migration SF: %s", stf_last_error_message());
  int rc = stf_apps::allocate(out, nnew, dim);
  MPI_Datatype point = MPI_DATATYPE_NULL;
  if (!rc && MPI_Type_contiguous(dim, MPI_DOUBLE, &point) == MPI_SUCCESS && MPI_Type_commit(&point) == MPI_SUCCESS) {
    int r1 = stf_bcast(sf, point, in->coords, out->coords, MPI_REPLACE);
    int r2 = r1 ? r1 : stf_bcast(sf, MPI_INT64_T, in->labels, out->labels, MPI_REPLACE);
    if (r2) rc = fail(r2, "moving points: %s", stf_last_error_message());
  } else if (!rc) {
    rc = fail(STF_ERR_MPI, "cannot create the point datatype");
  }
  if (point != MPI_DATATYPE_NULL) MPI_Type_free(&point);
  if (!rc && sfout) *sfout = sf;
  else stf_destroy(&sf);
  if (rc) stf_points_free(out);
  return rc;
} STF_APPS_CATCH
