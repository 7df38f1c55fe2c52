// What the putsignal transport keeps per channel (transport/transport.h):
// the operation in flight on it, its number and direction, how each of its
// messages goes, its outbox and spill buffers, and its large messages'
// requests.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "transport/large_count.h"
#include "transport/putsignal/region_queues.h"
#include "transport/size_mismatch.h"
#include "transport/transport.h"

namespace stf::putsignal {

constexpr int kQueues = 4;  // to write and to take, per direction (PutSignalTransport::queues_)

// Where a received message is: not taken yet, moved to the spill buffer
// (its credit returned), or taken in its region by wait_recv (credit
// returned by release_recv).
enum class Held : unsigned char { no, spilled, in_region };
// How one message of an operation goes.
enum class Route : unsigned char { region, queued, large };

struct PutChannel : ChannelState {
  // The transport's list of its channels (progress looks at them all); the
  // ops layer frees channels before their transport.
  std::vector<PutChannel *> *listed = nullptr;
  int *pending_total = nullptr;  // the transport's count of queued messages, which includes this one's
  RegionQueues *queues = nullptr;  // the transport's kQueues, which may list this channel
  int *in_flight = nullptr;  // the transport's count of numbered channels, which may count this one
  PutChannel **express = nullptr;  // the transport's express operation, which may be this channel's
  ~PutChannel() override;
  // No entry of the transport's queues points here any more (the channel
  // goes, or its abandoned operation's number may be taken again).
  void leave_queues() {
    for (int i = 0; queues && i < kQueues; i++) queues[i].forget(this);
  }
  // Queued messages that will not be written (the channel goes, or takes a
  // new operation after this one failed) leave the transport's count, so
  // that progress stops looking for them.
  void forget_pending() {
    if (pending_total) *pending_total -= npending;
    npending = 0;
  }
  // Large sends still in flight (only after an end timed out waiting for
  // their receipt): MPI may read their buffer whenever the receiver comes,
  // so the requests are freed and the buffer is kept until the process
  // exits.
  void abandon_active_sends();
  // The direction whose peers the per-peer arrays below are sized for
  // (-1: none yet). A channel carries one direction, so they are sized
  // once, by its first operation (PutSignalTransport::start).
  int sized_for = -1;
  std::uint64_t seq = 0;
  bool seq_set = false;  // from the first call of an operation until wait_send (or a retryable abandon)
  std::size_t unit_bytes = 0;
  Direction dir = Direction::root_to_leaf;
  // Send side, per sending peer.
  std::vector<Route> route;
  std::vector<std::uint64_t> previous;  // the previous message of each one's region (SendLink::take_turn)
  bool lent = false;  // lend_send took the regions' turns, which abandon may give back
  // A message of this operation (or a mark) has left: its number is spent,
  // and a failed begin cannot be begun again under it (abandon).
  bool spent = false;
  std::vector<char> pending;  // queued, not written yet
  int npending = 0;
  std::vector<char> outbox;  // queued and large messages, at the plan's offsets
  // Per sending peer: where its queued or large message is, in the outbox
  // or, for a large one, in the ops layer's memory (offered to lend_send).
  std::vector<const char *> source;
  std::vector<MPI_Request> sends;
  // Receive side, per receiving peer.
  bool receiving = false;  // posted, not released
  bool waited = false;     // wait_recv returned: the ops layer reads the data
  std::vector<Held> held;   // per receiving peer
  std::vector<char> marked;  // per receiving peer of a large message: its region's mark taken
  std::vector<char> spill;  // spilled and large messages, at the plan's offsets
  std::vector<char> in_place;  // per receiving peer: its large message goes where post_recv was offered
  void **data = nullptr;      // where wait_recv says where each message is (the ops layer's array)
  int nreceive = 0;
  // Of large messages (MPI_REQUEST_NULL for the others, and once done):
  // persistent, started once and freed once complete, because MPICH 4.0.2
  // raises the error of a completed nonpersistent request (a truncated
  // message) on MPI_COMM_WORLD's handler, fatal by default, and a
  // persistent one's on its communicator's, which returns.
  std::vector<MPI_Request> recvs;
  std::vector<ByteCount> recv_types;  // the derived types recvs need, if any
  int nrecvs = 0;
  SizeMismatch mismatch;  // a sender whose message's size tag is not the expected size
  // A large receive of this operation that may hold another operation's
  // message (an earlier one's receive with the same tag was cancelled):
  // its sender's rank, else -1. Its wait_recv fails.
  int taken_from = -1;
};

}  // namespace stf::putsignal
