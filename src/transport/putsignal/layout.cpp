// The putsignal transport's set-up (layout.h): which kind of link each peer
// gets, the windows its rings and credits lie in, and the exchanges of
// their addresses. The only place that asks whether a peer goes through
// the heap or the window.
#include "transport/putsignal/layout.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "transport/putsignal/heap_link.h"

namespace stf::putsignal {

Layout::~Layout() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  for (MPI_Win *w : {&heap_win_, &rma_.win})
    if (*w != MPI_WIN_NULL) {
      MPI_Win_unlock_all(*w);
      MPI_Win_free(w);
    }
}

std::size_t Layout::capacity(stf_int units) const {
  return std::max<std::size_t>(SlotRing::round_up(static_cast<std::size_t>(units) * unit_capacity_), kLine);
}

Layout::Via Layout::via_to(int rank) const {
  if (topo_.same_node(rank)) return Via::heap;
  return rma_between_nodes_ ? Via::rma : Via::p2p;
}

std::unique_ptr<SendLink> Layout::send_link(Via via, int rank, stf_int units) {
  switch (via) {
    case Via::heap: return std::make_unique<HeapSendLink>(rank, units, capacity(units), slots_);
    case Via::rma: return std::make_unique<RmaSendLink>(rank, units, capacity(units), slots_, rma_);
    case Via::p2p: break;
  }
  return std::make_unique<P2pSendLink>(rank, units, slots_);
}

std::unique_ptr<ReceiveLink> Layout::receive_link(Via via, int rank, stf_int units) {
  switch (via) {
    case Via::heap: return std::make_unique<HeapReceiveLink>(rank, units, capacity(units));
    case Via::rma: return std::make_unique<RmaReceiveLink>(rank, units, capacity(units), slots_, rma_);
    case Via::p2p: break;
  }
  return std::make_unique<P2pReceiveLink>(rank, units);
}

// Local: the links, where their rings and credits lie, and the arrays the
// set-up's exchanges fill, all before init's collectives (prepare_agreed).
void Layout::prepare() {
  for (Direction d : {Direction::root_to_leaf, Direction::leaf_to_root}) {
    const int i = dir_index(d);
    const Messages &to = stf::senders(plan_, d), &from = stf::receivers(plan_, d);
    for (int k = 0; k < to.count(); k++) {
      const Placing &at = at_.send[i].emplace_back(Placing{to.ranks[k], via_to(to.ranks[k])});
      send_[i].push_back(send_link(at.via, at.rank, to.size(k)));
    }
    for (int k = 0; k < from.count(); k++) {
      const Placing &at = at_.receive[i].emplace_back(Placing{from.ranks[k], via_to(from.ranks[k])});
      receive_[i].push_back(receive_link(at.via, at.rank, from.size(k)));
    }
  }
  std::size_t most = 0;  // requests of the largest exchange
  for (int d = 0; d < kDirections; d++) {
    most = std::max(most, receive_[d].size() + send_[d].size());
    for (const std::vector<Placing> *side : {&at_.send[d], &at_.receive[d]})
      for (const Placing &at : *side) {
        heap_links_ += at.via == Via::heap;
        off_node_links_ += at.via != Via::heap;
      }
    for (std::size_t k = 0; k < receive_[d].size(); k++)
      if (at_.receive[d][k].via == Via::heap) {
        at_.receive[d][k].mine = static_cast<MPI_Aint>(heap_bytes_);
        heap_bytes_ += SlotRing::bytes(slots_, receive_[d][k]->capacity);
      }
  }
  for (int d = 0; d < kDirections; d++)
    for (std::size_t k = 0; k < receive_[d].size(); k++)
      if (at_.receive[d][k].via == Via::rma) {
        at_.receive[d][k].mine = static_cast<MPI_Aint>(rma_bytes_);
        rma_bytes_ += SlotRing::bytes(slots_, receive_[d][k]->capacity);
      }
  for (int d = 0; d < kDirections; d++)
    for (Placing &at : at_.send[d])
      if (at.via == Via::rma) {
        at.mine = static_cast<MPI_Aint>(rma_bytes_);
        rma_bytes_ += slots_ * kLine;
      }
  at_.requests.reserve(most);
}

int Layout::init() {
  STF_CHECK(lay_out_heap());
  STF_CHECK(lay_out_rma());
  at_ = SetUp();  // no longer needed
  return STF_SUCCESS;
}

// Window memory need not be aligned beyond 8 bytes (Open MPI's shared
// segments are not), but units may need 16 and signal words their own
// line: the offsets in the window of `via` move to the first line boundary
// after base. The boundary is the same on every process that maps the
// memory (mappings are page aligned).
void Layout::shift_to_line(const char *base, Via via, std::vector<Placing> *placings) {
  const auto pad = static_cast<MPI_Aint>((kLine - reinterpret_cast<std::uintptr_t>(base) % kLine) % kLine);
  for (Placing &at : *placings)
    if (at.via == via && at.mine >= 0) at.mine += pad;
}

