// The nvshmem transport: putsignal's protocol (slot_ring.h) on GPU memory,
// every step queued on the library stream with NVSHMEM's host-side stream
// calls, so the host never waits for a message. Built as the plug-in
// libstarforest_nvshmem.so (plugin.h says why); host calls only, hence no
// device code and no -rdc: NVSHMEM's device library is not linked.
//
// STATUS: compiled in CI, never run: the machines it was written on have no
// GPU. Treat it as a reviewed sketch until a GPU run has tested it.
//
// Design, and why:
// - One symmetric block per rank (nvshmem_malloc, the largest rank's size:
//   the call is collective and symmetric). Per peer, direction and side it
//   holds a SlotRing of S regions: on the receive side regions + signal
//   words the sender writes; on the send side an outbox (regions the
//   message is copied into before the put: a put's source must be
//   symmetric on network transports) + credit words the receiver writes.
//   Ranks tell their senders (receivers) where their rings (credits) lie,
//   once, by MPI.
// - Message n of a direction (every rank numbers an SF's operations alike)
//   goes in region n % S with signal n + 1. Sender, on the stream: wait
//   until credit >= the region's previous message + 1, copy into the outbox,
//   nvshmemx_putmem_signal_nbi_on_stream (SIGNAL_SET n + 1). Receiver, in
//   wait_recv, on the stream: wait until signal == n + 1, copy the region
//   into the ops layer's buffer (which then unpacks it on the stream),
//   return the credit n + 1 with nvshmemx_signal_op_on_stream.
// - The copies: the ops layer lends only host memory (Transport::lends), so
//   messages are copied once more on each side than in putsignal.
// - Waits on a stream cannot yield to other work, so an operation of a
//   direction may begin only once the one S before it has ended on this
//   rank (else STF_ERR_UNSUPPORTED): then every stream wait is for an
//   operation every rank has already queued, and nothing deadlocks.
// - Messages larger than their region (units of more than
//   -stf_nvshmem_unit_bytes) are STF_ERR_UNSUPPORTED: regions are fixed at
//   set-up, when units are not known yet.
// - Host memory works (cudaMemcpyAsync reaches it), but then the waits
//   synchronise the stream before the ops layer reads it.
// - NVSHMEM starts on the first SF that chooses it, over that SF's
//   communicator (NVSHMEMX_INIT_WITH_MPI_COMM), and stops at MPI_Finalize
//   (an attribute on MPI_COMM_SELF). nvshmem_malloc and nvshmem_free are
//   collective over all PEs: SFs must be on a communicator of all of them,
//   and be set up and destroyed in the same order on every rank.
// - Fetch-and-op: basic (the registry row says so).
#include <cuda_runtime.h>
#include <mpi.h>
#include <nvshmem_host.h>  // the host API alone, without the device headers

#include <algorithm>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.h"  // STF_CHECK only: the plug-in calls nothing of libstarforest
#include "transport/nvshmem/plugin.h"
#include "transport/slot_ring.h"

namespace stf {
namespace {

constexpr int kDirections = 2;
int dir_index(Direction d) { return d == Direction::root_to_leaf ? 0 : 1; }
constexpr int tag_ring[kDirections] = {0, 1};    // set-up: where my receive ring lies
constexpr int tag_credit[kDirections] = {2, 3};  // set-up: where my credits lie

NvshmemPluginArgs g_args;     // from libstarforest, for errors
bool g_finalized = false;     // NVSHMEM stopped (MPI_Finalize)
int unsupported(const std::string &why) {
  return g_args.set_error(STF_ERR_UNSUPPORTED, "-stf_type nvshmem: %s", why.c_str());
}
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

// Agreed failure: every rank returns the lowest failing rank's reason.
int agree(MPI_Comm comm, const std::string &reason) {
  std::string theirs;
  const int rank = lowest_failure(comm, reason, &theirs);
  return rank < 0 ? STF_SUCCESS : unsupported("rank " + std::to_string(rank) + ": " + theirs);
}

bool on_host(const void *p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();  // unregistered host memory on old runtimes
    return true;
  }
  return a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged;
}

// Stops NVSHMEM when MPI_Finalize frees MPI_COMM_SELF's attributes (first).
int finalize_nvshmem(MPI_Comm, int, void *, void *) {
  if (!g_finalized) nvshmemx_hostlib_finalize();
  g_finalized = true;
  return MPI_SUCCESS;
}

// NVSHMEM up on every rank of comm, which must hold all PEs.
int start_nvshmem(MPI_Comm comm) {
  std::string why;
  static MPI_Comm boot = MPI_COMM_NULL;  // NVSHMEM's bootstrap may keep the pointer
  if (g_finalized) why = "NVSHMEM was stopped (MPI is finalizing)";
  else if (nvshmemx_init_status() == NVSHMEM_STATUS_NOT_INITIALIZED) {
    boot = comm;
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    // Not nvshmemx_init_attr: it exits the process when NVSHMEM fails.
    if (nvshmemx_set_attr_mpi_comm_args(&boot, &attr) != 0 ||
        nvshmemx_hostlib_init_attr(NVSHMEMX_INIT_WITH_MPI_COMM, &attr) != 0) {
      why = "the NVSHMEM runtime could not be initialised (NVSHMEM_DEBUG=INFO says why)";
    } else {
      int key = MPI_KEYVAL_INVALID;
      MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalize_nvshmem, &key, nullptr);
      MPI_Comm_set_attr(MPI_COMM_SELF, key, nullptr);
    }
  }
  if (const int rc = agree(comm, why)) return rc;
  int size = 0;
  MPI_Comm_size(comm, &size);
  if (nvshmem_n_pes() != size)
    why = "the SF's communicator has " + std::to_string(size) + " ranks, NVSHMEM " + std::to_string(nvshmem_n_pes()) +
          " PEs (it started on another communicator; symmetric allocation needs all PEs)";
  return agree(comm, why);
}

