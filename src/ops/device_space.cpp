// Device memory in an exchange, and the stream-model steps around it: the
// device's memory space and hooks (device_space.h, hooks.h).
#include "ops/device_space.h"

#include <algorithm>
#include <cstdlib>

#include "core/error.h"
#include "device/device_indices.h"

namespace stf {

DeviceState::~DeviceState() {
  if (event_device) {
    event_device->event_destroy(done_event);
    event_device->event_destroy(ready_event);
  }
}

namespace {

bool is_dev(stf_memtype m) { return m == STF_MEMTYPE_DEVICE; }

// Model C needs a transport that lets sends follow later receives (window
// with fence or pscw does not: it runs as B, and the view says so).
stf_stream_model model_of(stf_request r) {
  const stf_stream_model m = r->owner->opts->stream_model;
  return m == STF_STREAM_MODEL_C && !r->mover->transport->sends_may_be_deferred() ? STF_STREAM_MODEL_B : m;
}

// A transport whose transfers are stream work (queues_on_stream) reaches
// device memory itself: staging would only add copies.
bool staged_path(stf_request r) {
  switch (r->owner->opts->device_aware) {
    case DeviceAware::on: return false;
    case DeviceAware::off: return true;
    case DeviceAware::autodetect: break;
  }
  return !r->mover->transport->queues_on_stream() && !r->device->dev->mpi_accepts_device_memory();
}

// Host waits and transfers, counted on the SF the user called.
int counted_launch(stf_request r, int rc) {
  r->owner->stats.device_kernel_launches++;
  return rc;
}
// l as device kernels read it: its array copied to the device (once per plan).
int on_device(stf_request r, const IndexList &l, IndexList *out) {
  return r->mover->device_indices->get(*r->device->dev, l, out);
}
int stream_sync(stf_request r) {
  r->owner->stats.device_stream_syncs++;
  return r->device->dev->stream_synchronize(r->device->dev->library_stream());
}
int device_sync(stf_request r) {
  r->owner->stats.device_syncs++;
  return r->device->dev->synchronize();
}
int event_sync(stf_request r, Event e) {
  r->owner->stats.device_event_syncs++;
  return r->device->dev->event_synchronize(e);
}
int copy_async(stf_request r, void *dst, const void *src, std::size_t bytes, CopyKind kind) {
  if (bytes == 0) return STF_SUCCESS;
  if (kind == CopyKind::h2d) r->owner->stats.device_copies_h2d++;
  if (kind == CopyKind::d2h) r->owner->stats.device_copies_d2h++;
  return r->device->dev->memcpy_async(dst, src, bytes, kind, r->device->dev->library_stream());
}

bool check_mpi_enabled() {
  static const bool on = [] {
    const char *v = std::getenv("STF_DEVICE_CHECK_MPI");
    return v && *v == '1';
  }();
  return on;
}

// Whether all messages of one side together name a unit twice (cached per SF).
bool side_has_duplicates(stf_request r, const Messages &m) {
  signed char &known = r->mover->device_dups[&m == &r->mover->plan->root ? 0 : 1];
  if (known < 0) {
    stf_int top = 0;
    for (stf_int i : m.idx) top = std::max(top, i + 1);
    std::vector<char> seen(static_cast<std::size_t>(top), 0);
    known = 0;
    for (stf_int i : m.idx)
      if (seen[i]++) known = 1;
  }
  return known == 1;
}

// The previous use of this slot may still have device work reading or
// writing its buffers (an unpack after end): wait for it, unless done.
int settle_slot(stf_request r) {
  DeviceState &d = *r->device;
  if (!d.pending) return STF_SUCCESS;
  bool done = false;
  STF_CHECK(d.event_device->event_query(d.done_event, &done));
  if (!done) {
    r->owner->stats.device_event_syncs++;
    STF_CHECK(d.event_device->event_synchronize(d.done_event));
  }
  d.pending = false;
  return STF_SUCCESS;
}

// The slot's events, made by the device in use.
int ensure_events(DeviceState &d) {
  Device *dev = d.dev;
  if (d.event_device == dev) return STF_SUCCESS;
  if (d.event_device) {
    d.event_device->event_destroy(d.done_event);
    d.event_device->event_destroy(d.ready_event);
  }
  d.event_device = nullptr;
  STF_CHECK(dev->event_create(&d.done_event));
  if (int rc = dev->event_create(&d.ready_event)) {
    dev->event_destroy(d.done_event);
    return rc;
  }
  d.event_device = dev;
  return STF_SUCCESS;
}

// Results still queued on the stream read or write this slot's buffers:
// model A waits for them, the others record the slot's done event.
int finish_work(stf_request r) {
  DeviceState &d = *r->device;
  if (model_of(r) == STF_STREAM_MODEL_A) return stream_sync(r);
  STF_CHECK(d.dev->event_record(d.done_event, d.dev->library_stream()));
  d.pending = true;
  return STF_SUCCESS;
}

// Memory a transport lends is host memory (a shared heap): the device
// copies messages into it and out of it, as on the staged path, where the
// device lets it.
int check_lent(stf_request r) {
  if (r->device->dev->kernels_reach_host_memory()) return STF_SUCCESS;
  return set_error(STF_ERR_UNSUPPORTED,
                   "transport '%s' moves messages through host memory, which kernels of device '%s' cannot reach",
                   r->mover->transport->name(), r->device->dev->name());
}

class DeviceSpace final : public Space {
 public:
  bool offers_user_memory() const override { return false; }
  // Device memory, or (staged) pinned host memory that end copies up.
  int recv_buffer(stf_request r, const Flow &f, char **base) const override {
    DeviceState &d = *r->device;
    const std::size_t bytes = f.to.idx.size() * r->unit->packed_bytes;
    STF_CHECK(d.recv.reserve(d.dev, bytes));
    if (d.staged) STF_CHECK(d.stage_recv.reserve(d.dev, bytes));
    *base = d.staged ? d.stage_recv.data() : d.recv.data();
    return STF_SUCCESS;
  }
  // Not on the staged path (MPI must not see it) nor in model C (the stream
  // may still be reading it).
  bool user_memory_may_receive(stf_request r) const override {
    return !r->device->staged && model_of(r) != STF_STREAM_MODEL_C;
  }

