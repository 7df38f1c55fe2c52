// -stf_type ipc: putsignal's protocol (slot_ring.h) in the device memory of
// one node's ranks, with no host wait per message. The GPU twin of
// putsignal's heap link.
//
// - Set-up: each rank takes one block of device memory that the other
//   processes of its node can map (Device::alloc_shared: a CUDA IPC handle,
//   on emu a shared memory segment) holding, per direction, a ring of S
//   regions with signal words per peer that sends to it, and the credit
//   words of the peers it sends to. It tells each peer its block's handle
//   and where the peer's ring or credits lie; each rank maps each peer's
//   block once.
// - Operation n of a direction (numbered alike on every rank) uses region
//   n % S. Sender, on the library stream, behind the packing: wait until
//   the region's credit shows its previous message taken, copy the packed
//   message into the peer's region, write the signal n + 1. Receiver, in
//   wait_recv, on the stream: wait for the signal, copy the region into the
//   ops layer's buffer (whose unpack follows on the stream), write the
//   credit n + 1 into the sender's block. Signal and credit are stream
//   memory operations (Device::stream_write_word, stream_wait_word), so
//   the host synchronises nothing for device data (queues_on_stream).
// - Stream waits cannot yield to other work: operation n of a direction may
//   begin only once operation n - S has ended on this rank, as for nvshmem
//   (stream_putsignal.h: a refusal ends the SF's use); then every stream
//   wait is for work each rank has queued.
// - Host data goes through the same copies; the waits then synchronise the
//   stream before the ops layer (or the user) touches the host buffers.
// - Units larger than -stf_ipc_unit_bytes are STF_ERR_UNSUPPORTED: regions
//   are sized at set-up, when units are not known. Peers on other nodes
//   are refused (node-aware strategies may use ipc inside the node).
// - An operation abandoned midway leaves its peers' regions out of step:
//   the transport refuses every later operation (STF_ERR_STATE).
// - Destroy: the last credits, then a barrier before the block is freed
//   (no peer may still map it), so ipc SFs are destroyed in the same order
//   on every rank.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "device/device.h"
#include "transport/registry.h"
#include "transport/stream_putsignal.h"

namespace stf {

const OptionSpec ipc_slots_option = {
    "stf_ipc_slots", "STF_IPC_SLOTS", "1|2|4|8|16|32|64",
    "ipc transport: regions per peer and direction, i.e. operations of a direction in flight (default 4)", "4",
    nullptr, 1, 64};
const OptionSpec ipc_unit_bytes_option = {
    "stf_ipc_unit_bytes", "STF_IPC_UNIT_BYTES", "1..65536",
    "ipc transport: bytes per unit a region holds; larger units are STF_ERR_UNSUPPORTED (default 64)", "64",
    nullptr, 1, 65536};

namespace {

constexpr int kDirections = 2;
constexpr int tag_ring[kDirections] = {0, 1};    // set-up: where my receive ring for the peer lies
constexpr int tag_credit[kDirections] = {2, 3};  // set-up: where my credits from the peer lie

// What a peer needs to write into my block: its handle and an offset in it.
struct Where {
  SharedHandle block;
  std::uint64_t offset = 0;
};

class IpcTransport final : public StreamPutSignal<StreamLink> {
 public:
  IpcTransport(const TransportContext &ctx, Device *dev)
      : StreamPutSignal("ipc", ipc_slots_option.name, ipc_unit_bytes_option.name,
                        static_cast<int>(ctx.opts.number(ipc_slots_option)),
                        static_cast<std::size_t>(ctx.opts.number(ipc_unit_bytes_option)), set_error),
        comm_(ctx.comm), plan_(ctx.plan), dev_(dev) {}
  ~IpcTransport() override;
  int init();

  const char *name() const override { return "ipc"; }
  std::string describe() const override {
    return "ipc (put with signal into the node's device memory, IPC-mapped; signals on the library stream; " +
           std::to_string(slots_) + " regions per peer and direction of " + std::to_string(unit_capacity_) +
           " B per unit; fetch-and-op: basic fallback)";
  }
  std::string describe_rank() const override {
    return "ipc: " + std::to_string((block_bytes_ + 1023) / 1024) + " KiB of shared device memory, " +
           std::to_string(peer_blocks_.size()) + " peer blocks mapped";
  }
  int post_send(Channel &c, Direction d, Leg, std::size_t ub, const void *const *send) override;
  int wait_recv(Channel &c) override;
  int wait_send(Channel &c) override;