// One peer of one direction, as sender or receiver.
struct Link {
  int rank = 0, pe = 0;
  stf_int units = 0;
  std::size_t capacity = 0;  // bytes a region holds
  SlotRing mine;    // in my block: receive ring, or outbox + credits
  SlotRing theirs;  // send side: the peer's receive ring, receive side: the peer's outbox + credits
  std::vector<std::uint64_t> last_in_region;  // send side: per region, its last message + 1
};

struct NvChannel : ChannelState {
  std::uint64_t seq = 0;
  bool active = false;  // from the operation's first call to wait_send
  Direction dir = Direction::root_to_leaf;
  std::size_t unit_bytes = 0;
  void *const *recv = nullptr;  // the ops layer's receive buffers (post_recv)
  bool host_send = false;       // some send buffer was host memory
  std::vector<std::uint64_t> *ended = nullptr;  // the transport's per-direction record
};

class NvshmemTransport final : public TransportDefaults {
 public:
  NvshmemTransport(const TransportContext &ctx, const NvshmemPluginArgs &a)
      : comm_(ctx.comm), plan_(ctx.plan), device_(ctx.device), slots_(a.slots), unit_capacity_(a.unit_bytes) {}
  ~NvshmemTransport() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (heap_ && !finalized && !g_finalized) nvshmem_free(heap_);  // collective over all PEs
  }
  int init();

  const char *name() const override { return "nvshmem"; }
  std::string describe() const override {
    return "nvshmem (NVSHMEM put with signal on the library stream, " + std::to_string(slots_) +
           " regions per peer and direction of " + std::to_string(unit_capacity_) +
           " B per unit; fetch-and-op: basic fallback)";
  }
  std::string describe_rank() const override {
    return "nvshmem: PE " + std::to_string(nvshmem_my_pe()) + ", " + std::to_string((heap_bytes_ + 1023) / 1024) +
           " KiB of symmetric memory";
  }
  bool sends_may_be_deferred() const override { return false; }  // already asynchronous on the stream

  int post_recv(Channel &c, Direction d, Leg, std::size_t ub, void *const *recv) override {
    NvChannel *s = nullptr;
    STF_CHECK(start(c, d, ub, &s));
    s->recv = recv;
    return STF_SUCCESS;
  }
  int post_send(Channel &c, Direction d, Leg, std::size_t ub, const void *const *send) override;
  int wait_recv(Channel &c) override;
  int wait_send(Channel &c) override;
  // Arrival is known to the stream only: the waits queue and return.
  int test_recv(Channel &, bool *done) override {
    *done = true;
    return STF_SUCCESS;
  }
  int test_send(Channel &, bool *done) override {
    *done = true;
    return STF_SUCCESS;
  }

 private:
  cudaStream_t stream() const { return static_cast<cudaStream_t>(device_.stream ? device_.stream() : nullptr); }
  int start(Channel &c, Direction d, std::size_t ub, NvChannel **out);
  int check_fits(const std::vector<Link> &links, std::size_t ub) const;
  int exchange(int tag, const std::vector<Link> &to, const std::vector<MPI_Aint> &values,
               const std::vector<Link> &from, std::vector<MPI_Aint> *got);

  const Comm &comm_;
  const Plan &plan_;
  const DeviceView device_;
  const int slots_;
  const std::size_t unit_capacity_;
  std::vector<Link> send_[kDirections], recv_[kDirections];
  std::uint64_t next_seq_[kDirections] = {0, 0};
  // Per direction, operations begun and not ended: their sequence numbers.
  std::vector<std::uint64_t> in_flight_[kDirections];
  char *heap_ = nullptr;
  std::size_t heap_bytes_ = 0;
};

