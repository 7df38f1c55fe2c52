// stf_create_from_matching_indices: owners of arbitrary 64-bit ids through a
// distributed directory. Id g has its directory entry on rank hash(g) % size;
// owners send their ids there and needers their queries, both over
// migration SFs (stf_create_migration: the library's own discovery, so no
// rank learns more than its own peers), and the answers come back by a
// reduce over the query SF.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "algebra/algebra.h"
#include "core/error.h"

namespace stf {
namespace {

// Spreads consecutive ids over all ranks (splitmix64's finaliser).
int home_of(stf_gint id, int size) {
  std::uint64_t x = static_cast<std::uint64_t>(id) + 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return static_cast<int>((x ^ (x >> 31)) % static_cast<std::uint64_t>(size));
}

// ids[i] travel to rank home_of(ids[i]); *arrived gets them in arrival order.
int send_home(MPI_Comm comm, int size, stf_int n, const stf_gint *ids, stf_sf *mig, std::vector<stf_gint> *arrived) {
  std::vector<int> home(n);
  for (stf_int i = 0; i < n; i++) home[i] = home_of(ids[i], size);
  stf_int narrived = 0;
  STF_CHECK(stf_create_migration(comm, n, home.data(), mig, &narrived));
  arrived->resize(narrived);
  return stf_bcast(*mig, MPI_INT64_T, ids, arrived->data(), MPI_REPLACE);
}

struct Entry {
  stf_gint id;
  stf_node owner;
  bool operator<(const Entry &o) const { return id < o.id; }
};

// This rank's part of the directory: the ids that arrived over the entries
// SF, each with its owner (the root the arrival reads: source rank, index).
// *dup: the smallest id listed twice (max if none).
int directory(stf_sf entries, const std::vector<stf_gint> &ids, std::vector<Entry> *dir, stf_gint *dup) {
  const stf_int *ilocal = nullptr;
  const stf_node *from = nullptr;
  stf_int n = 0;
  STF_CHECK(stf_get_graph(entries, nullptr, &n, &ilocal, &from));
  for (stf_int i = 0; i < n; i++) dir->push_back({ids[ilocal ? ilocal[i] : i], from[i]});
  std::sort(dir->begin(), dir->end());
  *dup = std::numeric_limits<stf_gint>::max();
  for (std::size_t k = 1; k < dir->size(); k++)
    if ((*dir)[k].id == (*dir)[k - 1].id) *dup = std::min(*dup, (*dir)[k].id);
  return STF_SUCCESS;
}

int check_args(MPI_Comm comm, stf_int nowned, const stf_gint *owned, stf_int nneeded, const stf_gint *needed,
               bool out_ok, const char *what) {
  if (comm == MPI_COMM_NULL) return set_error(STF_ERR_ARG, "%s: communicator is MPI_COMM_NULL", what);
  int rc = STF_SUCCESS;
  if (!out_ok) rc = set_error(STF_ERR_NULL, "%s: output pointer is NULL", what);
  else if (nowned < 0 || nneeded < 0)
    rc = set_error(STF_ERR_ARG, "%s: negative count (nowned = %d, nneeded = %d)", what, nowned, nneeded);
  else if ((nowned > 0 && !owned) || (nneeded > 0 && !needed))
    rc = set_error(STF_ERR_NULL, "%s: owned or needed is NULL with a positive count", what);
  return agree(comm, rc);
}

// The answers: owner of each needed id ({-1, -1}: none). The verdict on
// missing and duplicate ids is agreed, named by the smallest such id.
int resolve(MPI_Comm comm, int size, stf_int nneeded, const stf_gint *needed, const std::vector<Entry> &dir,
            stf_gint dup, std::vector<stf_node> *owners, const char *what) {
  stf_sf queries = nullptr;
  std::vector<stf_gint> asked;
  STF_CHECK(send_home(comm, size, nneeded, needed, &queries, &asked));
  std::vector<stf_node> answers(asked.size(), kNoNode);
  for (std::size_t k = 0; k < asked.size(); k++) {
    auto it = std::lower_bound(dir.begin(), dir.end(), Entry{asked[k], kNoNode});
    if (it != dir.end() && it->id == asked[k]) answers[k] = it->owner;
  }
  owners->assign(nneeded, kNoNode);
  int rc = stf_reduce(queries, STF_MPI_NODE, answers.data(), owners->data(), MPI_REPLACE);
  stf_destroy(&queries);
  STF_CHECK(agree(comm, rc));
  stf_gint missing = std::numeric_limits<stf_gint>::max();
  for (stf_int i = 0; i < nneeded; i++)
    if ((*owners)[i].rank < 0) missing = std::min(missing, needed[i]);
  // MIN of the negated flags is -1 when any rank has one.
  stf_gint mine[4] = {-(dup != std::numeric_limits<stf_gint>::max()), dup,
                      -(missing != std::numeric_limits<stf_gint>::max()), missing};
  stf_gint all[4];
  STF_MPI(MPI_Allreduce(mine, all, 4, MPI_INT64_T, MPI_MIN, comm));
  if (all[0]) return set_error(STF_ERR_ARG, "%s: id %lld is owned by more than one rank", what, (long long)all[1]);
  if (all[2]) return set_error(STF_ERR_ARG, "%s: id %lld is needed but owned by no rank", what, (long long)all[3]);
  return STF_SUCCESS;
}

}  // namespace
}  // namespace stf

using namespace stf;

extern "C" int stf_create_from_matching_indices(MPI_Comm comm, stf_int nowned, const stf_gint *owned,
                                                stf_int nneeded, const stf_gint *needed, stf_sf *out) try {
  const char *what = "stf_create_from_matching_indices";
  if (out) *out = nullptr;
  STF_CHECK(check_args(comm, nowned, owned, nneeded, needed, out != nullptr, what));
  int size = 1;
  MPI_Comm_size(comm, &size);
  stf_sf entries = nullptr;
  std::vector<stf_gint> ids;
  std::vector<Entry> dir;
  stf_gint dup = 0;
  int rc = send_home(comm, size, nowned, owned, &entries, &ids);
  if (!rc) rc = directory(entries, ids, &dir, &dup);
  stf_destroy(&entries);
  STF_CHECK(agree(comm, rc));
  std::vector<stf_node> owners;
  STF_CHECK(resolve(comm, size, nneeded, needed, dir, dup, &owners, what));
  Options opts;
  STF_CHECK(default_options(all_option_specs(), &opts));
  return new_sf(comm, opts, nowned, nneeded, nullptr, owners.data(), out);
} STF_API_CATCH
