// The nvshmem transport: putsignal's protocol (slot_ring.h) on GPU memory,
// every step queued on the library stream with NVSHMEM's host-side stream
// calls, so the host never waits for a message. Built as the plug-in
// libstarforest_nvshmem.so (plugin.h says why); host calls only, hence no
// device code and no -rdc: NVSHMEM's device library is not linked.
//
// Design, and why:
// - NVSHMEM starts once per process (runtime.cu), over a communicator of every rank that
//   will use it: stf_nvshmem_init(comm), else the first nvshmem SF over all
//   of MPI_COMM_WORLD (NVSHMEMX_INIT_WITH_MPI_COMM); an SF whose ranks are
//   not all PEs is refused. It stops at MPI_Finalize (an attribute on
//   MPI_COMM_SELF). Before starting, ranks that share a GPU in NVSHMEM's
//   "limited MPG" (no MPS, or MPS over 100 %) are refused: NVSHMEM would
//   end the process there instead of failing (limited_mpg).
// - At start one symmetric pool (nvshmem_malloc, collective over all PEs);
//   each SF takes a block of it locally (Pool), so SFs on sub-communicators
//   are set up and destroyed in any order. Per peer, direction and side it
//   holds a SlotRing of S regions: on the receive side regions + signal
//   words the sender writes; on the send side an outbox (regions the
//   message is copied into before the put: a put's source must be
//   symmetric on network transports; unused where the peer's GPU memory is
//   reachable, nvshmem_ptr) + credit words the receiver writes.
//   Ranks tell their senders (receivers) where their rings (credits) lie,
//   once, by MPI.
// - Message n of a direction (every rank numbers an SF's operations alike)
//   goes in region n % S with signal n + 1. Sender, on the stream: wait
//   until credit >= the region's previous message + 1, then where the
//   peer's memory is reachable (nvshmem_ptr) and the data on the device,
//   nvshmemx_putmem_signal_on_stream straight from it (blocking on the
//   stream: the buffer is free for what the stream runs next); else copy
//   into the outbox and put from there, nbi (SIGNAL_SET n + 1). Receiver, in
//   wait_recv, on the stream: wait until signal == n + 1, copy the region
//   into the ops layer's buffer (which then unpacks it on the stream),
//   return the credit n + 1 with nvshmemx_signal_op_on_stream.
// - The copies: the ops layer lends only host memory (Transport::lends), so
//   the receiver copies each message out of its region (where the data is
//   contiguous and REPLACE, that copy is the unpack).
// - Destroying an SF waits until its messages are taken and its credits
//   returned (drain) before its block returns to the pool.
// - Waits on a stream cannot yield to other work, so an operation of a
//   direction may begin only once the one S before it has ended on this
//   rank (else STF_ERR_UNSUPPORTED): then every stream wait is for an
//   operation every rank has already queued, and nothing deadlocks.
// - Messages larger than their region (units of more than
//   -stf_nvshmem_unit_bytes) are STF_ERR_UNSUPPORTED: regions are fixed at
//   set-up, when units are not known yet.
// - Host memory works (cudaMemcpyAsync reaches it), but then the waits
//   synchronise the stream before the ops layer reads it.
// - Fetch-and-op: basic (the registry row says so).
#include <cuda_runtime.h>
#include <mpi.h>
#include <nvshmem_host.h>  // the host API alone, without the device headers

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.h"  // STF_CHECK only: the plug-in calls nothing of libstarforest
#include "transport/nvshmem/plugin.h"
#include "transport/nvshmem/runtime.h"
#include "transport/stream_putsignal.h"

