// The putsignal transport's set-up: a link per peer, direction and side
// (link.h), of the kind the peer's place calls for; where every ring and
// credit word lies; the node's shared-memory window and the SF's RMA
// window; and the exchanges that tell each sender where its receiver's
// ring lies, and each receiver where its sender's credits lie. Everything
// that allocates is in prepare, which runs inside prepare_agreed
// (transport/transport.h) before any collective; init makes the windows
// and exchanges addresses.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "transport/putsignal/link.h"
#include "transport/putsignal/net_choice.h"
#include "transport/putsignal/rma_link.h"
#include "transport/putsignal/tags.h"
#include "transport/transport.h"

namespace stf::putsignal {

class Layout {
 public:
  // slots: regions per ring (a power of two); unit_capacity: bytes per
  // unit a region holds; net: how messages reach other nodes.
  Layout(const TransportContext &ctx, int slots, int unit_capacity, const NetChoice &net)
      : comm_(ctx.comm), topo_(ctx.topology), plan_(ctx.plan), slots_(slots), unit_capacity_(unit_capacity),
        rma_between_nodes_(net.rma) {
    rma_.flush_waits_for_target = net.emulated;
  }
  ~Layout();  // frees the windows: the transport has waited for its signals
  Layout(const Layout &) = delete;
  Layout &operator=(const Layout &) = delete;

  void prepare();  // local: the links and what init fills (may throw std::bad_alloc)
  int init();      // collective over the SF's communicator

  // Peer k of a side is the plan's peer k (transport.h's senders and receivers).
  std::vector<std::unique_ptr<SendLink>> &senders(Direction d) { return send_[dir_index(d)]; }
  std::vector<std::unique_ptr<ReceiveLink>> &receivers(Direction d) { return receive_[dir_index(d)]; }
  // Some link goes to another node (by RMA or point-to-point), whose
  // messages progress only inside MPI calls.
  bool off_node() const { return off_node_links_ > 0; }
  int reap_signals() { return rma_.reap_signals(); }
  void wait_signals() { rma_.wait_signals(); }
  std::string describe() const;  // this rank's links and memory, for stf_view

 private:
  enum class Via : unsigned char { heap, rma, p2p };
  // Set-up, per link: its kind, where its ring (receive side) or its
  // credits (RMA send side) lie in my memory, and where the peer's lie in
  // its memory (-1: nowhere).
  struct Placing {
    int rank = 0;
    Via via = Via::heap;
    MPI_Aint mine = -1, theirs = -1;
  };
  Via via_to(int rank) const;  // the one place that asks where a peer is
  std::size_t capacity(stf_int units) const;  // of the regions for messages of units
  std::unique_ptr<SendLink> send_link(Via via, int rank, stf_int units);
  std::unique_ptr<ReceiveLink> receive_link(Via via, int rank, stf_int units);
  int lay_out_heap();
  int lay_out_rma();
  // Sends each placing of `to` that goes via its `mine`, and receives each
  // one's of `from` into its `theirs`.
  int exchange(int tag, Via via, const std::vector<Placing> &to, std::vector<Placing> *from);
  static void shift_to_line(const char *base, Via via, std::vector<Placing> *placings);

  const Comm &comm_;
  const Topology &topo_;
  const Plan &plan_;
  const int slots_, unit_capacity_;
  const bool rma_between_nodes_;
  std::vector<std::unique_ptr<SendLink>> send_[kDirections];
  std::vector<std::unique_ptr<ReceiveLink>> receive_[kDirections];
  struct SetUp {
    std::vector<Placing> send[kDirections], receive[kDirections];
    std::vector<MPI_Request> requests;
  } at_;  // freed by init
  MPI_Win heap_win_ = MPI_WIN_NULL;
  RmaWindow rma_;
  std::size_t heap_bytes_ = 0, rma_bytes_ = 0;
  int heap_links_ = 0, off_node_links_ = 0;  // (peer, direction, side) through each
};

}  // namespace stf::putsignal