// My segment of the node's shared window holds a ring per node peer that
// sends to me; senders learn where theirs is, and map the segment.
int Layout::lay_out_heap() {
  if (topo_.local_size == 1) return STF_SUCCESS;  // no node peers anywhere on my node
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  char *base = nullptr;
  const int rc =
      MPI_Win_allocate_shared(static_cast<MPI_Aint>(heap_bytes_ + kLine), 1, info, topo_.node_comm, &base, &heap_win_);
  MPI_Info_free(&info);
  if (rc != MPI_SUCCESS) return mpi_error(rc, "MPI_Win_allocate_shared");
  STF_MPI(MPI_Win_set_errhandler(heap_win_, MPI_ERRORS_RETURN));
  STF_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, heap_win_));
  std::memset(base, 0, heap_bytes_ + kLine);
  for (int d = 0; d < kDirections; d++) shift_to_line(base, Via::heap, &at_.receive[d]);
  STF_MPI(MPI_Win_sync(heap_win_));
  for (int d = 0; d < kDirections; d++)
    for (std::size_t k = 0; k < receive_[d].size(); k++)
      if (at_.receive[d][k].via == Via::heap)
        static_cast<HeapReceiveLink &>(*receive_[d][k])
            .place(SlotRing::at(base + at_.receive[d][k].mine, slots_, receive_[d][k]->capacity));
  for (int d = 0; d < kDirections; d++)
    STF_CHECK(exchange(comm_.transport_tag(tag_heap_ring[d]), Via::heap, at_.receive[d], &at_.send[d]));
  for (int d = 0; d < kDirections; d++)
    for (std::size_t k = 0; k < send_[d].size(); k++) {
      const Placing &at = at_.send[d][k];
      if (at.via != Via::heap) continue;
      MPI_Aint size = 0;
      int unit = 1;
      char *peer_base = nullptr;
      STF_MPI(MPI_Win_shared_query(heap_win_, topo_.local_rank_of[at.rank], &size, &unit, &peer_base));
      static_cast<HeapSendLink &>(*send_[d][k])
          .place(SlotRing::at(peer_base + at.theirs, slots_, send_[d][k]->capacity));
    }
  return STF_SUCCESS;
}

int Layout::exchange(int tag, Via via, const std::vector<Placing> &to, std::vector<Placing> *from) {
  std::vector<MPI_Request> &reqs = at_.requests;  // reserved by prepare: no allocation between collectives
  reqs.clear();
  for (Placing &at : *from)
    if (at.via == via) {
      reqs.emplace_back();
      STF_MPI(MPI_Irecv(&at.theirs, 1, MPI_AINT, at.rank, tag, comm_.comm, &reqs.back()));
    }
  for (const Placing &at : to)
    if (at.via == via) {
      reqs.emplace_back();
      STF_MPI(MPI_Isend(&at.mine, 1, MPI_AINT, at.rank, tag, comm_.comm, &reqs.back()));
    }
  if (!reqs.empty()) STF_MPI(MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE));
  return STF_SUCCESS;
}

// My window holds a ring per off-node peer that sends to me, then, per
// off-node peer I send to, S credit words it writes.
int Layout::lay_out_rma() {
  if (topo_.nnodes == 1 || !rma_between_nodes_) return STF_SUCCESS;  // no off-node rings anywhere
  char *base = nullptr;
  STF_MPI(MPI_Win_allocate(static_cast<MPI_Aint>(rma_bytes_ + kLine), 1, MPI_INFO_NULL, comm_.comm, &base, &rma_.win));
  STF_MPI(MPI_Win_set_errhandler(rma_.win, MPI_ERRORS_RETURN));
  STF_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, rma_.win));
  std::memset(base, 0, rma_bytes_ + kLine);
  for (int d = 0; d < kDirections; d++) {
    shift_to_line(base, Via::rma, &at_.receive[d]);
    shift_to_line(base, Via::rma, &at_.send[d]);
  }
  STF_MPI(MPI_Win_sync(rma_.win));
  for (int d = 0; d < kDirections; d++) {
    STF_CHECK(exchange(comm_.transport_tag(tag_rma_ring[d]), Via::rma, at_.receive[d], &at_.send[d]));
    STF_CHECK(exchange(comm_.transport_tag(tag_rma_credit[d]), Via::rma, at_.send[d], &at_.receive[d]));
    for (std::size_t k = 0; k < receive_[d].size(); k++) {
      const Placing &at = at_.receive[d][k];
      if (at.via == Via::rma)
        static_cast<RmaReceiveLink &>(*receive_[d][k])
            .place(SlotRing::at(base + at.mine, slots_, receive_[d][k]->capacity), at.theirs);
    }
    for (std::size_t k = 0; k < send_[d].size(); k++) {
      const Placing &at = at_.send[d][k];
      if (at.via == Via::rma)
        static_cast<RmaSendLink &>(*send_[d][k]).place(at.theirs, reinterpret_cast<std::uint64_t *>(base + at.mine));
    }
  }
  return STF_SUCCESS;
}

std::string Layout::describe() const {
  return "putsignal: " + std::to_string(heap_links_) + " peer link(s) in the node's heap (" +
         std::to_string((heap_bytes_ + 1023) / 1024) + " KiB of rings here), " + std::to_string(off_node_links_) +
         (rma_between_nodes_ ? " through the RMA window (" + std::to_string((rma_bytes_ + 1023) / 1024) + " KiB)"
                             : " to other nodes by MPI point-to-point");
}

}  // namespace stf::putsignal
