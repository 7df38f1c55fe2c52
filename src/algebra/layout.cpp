// Layouts (contiguous ownership ranges in rank order) and the vector-scatter
// SF: each rank names the global indices it needs. Owners are found from the
// ranges, which every rank holds (O(size), like MPI_Allgatherv's counts).
#include <vector>

#include "algebra/algebra.h"
#include "core/error.h"

namespace stf {
namespace {

// Agreed checks; out_ok: the output pointer is usable.
int check_layout_args(MPI_Comm comm, stf_int nowned, stf_int n, const stf_gint *global, bool out_ok,
                      const char *what) {
  if (comm == MPI_COMM_NULL) return set_error(STF_ERR_ARG, "%s: communicator is MPI_COMM_NULL", what);
  int rc = STF_SUCCESS;
  if (!out_ok) rc = set_error(STF_ERR_NULL, "%s: output pointer is NULL", what);
  else if (nowned < 0) rc = set_error(STF_ERR_ARG, "%s: nowned = %d is negative", what, nowned);
  else if (n < 0) rc = set_error(STF_ERR_ARG, "%s: the count of global indices, %d, is negative", what, n);
  else if (n > 0 && !global) rc = set_error(STF_ERR_NULL, "%s: global is NULL but n = %d", what, n);
  return agree(comm, rc);
}

// Collective: owners of global[0..n) in the layout of nowned per rank.
int owners_of(MPI_Comm comm, stf_int nowned, stf_int n, const stf_gint *global, stf_node *owners,
              const char *what) {
  std::vector<long long> start;
  STF_CHECK(agree(comm, layout_starts(comm, nowned, &start)));
  return agree(comm, find_owners(start, n, global, owners, what));
}

}  // namespace
}  // namespace stf

using namespace stf;

extern "C" int stf_layout_find_owners(MPI_Comm comm, stf_int nowned, stf_int n, const stf_gint *global,
                                      stf_node *owners) try {
  const char *what = "stf_layout_find_owners";
  STF_CHECK(check_layout_args(comm, nowned, n, global, owners || n == 0, what));
  return owners_of(comm, nowned, n, global, owners, what);
} STF_API_CATCH

extern "C" int stf_create_from_global_indices(MPI_Comm comm, stf_int nowned, stf_int nneeded, const stf_gint *global,
                                              stf_sf *out) try {
  const char *what = "stf_create_from_global_indices";
  if (out) *out = nullptr;
  STF_CHECK(check_layout_args(comm, nowned, nneeded, global, out != nullptr, what));
  std::vector<stf_node> owners(nneeded);
  STF_CHECK(owners_of(comm, nowned, nneeded, global, owners.data(), what));
  Options opts;
  STF_CHECK(default_options(all_option_specs(), &opts));
  return new_sf(comm, opts, nowned, nneeded, nullptr, owners.data(), out);
} STF_API_CATCH
