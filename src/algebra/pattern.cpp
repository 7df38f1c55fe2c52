// SFs for collective patterns. Every rank can compute both ends of every
// edge from the layout, so the plan is written down directly: no discovery.
#include <climits>
#include <memory>
#include <vector>

#include "algebra/algebra.h"
#include "core/error.h"
#include "plan/plan.h"

namespace stf {
namespace {

// The edges between a leaf rank q and a root rank p form one block: count
// leaves from slot leaf_start on q read roots from root_start on p.
struct Block {
  stf_int count, leaf_start, root_start;
};

struct Pattern {
  stf_pattern kind;
  std::vector<long long> start;  // ALLGATHER, GATHER: the root layout
  stf_int b = 0;                 // ALLTOALL: block size

  Block block(int q, int p) const {
    switch (kind) {
      case STF_PATTERN_ALLTOALL: return {b, p * b, q * b};
      case STF_PATTERN_GATHER:
        if (q != 0) return {0, 0, 0};
        [[fallthrough]];
      case STF_PATTERN_ALLGATHER:
        break;
    }
    return {static_cast<stf_int>(start[p + 1] - start[p]), static_cast<stf_int>(start[p]), 0};
  }
};

void add_message(Messages *m, int peer, stf_int first, stf_int count) {
  if (count == 0) return;
  m->ranks.push_back(peer);
  for (stf_int k = 0; k < count; k++) m->idx.push_back(first + k);
  m->offset.push_back(static_cast<stf_int>(m->idx.size()));
}

// Leaves are listed by root rank, which is also ascending slot order.
int build(MPI_Comm comm, const Pattern &pat, stf_int nroots, stf_sf *out) {
  stf_sf sf = nullptr;
  STF_CHECK(stf_create(comm, &sf));
  const int me = sf->rank, size = sf->size;
  auto plan = std::make_unique<Plan>();
  std::vector<stf_int> ilocal;
  std::vector<stf_node> iremote;
  for (int p = 0; p < size; p++) {
    Block in = pat.block(me, p), outgoing = pat.block(p, me);
    for (stf_int k = 0; k < in.count; k++) {
      ilocal.push_back(in.leaf_start + k);
      iremote.push_back({p, in.root_start + k});
    }
    if (p == me) {
      for (stf_int k = 0; k < in.count; k++) {
        plan->self_leaf_idx.push_back(in.leaf_start + k);
        plan->self_root_idx.push_back(in.root_start + k);
      }
      continue;
    }
    add_message(&plan->leaf, p, in.leaf_start, in.count);
    add_message(&plan->root, p, outgoing.root_start, outgoing.count);
  }
  int rc = stf_set_graph(sf, nroots, static_cast<stf_int>(iremote.size()), ilocal.data(), STF_COPY_VALUES,
                         iremote.data(), STF_COPY_VALUES);
  if (!rc) rc = finish_plan(*sf, *sf, sf->opts, plan.get());
  if (!rc) rc = install_plan(sf, std::move(plan));
  if (rc) {
    stf_destroy(&sf);
    return rc;
  }
  *out = sf;
  return STF_SUCCESS;
}

}  // namespace
}  // namespace stf

using namespace stf;

extern "C" int stf_create_from_pattern(MPI_Comm comm, stf_pattern pattern, stf_int nroots, stf_sf *out) try {
  const char *what = "stf_create_from_pattern";
  if (!out) return set_error(STF_ERR_NULL, "%s: output pointer is NULL", what);
  *out = nullptr;
  if (comm == MPI_COMM_NULL) return set_error(STF_ERR_ARG, "%s: communicator is MPI_COMM_NULL", what);
  int rc = STF_SUCCESS, size = 1;
  MPI_Comm_size(comm, &size);
  if (pattern != STF_PATTERN_ALLGATHER && pattern != STF_PATTERN_GATHER && pattern != STF_PATTERN_ALLTOALL)
    rc = set_error(STF_ERR_ARG, "%s: unknown pattern %d", what, static_cast<int>(pattern));
  else if (nroots < 0)
    rc = set_error(STF_ERR_ARG, "%s: nroots = %d is negative", what, nroots);
  else if (pattern == STF_PATTERN_ALLTOALL && static_cast<long long>(nroots) * size > INT_MAX)
    rc = set_error(STF_ERR_ARG, "%s: alltoall block %d times %d ranks does not fit in stf_int", what, nroots, size);
  STF_CHECK(agree(comm, rc));
  Pattern pat{pattern, {}, nroots};
  if (pattern == STF_PATTERN_ALLTOALL) {
    int range[2] = {-nroots, nroots};  // every rank must give the same block size
    STF_MPI(MPI_Allreduce(MPI_IN_PLACE, range, 2, MPI_INT, MPI_MAX, comm));
    if (-range[0] != range[1])
      return set_error(STF_ERR_ARG, "%s: alltoall block sizes differ between ranks (%d to %d)", what, -range[0],
                       range[1]);
    return build(comm, pat, nroots * size, out);
  }
  STF_CHECK(agree(comm, layout_starts(comm, nroots, &pat.start)));
  if (pat.start.back() > INT_MAX)  // the same on every rank: agreed
    return set_error(STF_ERR_ARG, "%s: %lld leaves in all, more than stf_int can number", what, pat.start.back());
  return build(comm, pat, nroots, out);
} STF_API_CATCH