 private:
  Stream stream() const { return dev_->library_stream(); }
  // The regions are device memory: one lookup tells a copy's kind.
  bool on_host(const void *p) const { return dev_->memtype(p) != STF_MEMTYPE_DEVICE; }
  int map_peer(int rank, const SharedHandle &h, char **base);

  const Comm &comm_;
  const Plan &plan_;
  Device *const dev_;
  char *block_ = nullptr;
  std::size_t block_bytes_ = 0;
  SharedHandle handle_;
  std::map<int, char *> peer_blocks_;  // by rank
  bool mapped_by_peers_ = false;       // set-up got as far as the peers' mapping
};

// Before the block goes: every credit for this rank's messages has come
// (their receivers copied them out) and the stream has taken every message
// sent here and returned its credit, so no peer writes into it again; and
// every peer has unmapped it (CUDA: freeing an exported block while others
// map it is undefined), hence the barrier (stf_destroy is collective).
// After a refused or failed operation the stream may wait for ever for a
// peer's message: then nothing is waited for, and the block and mappings
// are left to the process's end.
IpcTransport::~IpcTransport() {
  if (broken()) return;
  const Stream st = stream();
  for (auto &links : send_)
    for (StreamLink &l : links)
      for (int r = 0; r < slots_; r++)
        if (l.last_in_region[r]) dev_->stream_wait_word(st, l.mine.credit(r), l.last_in_region[r]);
  dev_->stream_synchronize(st);
  for (auto &p : peer_blocks_) dev_->unmap_shared(p.second);
  int finalized = 1;
  MPI_Finalized(&finalized);
  if (mapped_by_peers_ && !finalized) MPI_Barrier(comm_.comm);
  if (block_) dev_->free(block_);
}

int IpcTransport::init() {
  // My block: per direction the receive rings, then the credit words.
  std::vector<Where> ring_at[kDirections], credit_at[kDirections];
  int rc = STF_SUCCESS;
  for (Direction d : {Direction::root_to_leaf, Direction::leaf_to_root}) {
    const int i = direction_index(d);
    for (auto [m, links, at, ring] : {std::tuple{&receivers(plan_, d), &recv_[i], &ring_at[i], true},
                                      std::tuple{&senders(plan_, d), &send_[i], &credit_at[i], false}})
      for (int k = 0; k < m->count(); k++) {
        StreamLink l;
        l.rank = m->ranks[k];
        l.units = m->size(k);
        l.capacity = SlotRing::round_up(static_cast<std::size_t>(l.units) * unit_capacity_);
        l.last_in_region.assign(slots_, 0);
        Where w;
        w.offset = block_bytes_;
        at->push_back(w);
        block_bytes_ += SlotRing::bytes(slots_, ring ? l.capacity : 0);
        links->push_back(l);
      }
  }
  // Taken also without peers: a device that cannot share memory fails alike on every rank.
  void *p = nullptr;
  rc = dev_->alloc_shared(std::max(block_bytes_, kLine), &p, &handle_);
  block_ = static_cast<char *>(p);
  STF_CHECK(agree(comm_.comm, rc));
  for (int i = 0; i < kDirections; i++) {
    for (std::size_t k = 0; k < recv_[i].size(); k++) {
      ring_at[i][k].block = handle_;
      recv_[i][k].mine = SlotRing::at(block_ + ring_at[i][k].offset, slots_, recv_[i][k].capacity);
    }
    for (std::size_t k = 0; k < send_[i].size(); k++) {
      credit_at[i][k].block = handle_;
      send_[i][k].mine = SlotRing::at(block_ + credit_at[i][k].offset, slots_, 0);
    }
  }
  // Every rank takes part in every exchange; a rank that failed to map a
  // peer's block only stops mapping.
  mapped_by_peers_ = true;
  for (int i = 0; i < kDirections; i++) {
    std::vector<Where> rings, credits;
    for (int e : {exchange(comm_.comm, comm_.transport_tag(tag_ring[i]), recv_[i], ring_at[i], send_[i], &rings),
                  exchange(comm_.comm, comm_.transport_tag(tag_credit[i]), send_[i], credit_at[i], recv_[i], &credits)})
      if (!rc) rc = e;
    char *base = nullptr;
    for (std::size_t k = 0; k < send_[i].size() && !rc; k++)
      if (!(rc = map_peer(send_[i][k].rank, rings[k].block, &base)))
        send_[i][k].theirs = SlotRing::at(base + rings[k].offset, slots_, send_[i][k].capacity);
    for (std::size_t k = 0; k < recv_[i].size() && !rc; k++)
      if (!(rc = map_peer(recv_[i][k].rank, credits[k].block, &base)))
        recv_[i][k].theirs = SlotRing::at(base + credits[k].offset, slots_, 0);
  }
  STF_CHECK(agree(comm_.comm, rc));
  dev_->shared_mapped(block_);  // every peer has mapped it
  return STF_SUCCESS;
}

int IpcTransport::map_peer(int rank, const SharedHandle &h, char **base) {
  auto it = peer_blocks_.find(rank);
  if (it == peer_blocks_.end()) {
    void *p = nullptr;
    STF_CHECK(dev_->map_shared(h, &p));
    it = peer_blocks_.emplace(rank, static_cast<char *>(p)).first;
  }
  *base = it->second;
  return STF_SUCCESS;
}

int IpcTransport::post_send(Channel &c, Direction d, Leg, std::size_t ub, const void *const *send) {
  StreamChannel *s = nullptr;
  STF_CHECK(start(c, d, ub, &s));
  const Stream st = stream();
  const std::uint64_t n = s->seq;
  std::vector<StreamLink> &links = send_[direction_index(d)];
  for (std::size_t k = 0; k < links.size(); k++) {
    StreamLink &l = links[k];
    const std::size_t bytes = static_cast<std::size_t>(l.units) * ub;
    std::uint64_t &last = l.last_in_region[l.mine.slot(n)];
    if (last) STF_CHECK(dev_->stream_wait_word(st, l.mine.credit(n), last));
    const bool host = on_host(send[k]);
    s->host_send |= host;
    STF_CHECK(dev_->memcpy_async(l.theirs.region(n), send[k], bytes, host ? CopyKind::h2d : CopyKind::d2d, st));
    STF_CHECK(dev_->stream_write_word(st, l.theirs.signal(n), n + 1));
    last = n + 1;  // only once the message is on its way: the destructor waits for its credit
  }
  return STF_SUCCESS;
}

int IpcTransport::wait_recv(Channel &c) {
  StreamChannel &s = c.get<StreamChannel>();
  const Stream st = stream();
  const std::uint64_t n = s.seq;
  bool host = false;
  const std::vector<StreamLink> &links = recv_[direction_index(s.dir)];
  for (std::size_t k = 0; k < links.size(); k++) {
    const StreamLink &l = links[k];
    const bool to_host = on_host(s.recv[k]);
    host |= to_host;
    STF_CHECK(dev_->stream_wait_word(st, l.mine.signal(n), n + 1));
    STF_CHECK(dev_->memcpy_async(s.recv[k], l.mine.region(n), static_cast<std::size_t>(l.units) * s.unit_bytes,
                                 to_host ? CopyKind::d2h : CopyKind::d2d, st));
    STF_CHECK(dev_->stream_write_word(st, l.theirs.credit(n), n + 1));
  }
  if (host) STF_CHECK(dev_->stream_synchronize(st));  // the ops layer reads host memory next
  return STF_SUCCESS;
}

int IpcTransport::wait_send(Channel &c) {
  StreamChannel &s = c.get<StreamChannel>();
  if (s.host_send) STF_CHECK(dev_->stream_synchronize(stream()));  // the copies read host buffers
  end(s);
  return STF_SUCCESS;
}

// Every peer of this rank on its node, the same answer about the device on
// every rank.
int check_reach(const TransportContext &ctx, Device **dev) {
  int rc = active_device(dev);
  for (const Messages *m : {&ctx.plan.root, &ctx.plan.leaf})
    for (int k = 0; k < m->count() && !rc; k++)
      if (!ctx.topology.same_node(m->ranks[k]))
        rc = set_error(STF_ERR_UNSUPPORTED,
                       "-stf_type ipc: rank %d's peer %d is on another node (ipc maps device memory within a node; "
                       "a node-aware strategy may use it inside nodes: -stf_type 2step -stf_node_transport ipc)",
                       ctx.comm.rank, m->ranks[k]);
  return agree(ctx.comm.comm, rc);
}

}  // namespace

int make_ipc_transport(const TransportContext &ctx, std::unique_ptr<Transport> *out) {
  STF_CHECK(agree(ctx.comm.comm, ctx.earlier));
  Device *dev = nullptr;
  STF_CHECK(check_reach(ctx, &dev));
  auto t = std::make_unique<IpcTransport>(ctx, dev);
  STF_CHECK(t->init());
  *out = std::move(t);
  return STF_SUCCESS;
}

}  // namespace stf