int NvshmemTransport::init() {
  std::vector<int> pe_of(comm_.size);
  const int me = nvshmem_my_pe();
  NV_MPI(MPI_Allgather(&me, 1, MPI_INT, pe_of.data(), 1, MPI_INT, comm_.comm));
  // My block: per direction the receive rings, then the outboxes.
  std::vector<MPI_Aint> ring_at[kDirections], credit_at[kDirections];
  for (Direction d : {Direction::root_to_leaf, Direction::leaf_to_root}) {
    const int i = dir_index(d);
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
  unsigned long long need = heap_bytes_ + kLine, most = 0;
  NV_MPI(MPI_Allreduce(&need, &most, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm_.comm));
  heap_ = static_cast<char *>(nvshmem_malloc(most));  // collective; aligned
  STF_CHECK(agree(comm_.comm, heap_ ? "" : "nvshmem_malloc(" + std::to_string(most) + ") failed"));
  NV_CUDA(cudaMemset(heap_, 0, most));
  NV_CUDA(cudaDeviceSynchronize());  // zero before any peer learns where to write
  for (int i = 0; i < kDirections; i++) {
    for (std::size_t k = 0; k < recv_[i].size(); k++)
      recv_[i][k].mine = SlotRing::at(heap_ + ring_at[i][k], slots_, recv_[i][k].capacity);
    for (std::size_t k = 0; k < send_[i].size(); k++)
      send_[i][k].mine = SlotRing::at(heap_ + credit_at[i][k], slots_, send_[i][k].capacity);
    // Symmetric addresses: my heap_ + the peer's offset names the peer's copy.
    std::vector<MPI_Aint> theirs;
    STF_CHECK(exchange(comm_.transport_tag(tag_ring[i]), recv_[i], ring_at[i], send_[i], &theirs));
    for (std::size_t k = 0; k < send_[i].size(); k++)
      send_[i][k].theirs = SlotRing::at(heap_ + theirs[k], slots_, send_[i][k].capacity);
    STF_CHECK(exchange(comm_.transport_tag(tag_credit[i]), send_[i], credit_at[i], recv_[i], &theirs));
    for (std::size_t k = 0; k < recv_[i].size(); k++)
      recv_[i][k].theirs = SlotRing::at(heap_ + theirs[k], slots_, recv_[i][k].capacity);
  }
  return STF_SUCCESS;
}

int NvshmemTransport::exchange(int tag, const std::vector<Link> &to, const std::vector<MPI_Aint> &values,
                               const std::vector<Link> &from, std::vector<MPI_Aint> *got) {
  got->assign(from.size(), 0);
  std::vector<MPI_Request> reqs(from.size() + to.size());
  for (std::size_t k = 0; k < from.size(); k++)
    NV_MPI(MPI_Irecv(&(*got)[k], 1, MPI_AINT, from[k].rank, tag, comm_.comm, &reqs[k]));
  for (std::size_t k = 0; k < to.size(); k++)
    NV_MPI(MPI_Isend(&values[k], 1, MPI_AINT, to[k].rank, tag, comm_.comm, &reqs[from.size() + k]));
  NV_MPI(MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE));
  return STF_SUCCESS;
}

int NvshmemTransport::check_fits(const std::vector<Link> &links, std::size_t ub) const {
  for (const Link &l : links)
    if (static_cast<std::size_t>(l.units) * ub > l.capacity)
      return g_args.set_error(STF_ERR_UNSUPPORTED,
                              "nvshmem transport: units of %zu B do not fit its regions (-stf_nvshmem_unit_bytes %zu)",
                              ub, unit_capacity_);
  return STF_SUCCESS;
}