namespace stf {
namespace {

constexpr int kDirections = 2;
constexpr int tag_ring[kDirections] = {0, 1};    // set-up: where my receive ring lies
constexpr int tag_credit[kDirections] = {2, 3};  // set-up: where my credits lie

int cuda_failed(cudaError_t e, const char *call) {
  return g_args.set_error(STF_ERR_DEVICE, "nvshmem transport: %s: %s", call, cudaGetErrorString(e));
}
#define NV_CUDA(call)                                   \
  do {                                                  \
    cudaError_t nv_e_ = (call);                         \
    if (nv_e_ != cudaSuccess) return cuda_failed(nv_e_, #call); \
  } while (0)
#define NV_MPI(call)                                                                        \
  do {                                                                                      \
    if ((call) != MPI_SUCCESS)                                                              \
      return g_args.set_error(STF_ERR_MPI, "nvshmem transport: %s failed", #call);          \
  } while (0)

bool on_host(const void *p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();  // unregistered host memory on old runtimes
    return true;
  }
  return a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged;
}

// One peer of one direction, as sender or receiver: mine is in my block of
// the pool (receive ring, or outbox + credits), theirs names the peer's copy.
struct Link : StreamLink {
  int pe = 0;
  bool direct = false;  // send side: the peer's GPU memory is reachable (nvshmem_ptr): no outbox needed
};

class NvshmemTransport final : public StreamPutSignal<Link> {
 public:
  NvshmemTransport(const TransportContext &ctx, const NvshmemPluginArgs &a)
      : StreamPutSignal("nvshmem", "stf_nvshmem_slots", "stf_nvshmem_unit_bytes", a.slots, a.unit_bytes, a.set_error),
        comm_(ctx.comm), plan_(ctx.plan), device_(ctx.device) {}
  // After a refused or failed operation the stream may wait for ever: the
  // block is then left to the process's end.
  ~NvshmemTransport() override {
    if (!owns_block_ || g_finalized || broken()) return;
    drain();
    g_pool.release(block_, heap_bytes_);  // local
  }
  int init();

  const char *name() const override { return "nvshmem"; }
  std::string describe() const override {
    return "nvshmem (NVSHMEM put with signal on the library stream, " + std::to_string(slots_) +
           " regions per peer and direction of " + std::to_string(unit_capacity_) +
           " B per unit; fetch-and-op: basic fallback)";
  }
  std::string describe_rank() const override {
    std::size_t links = 0, direct = 0;
    for (const auto &dir : send_)
      for (const Link &l : dir) {
        links++;
        direct += l.direct;
      }
    return "nvshmem: PE " + std::to_string(nvshmem_my_pe()) + ", " + std::to_string((heap_bytes_ + 1023) / 1024) +
           " KiB of the symmetric pool; sends straight from device data to " + std::to_string(direct) + " of " +
           std::to_string(links) + " peer links (the others through an outbox)";
  }
  int post_send(Channel &c, Direction d, Leg, std::size_t ub, const void *const *send) override;
  int wait_recv(Channel &c) override;
  int wait_send(Channel &c) override;

 private:
  cudaStream_t stream() const { return static_cast<cudaStream_t>(device_.stream ? device_.stream() : nullptr); }
  // Before the block goes back to the pool (another SF may take it): every
  // credit for this rank's messages has come (their receivers have copied
  // them out), its puts are delivered, and its stream has taken every
  // message sent to it and returned every credit; so no peer writes into
  // the block again. Waits for peers whose streams lag; a peer that never
  // ends its operations makes it wait for ever.
  void drain() {
    const cudaStream_t st = stream();
    for (auto &links : send_)
      for (const Link &l : links)
        for (int r = 0; r < slots_; r++)
          if (l.last_in_region[r])
            nvshmemx_signal_wait_until_on_stream(l.mine.credit(r), NVSHMEM_CMP_GE, l.last_in_region[r], st);
    nvshmemx_quiet_on_stream(st);
    cudaStreamSynchronize(st);
  }

  const Comm &comm_;
  const Plan &plan_;
  const DeviceView device_;
  std::size_t heap_bytes_ = 0;  // my block in the pool: its size and offset
  std::size_t block_ = 0;
  bool owns_block_ = false;
};

int NvshmemTransport::init() {
  std::vector<int> pe_of(comm_.size);  // the SF's ranks as PEs (any communicator of PEs)
  const int me = nvshmem_my_pe();
  NV_MPI(MPI_Allgather(&me, 1, MPI_INT, pe_of.data(), 1, MPI_INT, comm_.comm));
  // Ranks of two NVSHMEM jobs (stf_nvshmem_init on disjoint communicators)
  // share PE numbers; every rank sees the same list, so decides alike.
  std::vector<int> sorted = pe_of;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    return unsupported("the SF's ranks are PEs of different NVSHMEM starts (stf_nvshmem_init on other "
                       "communicators): one start must hold them all");
  // My block: per direction the receive rings, then the outboxes.
  std::vector<MPI_Aint> ring_at[kDirections], credit_at[kDirections];
  for (Direction d : {Direction::root_to_leaf, Direction::leaf_to_root}) {
    const int i = direction_index(d);
    for (auto [m, links, at] : {std::tuple{&receivers(plan_, d), &recv_[i], &ring_at[i]},
                                std::tuple{&senders(plan_, d), &send_[i], &credit_at[i]}})
      for (int k = 0; k < m->count(); k++) {
        Link l;
        l.rank = m->ranks[k];
        l.pe = pe_of[l.rank];
        l.units = m->size(k);
        l.capacity = std::max<std::size_t>(SlotRing::round_up(static_cast<std::size_t>(l.units) * unit_capacity_), kLine);
        l.last_in_region.assign(slots_, 0);
        at->push_back(static_cast<MPI_Aint>(heap_bytes_));
        heap_bytes_ += SlotRing::bytes(slots_, l.capacity);
        links->push_back(l);
      }
  }
  // My block, from the pool (local: nothing collective over all PEs),
  // zeroed before any peer learns where to write.
  const std::size_t at = heap_bytes_ ? g_pool.allocate(heap_bytes_) : 0;
  std::string why;
  if (at == SIZE_MAX) {
    why = "the NVSHMEM pool (" + std::to_string(g_pool.bytes() >> 20) + " MiB, -stf_nvshmem_pool_mib at start) has no " +
          std::to_string(heap_bytes_) + " B left for this SF";
  } else if (heap_bytes_) {
    block_ = at;
    owns_block_ = true;
    const cudaError_t e = cudaMemset(g_pool.base() + at, 0, heap_bytes_);
    const cudaError_t e2 = e == cudaSuccess ? cudaDeviceSynchronize() : e;
    if (e2 != cudaSuccess) why = std::string("zeroing its block: ") + cudaGetErrorString(e2);
  }
  STF_CHECK(agree(comm_.comm, why));
  char *const base = g_pool.base();
  for (int i = 0; i < kDirections; i++) {
    for (MPI_Aint &o : ring_at[i]) o += static_cast<MPI_Aint>(at);
    for (MPI_Aint &o : credit_at[i]) o += static_cast<MPI_Aint>(at);
  }
  for (int i = 0; i < kDirections; i++) {
    for (std::size_t k = 0; k < recv_[i].size(); k++)
      recv_[i][k].mine = SlotRing::at(base + ring_at[i][k], slots_, recv_[i][k].capacity);
    for (std::size_t k = 0; k < send_[i].size(); k++)
      send_[i][k].mine = SlotRing::at(base + credit_at[i][k], slots_, send_[i][k].capacity);
    // Symmetric addresses: my pool base + the peer's offset names the peer's copy.
    std::vector<MPI_Aint> theirs;
    STF_CHECK(exchange(comm_.comm, comm_.transport_tag(tag_ring[i]), recv_[i], ring_at[i], send_[i], &theirs));
    for (std::size_t k = 0; k < send_[i].size(); k++) {
      send_[i][k].theirs = SlotRing::at(base + theirs[k], slots_, send_[i][k].capacity);
      send_[i][k].direct = nvshmem_ptr(send_[i][k].theirs.regions, send_[i][k].pe) != nullptr;
    }
    STF_CHECK(exchange(comm_.comm, comm_.transport_tag(tag_credit[i]), send_[i], credit_at[i], recv_[i], &theirs));
    for (std::size_t k = 0; k < recv_[i].size(); k++)
      recv_[i][k].theirs = SlotRing::at(base + theirs[k], slots_, recv_[i][k].capacity);
  }
  return STF_SUCCESS;
}

int NvshmemTransport::post_send(Channel &c, Direction d, Leg, std::size_t ub, const void *const *send) {
  StreamChannel *s = nullptr;
  STF_CHECK(start(c, d, ub, &s));
  const cudaStream_t st = stream();
  const std::uint64_t n = s->seq;
  for (std::size_t k = 0; k < send_[direction_index(d)].size(); k++) {
    Link &l = send_[direction_index(d)][k];
    const std::size_t bytes = static_cast<std::size_t>(l.units) * ub;
    std::uint64_t &last = l.last_in_region[l.mine.slot(n)];
    if (last) nvshmemx_signal_wait_until_on_stream(l.mine.credit(n), NVSHMEM_CMP_GE, last, st);
    last = n + 1;
    const bool host = on_host(send[k]);
    s->host_send |= host;
    if (l.direct && !host) {
      // Straight from the ops layer's device buffer: one stream step less
      // (each costs microseconds). Blocking on the stream, so the buffer is
      // free for whatever the stream runs next.
      nvshmemx_putmem_signal_on_stream(l.theirs.region(n), send[k], bytes, l.theirs.signal(n), n + 1,
                                       NVSHMEM_SIGNAL_SET, l.pe, st);
      continue;
    }
    NV_CUDA(cudaMemcpyAsync(l.mine.region(n), send[k], bytes, cudaMemcpyDefault, st));
    nvshmemx_putmem_signal_nbi_on_stream(l.theirs.region(n), l.mine.region(n), bytes, l.theirs.signal(n), n + 1,
                                         NVSHMEM_SIGNAL_SET, l.pe, st);
  }
  NV_CUDA(cudaGetLastError());
  return STF_SUCCESS;
}

int NvshmemTransport::wait_recv(Channel &c) {
  StreamChannel &s = c.get<StreamChannel>();
  const cudaStream_t st = stream();
  const std::uint64_t n = s.seq;
  bool host = false;
  const std::vector<Link> &links = recv_[direction_index(s.dir)];
  for (std::size_t k = 0; k < links.size(); k++) {
    const Link &l = links[k];
    nvshmemx_signal_wait_until_on_stream(l.mine.signal(n), NVSHMEM_CMP_EQ, n + 1, st);
    NV_CUDA(cudaMemcpyAsync(s.recv[k], l.mine.region(n), static_cast<std::size_t>(l.units) * s.unit_bytes,
                            cudaMemcpyDefault, st));
    nvshmemx_signal_op_on_stream(l.theirs.credit(n), n + 1, NVSHMEM_SIGNAL_SET, l.pe, st);
    host |= on_host(s.recv[k]);
  }
  NV_CUDA(cudaGetLastError());
  if (host) NV_CUDA(cudaStreamSynchronize(st));  // the ops layer reads host memory next
  return STF_SUCCESS;
}

int NvshmemTransport::wait_send(Channel &c) {
  StreamChannel &s = c.get<StreamChannel>();
  // Host send buffers: the copies read them on the stream.
  if (s.host_send) NV_CUDA(cudaStreamSynchronize(stream()));
  end(s);
  return STF_SUCCESS;
}

}  // namespace
}  // namespace stf

extern "C" int stf_nvshmem_plugin_abi() { return stf::kNvshmemPluginAbi; }

// Checks, each agreed by all ranks before the next (creation is collective
// and no rank may return while another goes on): a GPU, the cuda device
// active, NVSHMEM up with every rank a PE, then the SF's block of the pool.
extern "C" int stf_nvshmem_make_transport(const stf::TransportContext &ctx, const stf::NvshmemPluginArgs &args,
                                          std::unique_ptr<stf::Transport> *out) {
  using namespace stf;
  g_args = args;
  std::string why = no_gpu();
  if (why.empty() && (!ctx.device.name || std::strcmp(ctx.device.name(), "cuda") != 0))
    why = std::string("the active starforest device is '") + (ctx.device.name ? ctx.device.name() : "") +
          "', not cuda (stf_device_select(\"cuda\") or -stf_device cuda)";
  STF_CHECK(agree(ctx.comm.comm, why));
  STF_CHECK(ensure_nvshmem(ctx.comm.comm, args));
  auto t = std::make_unique<NvshmemTransport>(ctx, args);
  STF_CHECK(t->init());
  *out = std::move(t);
  return STF_SUCCESS;
}

extern "C" int stf_nvshmem_start(MPI_Comm comm, const stf::NvshmemPluginArgs &args) {
  using namespace stf;
  g_args = args;
  STF_CHECK(agree(comm, no_gpu()));
  return start_nvshmem(comm, args);
}
