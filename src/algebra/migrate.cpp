// Migration: every point names its new rank. Each rank's arrivals are the
// multi-roots of one root per rank that all points point at: the multi-SF
// hands out its slots in (leaf rank, leaf slot) order, which is the promised
// (source rank, source index) numbering. Its inverse moves the points.
#include <vector>

#include "algebra/algebra.h"
#include "core/error.h"

using namespace stf;

extern "C" int stf_create_migration(MPI_Comm comm, stf_int npoints, const int *target, stf_sf *out, stf_int *nnew) try {
  const char *what = "stf_create_migration";
  if (!out) return set_error(STF_ERR_NULL, "%s: output pointer is NULL", what);
  *out = nullptr;
  if (comm == MPI_COMM_NULL) return set_error(STF_ERR_ARG, "%s: communicator is MPI_COMM_NULL", what);
  int size = 1, rank = 0, rc = STF_SUCCESS;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  if (npoints < 0) rc = set_error(STF_ERR_ARG, "%s: npoints = %d is negative", what, npoints);
  else if (npoints > 0 && !target) rc = set_error(STF_ERR_NULL, "%s: target is NULL but npoints = %d", what, npoints);
  for (stf_int i = 0; i < npoints && !rc; i++)
    if (target[i] < 0 || target[i] >= size)
      rc = set_error(STF_ERR_ARG, "%s: point %d on rank %d targets rank %d, outside the communicator of size %d",
                     what, i, rank, target[i], size);
  STF_CHECK(agree(comm, rc));

  std::vector<stf_node> to(npoints);
  for (stf_int i = 0; i < npoints; i++) to[i] = {target[i], 0};
  Options opts;
  STF_CHECK(default_options(all_option_specs(), &opts));
  stf_sf arrivals = nullptr, multi = nullptr;
  STF_CHECK(new_sf(comm, opts, 1, npoints, nullptr, to.data(), &arrivals));
  rc = stf_get_multi_sf(arrivals, &multi);  // owned by arrivals
  if (!rc) rc = stf_create_inverse(multi, out);
  if (!rc && nnew) *nnew = multi->nroots;
  stf_destroy(&arrivals);
  return rc;
} STF_API_CATCH