int NvshmemTransport::start(Channel &c, Direction d, std::size_t ub, NvChannel **out) {
  NvChannel &s = c.get<NvChannel>();
  *out = &s;
  if (s.active) return STF_SUCCESS;
  const int i = dir_index(d);
  STF_CHECK(check_fits(send_[i], ub));
  STF_CHECK(check_fits(recv_[i], ub));
  std::vector<std::uint64_t> &flying = in_flight_[i];
  const std::uint64_t n = next_seq_[i];
  if (!flying.empty() && *std::min_element(flying.begin(), flying.end()) + slots_ <= n)
    return g_args.set_error(STF_ERR_UNSUPPORTED,
                            "nvshmem transport: operation %llu of a direction begins before operation %llu has ended "
                            "(at most -stf_nvshmem_slots %d in flight: stream waits cannot yield)",
                            static_cast<unsigned long long>(n), static_cast<unsigned long long>(n - slots_), slots_);
  next_seq_[i]++;
  flying.push_back(n);
  s = NvChannel{};
  s.seq = n;
  s.active = true;
  s.dir = d;
  s.unit_bytes = ub;
  s.ended = &flying;
  return STF_SUCCESS;
}

int NvshmemTransport::post_send(Channel &c, Direction d, Leg, std::size_t ub, const void *const *send) {
  NvChannel *s = nullptr;
  STF_CHECK(start(c, d, ub, &s));
  const cudaStream_t st = stream();
  const std::uint64_t n = s->seq;
  for (std::size_t k = 0; k < send_[dir_index(d)].size(); k++) {
    Link &l = send_[dir_index(d)][k];
    const std::size_t bytes = static_cast<std::size_t>(l.units) * ub;
    std::uint64_t &last = l.last_in_region[l.mine.slot(n)];
    if (last) nvshmemx_signal_wait_until_on_stream(l.mine.credit(n), NVSHMEM_CMP_GE, last, st);
    last = n + 1;
    s->host_send |= on_host(send[k]);
    NV_CUDA(cudaMemcpyAsync(l.mine.region(n), send[k], bytes, cudaMemcpyDefault, st));
    nvshmemx_putmem_signal_nbi_on_stream(l.theirs.region(n), l.mine.region(n), bytes, l.theirs.signal(n), n + 1,
                                         NVSHMEM_SIGNAL_SET, l.pe, st);
  }
  NV_CUDA(cudaGetLastError());
  return STF_SUCCESS;
}

int NvshmemTransport::wait_recv(Channel &c) {
  NvChannel &s = c.get<NvChannel>();
  const cudaStream_t st = stream();
  const std::uint64_t n = s.seq;
  bool host = false;
  const std::vector<Link> &links = recv_[dir_index(s.dir)];
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
  NvChannel &s = c.get<NvChannel>();
  // Host send buffers: the copies read them on the stream.
  if (s.host_send) NV_CUDA(cudaStreamSynchronize(stream()));
  if (s.active) s.ended->erase(std::find(s.ended->begin(), s.ended->end(), s.seq));
  s.active = false;
  return STF_SUCCESS;
}

}  // namespace
}  // namespace stf

extern "C" int stf_nvshmem_plugin_abi() { return stf::kNvshmemPluginAbi; }

// Checks, each agreed by all ranks before the next (creation is collective
// and no rank may return while another goes on): a GPU, the cuda device
// active, NVSHMEM up over all PEs, then the symmetric block.
extern "C" int stf_nvshmem_make_transport(const stf::TransportContext &ctx, const stf::NvshmemPluginArgs &args,
                                          std::unique_ptr<stf::Transport> *out) {
  using namespace stf;
  g_args = args;
  std::string why;
  int gpus = 0;
  const cudaError_t e = cudaGetDeviceCount(&gpus);
  if (e != cudaSuccess || gpus == 0) {
    why = std::string("no CUDA device (cudaGetDeviceCount: ") + (e ? cudaGetErrorString(e) : "0 devices") + ")";
    cudaGetLastError();
  } else if (!ctx.device.name || std::strcmp(ctx.device.name(), "cuda") != 0) {
    why = std::string("the active starforest device is '") + (ctx.device.name ? ctx.device.name() : "") +
          "', not cuda (stf_device_select(\"cuda\") or -stf_device cuda)";
  }
  STF_CHECK(agree(ctx.comm.comm, why));
  STF_CHECK(start_nvshmem(ctx.comm.comm));
  auto t = std::make_unique<NvshmemTransport>(ctx, args);
  STF_CHECK(t->init());
  *out = std::move(t);
  return STF_SUCCESS;
}