  // From user memory where contiguous (device-aware), else packed by ONE
  // kernel over all messages (the plan's concatenated index list; slices of
  // contiguous messages are packed too). Staged: the packed buffer, or each
  // contiguous message, is copied into pinned memory.
  int prepare_send(stf_request r, const Flow &f, bool *enqueued) const override {
    DeviceState &d = *r->device;
    Device &dev = *d.dev;
    const Unit &u = *r->unit;
    const std::size_t pb = u.packed_bytes, bytes = f.from.idx.size() * pb;
    if (r->lent) STF_CHECK(check_lent(r));
    bool any_packed = false;
    for (int k = 0; k < f.from.count(); k++) any_packed |= !direct_ok(u, f.from_lists[k]);
    *enqueued = false;
    if (any_packed) {
      IndexList all;
      const stf_int n = static_cast<stf_int>(f.from.idx.size());
      STF_CHECK(on_device(r, IndexList::array(f.from.idx.data(), n, false), &all));
      STF_CHECK(d.send.reserve(&dev, bytes));
      STF_CHECK(counted_launch(r, d.kernels->pack(dev, dev.library_stream(), u, all, r->src, d.send.data())));
      count_pack(r, all);
      *enqueued = true;
    }
    // Message k as the device holds it: packed, or in user memory.
    auto packed = [&](int k) -> const char * {
      return any_packed ? d.send.data() + f.from.offset[k] * pb : at(r->src, f.from_lists[k].start, u.extent);
    };
    if (r->lent) {
      for (int k = 0; k < f.from.count(); k++)
        STF_CHECK(copy_async(r, r->lent_ptrs[k], packed(k), static_cast<std::size_t>(f.from.size(k)) * pb,
                             CopyKind::d2h));
      *enqueued |= f.from.count() > 0;
      return STF_SUCCESS;
    }
    if (d.staged && f.from.count() > 0) {
      STF_CHECK(d.stage_send.reserve(&dev, bytes));
      if (any_packed) {
        STF_CHECK(copy_async(r, d.stage_send.data(), d.send.data(), bytes, CopyKind::d2h));
      } else {
        for (int k = 0; k < f.from.count(); k++)
          STF_CHECK(copy_async(r, d.stage_send.data() + f.from.offset[k] * pb, packed(k),
                               static_cast<std::size_t>(f.from.size(k)) * pb, CopyKind::d2h));
      }
      *enqueued = true;
    }
    r->send_ptrs.resize(f.from.count());
    for (int k = 0; k < f.from.count(); k++) {
      if (d.staged) r->send_ptrs[k] = d.stage_send.data() + f.from.offset[k] * pb;
      else if (direct_ok(u, f.from_lists[k])) r->send_ptrs[k] = at(r->src, f.from_lists[k].start, u.extent);
      else r->send_ptrs[k] = d.send.data() + f.from.offset[k] * pb;
    }
    return STF_SUCCESS;
  }

