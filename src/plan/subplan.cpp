#include "plan/subplan.h"

#include "core/error.h"

namespace stf {
namespace {

// Keep the entries whose flag is set, in order; drop peers left without any.
void filter(const Messages &in, const std::vector<char> &flag, Messages *out) {
  for (int k = 0; k < in.count(); k++) {
    stf_int before = out->offset.back();
    for (stf_int j = in.offset[k]; j < in.offset[k + 1]; j++)
      if (flag[j]) out->idx.push_back(in.idx[j]);
    stf_int now = static_cast<stf_int>(out->idx.size());
    if (now > before) {
      out->ranks.push_back(in.ranks[k]);
      out->offset.push_back(now);
    }
  }
}

// Entry j of known's message k and entry j of the matching message on the
// peer are the same edge (the plan's ordering invariant), so flags sent
// message by message arrive aligned with the peer's entries.
int trade(MPI_Comm comm, int tag, const Messages &known, const std::vector<char> &known_flag, const Messages &other,
          std::vector<char> *other_flag) {
  other_flag->assign(other.idx.size(), 0);
  std::vector<MPI_Request> reqs(other.count() + known.count(), MPI_REQUEST_NULL);
  for (int k = 0; k < other.count(); k++)
    STF_MPI(MPI_Irecv(other_flag->data() + other.offset[k], other.size(k), MPI_CHAR, other.ranks[k], tag, comm,
                      &reqs[k]));
  for (int k = 0; k < known.count(); k++)
    STF_MPI(MPI_Isend(known_flag.data() + known.offset[k], known.size(k), MPI_CHAR, known.ranks[k], tag, comm,
                      &reqs[other.count() + k]));
  STF_MPI(MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE));
  return STF_SUCCESS;
}

}  // namespace

int derive_subplan(const Comm &sub_comm, const Graph &parent, const Plan &p, Keep side,
                   const std::vector<char> &keep, Plan *sub, std::vector<char> *kept_leaf) {
  const bool by_root = side == Keep::roots;
  const Messages &known = by_root ? p.root : p.leaf, &other = by_root ? p.leaf : p.root;
  std::vector<char> known_flag(known.idx.size()), other_flag;
  for (std::size_t j = 0; j < known.idx.size(); j++) known_flag[j] = keep[known.idx[j]];
  STF_CHECK(trade(sub_comm.comm, sub_comm.tag(Tag::subplan), known, known_flag, other, &other_flag));
  filter(p.root, by_root ? known_flag : other_flag, &sub->root);
  filter(p.leaf, by_root ? other_flag : known_flag, &sub->leaf);
  for (std::size_t i = 0; i < p.self_leaf_idx.size(); i++)
    if (keep[by_root ? p.self_root_idx[i] : p.self_leaf_idx[i]]) {
      sub->self_root_idx.push_back(p.self_root_idx[i]);
      sub->self_leaf_idx.push_back(p.self_leaf_idx[i]);
    }
  kept_leaf->assign(parent.maxleaf + 1, 0);
  for (stf_int s : sub->leaf.idx) (*kept_leaf)[s] = 1;
  for (stf_int s : sub->self_leaf_idx) (*kept_leaf)[s] = 1;
  return STF_SUCCESS;
}

}  // namespace stf
