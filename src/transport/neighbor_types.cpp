#include "transport/neighbor_types.h"

#include <algorithm>

#include "core/error.h"

namespace stf {

void NeighborTypes::release() {
  for (MPI_Datatype &t : types_)
    if (t != MPI_BYTE) MPI_Type_free(&t);
  types_.clear();
  key_ = -1;
}

int NeighborTypes::describe(const Messages &peers, const std::vector<int> *order, std::size_t unit_bytes, int key,
                            const void *const *bufs, bool sending) {
  const int np = peers.count();
  if (key == key_ && unit_bytes == unit_ && std::equal(bufs, bufs + np, bufs_.begin(), bufs_.end()))
    return STF_SUCCESS;
  release();
  const int n = order ? static_cast<int>(order->size()) : np;
  // Never empty arrays, also where this rank has no neighbour: MPICH 4.0.2
  // reads them anyway (a segmentation fault on NULL).
  counts_.assign(std::max(n, 1), 0);
  displs_.assign(std::max(n, 1), 0);
  types_.assign(std::max(n, 1), MPI_BYTE);
  peer_of_.assign(std::max(n, 1), -1);
  words_.assign(sending ? 1 : std::max(n, 1), kUnset);
  for (int k = 0, j = 0; k < n && j < np; k++) {
    if (order && (*order)[k] != peers.ranks[j]) continue;
    ByteCount data;  // MPI_BYTE up to INT_MAX bytes, else a type of its own (the struct keeps what it needs)
    STF_CHECK(data.set(static_cast<std::size_t>(peers.size(j)) * unit_bytes));
    const int lengths[2] = {data.count(), static_cast<int>(sizeof(std::uint64_t))};
    MPI_Aint addrs[2];
    STF_MPI(MPI_Get_address(bufs[j], &addrs[0]));
    STF_MPI(MPI_Get_address(&words_[sending ? 0 : k], &addrs[1]));
    const MPI_Datatype parts[2] = {data.type(), MPI_BYTE};
    STF_MPI(MPI_Type_create_struct(2, lengths, addrs, parts, &types_[k]));
    STF_MPI(MPI_Type_commit(&types_[k]));
    counts_[k] = 1;
    peer_of_[k] = j;
    j++;
  }
  bufs_.assign(bufs, bufs + np);
  unit_ = unit_bytes;
  key_ = key;
  return STF_SUCCESS;
}

}  // namespace stf