  // Straight from the receive buffer, or (staged, or in memory the
  // transport lends) after copying it up. ONE kernel unpacks all messages
  // when none landed in user memory (atomics if a slot appears twice across
  // them); else one per buffered message. Staged or lent REPLACE messages on
  // contiguous slots are copied straight into user memory instead, when all
  // of them are.
  int unpack(stf_request r, const Flow &f) const override {
    DeviceState &d = *r->device;
    Device &dev = *d.dev;
    const Stream s = dev.library_stream();
    const Unit &u = *r->unit;
    const std::size_t pb = u.packed_bytes;
    if (f.to.idx.empty()) return STF_SUCCESS;
    if (d.staged || r->lent) {
      if (r->lent) STF_CHECK(check_lent(r));
      // Message k on the host: in the pinned buffer, or where the transport says.
      auto host = [&](int k) -> const char * {
        return r->lent ? static_cast<const char *>(r->recv_ptrs[k]) : d.stage_recv.data() + f.to.offset[k] * pb;
      };
      bool all_copies = r->op == MPI_REPLACE;
      for (int k = 0; k < f.to.count() && all_copies; k++)
        all_copies = direct_ok(u, f.to_lists[k]) && (!f.to_direct || f.to_direct[k]);
      if (all_copies) {
        for (int k = 0; k < f.to.count(); k++)
          STF_CHECK(copy_async(r, at(r->dst, f.to_lists[k].start, u.extent), host(k),
                               static_cast<std::size_t>(f.to.size(k)) * pb, CopyKind::h2d));
        return STF_SUCCESS;
      }
      if (r->lent) {
        STF_CHECK(d.recv.reserve(&dev, f.to.idx.size() * pb));
        for (int k = 0; k < f.to.count(); k++)
          STF_CHECK(copy_async(r, d.recv.data() + f.to.offset[k] * pb, host(k),
                               static_cast<std::size_t>(f.to.size(k)) * pb, CopyKind::h2d));
      } else {
        STF_CHECK(copy_async(r, d.recv.data(), d.stage_recv.data(), f.to.idx.size() * pb, CopyKind::h2d));
      }
    }
    const char *buf = d.recv.data();
    bool any_direct = false;
    for (int k = 0; k < f.to.count(); k++) any_direct |= r->recv_direct[k] != 0;
    if (!any_direct) {
      const bool dups = side_has_duplicates(r, f.to);
      IndexList all;
      STF_CHECK(on_device(r, IndexList::array(f.to.idx.data(), static_cast<stf_int>(f.to.idx.size()), dups), &all));
      STF_CHECK(counted_launch(r, d.kernels->unpack(dev, s, u, all, buf, r->dst, needs_atomics(all, true))));
      count_unpack(r, all);
      return STF_SUCCESS;
    }
    for (int k = 0; k < f.to.count(); k++)
      if (!r->recv_direct[k]) {
        IndexList list;
        STF_CHECK(on_device(r, f.to_lists[k], &list));
        STF_CHECK(counted_launch(
            r, d.kernels->unpack(dev, s, u, list, buf + f.to.offset[k] * pb, r->dst, needs_atomics(list, true))));
        count_unpack(r, f.to_lists[k]);
      }
    return STF_SUCCESS;
  }
};

const DeviceSpace space;

}  // namespace

const Space &device_space = space;

namespace {

// Begin of an operation on device data: the slot's previous device work,
// its events, model A's device sync, the data path (staged for fetch-and-op).
int begin_work(stf_request r, bool staged) {
  DeviceState &d = *r->device;
  d.staged = staged || staged_path(r);
  d.self_to_host = false;
  STF_CHECK(settle_slot(r));
  STF_CHECK(ensure_events(d));
  // Model A: the user's data may still be written (or, for the leaves, read)
  // on any stream.
  if (model_of(r) == STF_STREAM_MODEL_A) STF_CHECK(device_sync(r));
  return STF_SUCCESS;
}

}  // namespace

int DeviceHooks::before_pack(stf_request r) { return begin_work(r, false); }

// One wait (A: only for work enqueued since its device sync; C: none, end
// waits; none where the transfers follow the packing on the stream).
int DeviceHooks::before_mpi(stf_request r, const Flow &f, bool enqueued) {
  if (r->mover->transport->queues_on_stream()) return STF_SUCCESS;
  const bool sends_need_stream = is_dev(r->src_mem) && f.from.count() > 0;
  const stf_stream_model model = model_of(r);
  if (model == STF_STREAM_MODEL_B && (sends_need_stream || r->recv_in_user_device)) return stream_sync(r);
  if (model == STF_STREAM_MODEL_A && sends_need_stream && enqueued) return stream_sync(r);
  return STF_SUCCESS;
}

bool DeviceHooks::defers_sends(stf_request r) { return model_of(r) == STF_STREAM_MODEL_C; }

int DeviceHooks::prepare_deferred_sends(stf_request r, const Flow &f) {
  DeviceState &d = *r->device;
  d.send_waits_event = is_dev(r->src_mem) && f.from.count() > 0;
  if (d.send_waits_event) STF_CHECK(d.dev->event_record(d.ready_event, d.dev->library_stream()));
  return STF_SUCCESS;
}

int DeviceHooks::before_deferred_post(stf_request r) {
  return r->device->send_waits_event ? event_sync(r, r->device->ready_event) : STF_SUCCESS;
}

int DeviceHooks::self_part(stf_request r, const Flow &f) {
  DeviceState &d = *r->device;
  Device &dev = *d.dev;
  const Stream s = dev.library_stream();
  const Unit &u = *r->unit;
  const IndexList &from = f.self_from, &to = f.self_to;
  const bool atomic = needs_atomics(to, true);
  const std::size_t bytes = static_cast<std::size_t>(from.n) * u.packed_bytes;
  IndexList dfrom, dto;  // the same lists, read by the device
  if (is_dev(r->src_mem) && is_dev(r->dst_mem)) {
    STF_CHECK(on_device(r, from, &dfrom));
    STF_CHECK(on_device(r, to, &dto));
    return counted_launch(r, d.kernels->scatter(dev, s, u, dfrom, r->src, dto, r->dst, atomic));
  }
  STF_CHECK(d.self.reserve(&dev, bytes));
  grow(&r->selfbuf, bytes);
  if (is_dev(r->src_mem)) {  // gather on the device, copy down, unpack on the host in end
    STF_CHECK(on_device(r, from, &dfrom));
    STF_CHECK(counted_launch(r, d.kernels->pack(dev, s, u, dfrom, r->src, d.self.data())));
    STF_CHECK(copy_async(r, r->selfbuf.data(), d.self.data(), bytes, CopyKind::d2h));
    d.self_to_host = true;
    return STF_SUCCESS;
  }
  r->kernels->pack(u, from, r->src, r->selfbuf.data());  // gather on the host, copy up, unpack on the device
  STF_CHECK(copy_async(r, d.self.data(), r->selfbuf.data(), bytes, CopyKind::h2d));
  STF_CHECK(on_device(r, to, &dto));
  return counted_launch(r, d.kernels->unpack(dev, s, u, dto, d.self.data(), r->dst, atomic));
}

int DeviceHooks::after_unpack(stf_request r, const Flow &f) {
  if (r->device->self_to_host) {
    STF_CHECK(stream_sync(r));  // the d2h copy of the self part's sources
    r->kernels->unpack(*r->unit, f.self_to, r->selfbuf.data(), r->dst, r->op);
  }
  STF_CHECK(finish_work(r));
  // The transport's memory takes the next message once the unpack read it.
  return r->lent && model_of(r) != STF_STREAM_MODEL_A ? stream_sync(r) : STF_SUCCESS;
}

// STF_DEVICE_CHECK_MPI=1 (a debugging aid): every buffer handed to the
// transport for an operation on device data is looked up (first and last
// byte) in the device's memory map. Device memory there is counted, and is
// an error on the staged path. Limits: it sees only what the exchange
// passes to the transport, not what MPI does with it, and only backends
// whose memtype() knows every device block (emu does) can tell.
int DeviceHooks::check_for_mpi(stf_request r, const Messages &m, const void *const *bufs) {
  if (!check_mpi_enabled()) return STF_SUCCESS;
  Device &dev = *r->device->dev;
  for (int k = 0; k < m.count(); k++) {
    const std::size_t bytes = static_cast<std::size_t>(m.size(k)) * r->unit->packed_bytes;
    if (bytes == 0) continue;
    const char *p = static_cast<const char *>(bufs[k]);
    r->owner->stats.mpi_buffers_checked++;
    if (!is_dev(dev.memtype(p)) && !is_dev(dev.memtype(p + bytes - 1))) continue;
    r->owner->stats.device_buffers_to_mpi++;
    if (r->device->staged)
      return set_error(STF_ERR_INTERNAL, "staged path handed a device buffer to MPI (message %d of %d)", k,
                       m.count());
  }
  return STF_SUCCESS;
}

// ---- fetch-and-op ------------------------------------------------------------
// Staged on every path: the host kernels run on pinned host copies of the
// device arrays (leaf data and leafupdate over [minleaf, maxleaf], and the
// root data), made in begin: another rank's end may make this rank serve
// the root side of this operation before its own end (exchange.h). The
// results are copied back in end. The host waits in begin and end under
// every model (model A adds its device sync). Two fetch-and-ops in flight
// on the same device root data would each work on their own copy.

namespace {

// A host copy of n units of a device array from unit first on, addressed
// like the array (buf holds units [0, first + n)); returns the copy's base.
int stage_down(stf_request r, DeviceBuffer &buf, const void *data, stf_int first, stf_int n, void **base) {
  const std::size_t ext = r->unit->extent;
  STF_CHECK(buf.reserve(r->device->dev, static_cast<std::size_t>(first + n) * ext));
  STF_CHECK(copy_async(r, at(buf.data(), first, ext), at(data, first, ext), static_cast<std::size_t>(n) * ext,
                       CopyKind::d2h));
  *base = buf.data();
  return STF_SUCCESS;
}

}  // namespace

int DeviceHooks::fetch_in(stf_request r) {
  DeviceState &d = *r->device;
  const Graph &g = *r->mover->graph;
  STF_CHECK(begin_work(r, true));
  d.user_src = r->src, d.user_dst = r->dst, d.user_update = r->update;
  const stf_int nleaf = g.nleaves > 0 ? g.maxleaf - g.minleaf + 1 : 0;
  bool copied = false;
  void *base = nullptr;
  if (is_dev(r->src_mem) && nleaf > 0) {
    STF_CHECK(stage_down(r, d.stage_send, r->src, g.minleaf, nleaf, &base));
    r->src = base;
    copied = true;
  }
  if (is_dev(r->update_mem) && nleaf > 0) {
    STF_CHECK(stage_down(r, d.stage_update, r->update, g.minleaf, nleaf, &base));
    r->update = base;
    copied = true;
  }
  if (is_dev(r->dst_mem) && g.nroots > 0) {
    STF_CHECK(stage_down(r, d.stage_recv, r->dst, 0, g.nroots, &base));
    r->dst = base;
    copied = true;
  }
  return copied ? stream_sync(r) : STF_SUCCESS;
}

int DeviceHooks::fetch_out(stf_request r) {
  DeviceState &d = *r->device;
  const Graph &g = *r->mover->graph;
  const std::size_t ext = r->unit->extent;
  if (r->dst != d.user_dst)
    STF_CHECK(copy_async(r, d.user_dst, r->dst, static_cast<std::size_t>(g.nroots) * ext, CopyKind::h2d));
  if (r->update != d.user_update) {
    const stf_int nleaf = g.maxleaf - g.minleaf + 1;
    STF_CHECK(copy_async(r, at(d.user_update, g.minleaf, ext), at(r->update, g.minleaf, ext),
                         static_cast<std::size_t>(nleaf) * ext, CopyKind::h2d));
  }
  r->src = d.user_src, r->dst = d.user_dst, r->update = d.user_update;
  return finish_work(r);  // the copies read the staging buffers: the slot's next use waits
}

}  // namespace stf
