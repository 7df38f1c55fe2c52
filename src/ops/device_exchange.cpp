// Operations on device data (include/starforest.h, "devices").
//
// Two data paths: device-aware (device pointers go to MPI) and staged (pack
// on the device, one async copy to a pinned host buffer, MPI, one async
// copy back, unpack on the device; MPI never sees device memory). Packing,
// unpacking and the self part are kernel launches on the library stream.
//
// Three stream models say where the host waits (stf_stream_model):
//  A: device sync before anything reads the user's data, a stream sync before
//     MPI reads buffers the stream filled, and one at the end of end;
//  B: one stream sync in begin before MPI touches device memory, none in end;
//  C: no wait in begin: an event is recorded after packing, and the sends
//     are posted from end once it completed. Receives are posted in begin
//     (into library buffers, never straight into user device memory, which
//     the stream may still be reading), so messages can arrive early.
#include <algorithm>
#include <cstdlib>

#include "core/error.h"
#include "ops/exchange.h"
#include "ops/exchange_parts.h"

namespace stf {
namespace {

bool is_dev(stf_memtype m) { return m == STF_MEMTYPE_DEVICE; }

// Model C needs a transport that lets sends follow later receives (window
// with fence or pscw does not: it runs as B, and the view says so).
stf_stream_model model_of(stf_request r) {
  const stf_stream_model m = r->owner->opts.stream_model;
  return m == STF_STREAM_MODEL_C && !r->sf->transport->sends_may_be_deferred() ? STF_STREAM_MODEL_B : m;
}

bool staged_path(stf_request r) {
  switch (r->owner->opts.device_aware) {
    case DeviceAware::on: return false;
    case DeviceAware::off: return true;
    case DeviceAware::autodetect: break;
  }
  return !r->device->mpi_accepts_device_memory();
}

// Host waits and transfers, counted on the SF the user called.
void count_launch(stf_request r) { r->owner->stats.device_kernel_launches++; }
// l as device kernels read it: its array copied to the device (once per plan).
int on_device(stf_request r, const IndexList &l, IndexList *out) {
  return r->sf->plan->device_indices.get(*r->device, l, out);
}
void stream_sync(stf_request r) {
  r->device->stream_synchronize(r->device->library_stream());
  r->owner->stats.device_stream_syncs++;
}
void device_sync(stf_request r) {
  r->device->synchronize();
  r->owner->stats.device_syncs++;
}
void event_sync(stf_request r, Event e) {
  r->device->event_synchronize(e);
  r->owner->stats.device_event_syncs++;
}
void copy_async(stf_request r, void *dst, const void *src, std::size_t bytes, CopyKind kind) {
  if (bytes == 0) return;
  r->device->memcpy_async(dst, src, bytes, kind, r->device->library_stream());
  if (kind == CopyKind::h2d) r->owner->stats.device_copies_h2d++;
  if (kind == CopyKind::d2h) r->owner->stats.device_copies_d2h++;
}

// STF_DEVICE_CHECK_MPI=1: every buffer handed to the transport for an
// operation on device data is looked up (first and last byte) in the
// device's memory map. Device memory there is counted, and is an error on
// the staged path. Limits: it sees only what the exchange passes to the
// transport, not what MPI does with it, and only backends whose memtype()
// knows every device block (emu does) can tell.
bool check_mpi_enabled() {
  static const bool on = [] {
    const char *v = std::getenv("STF_DEVICE_CHECK_MPI");
    return v && *v == '1';
  }();
  return on;
}

int check_for_mpi(stf_request r, const Messages &m, const void *const *bufs) {
  if (!check_mpi_enabled()) return STF_SUCCESS;
  for (int k = 0; k < m.count(); k++) {
    const std::size_t bytes = static_cast<std::size_t>(m.size(k)) * r->unit->packed_bytes;
    if (bytes == 0) continue;
    const char *p = static_cast<const char *>(bufs[k]);
    r->owner->stats.mpi_buffers_checked++;
    if (!is_dev(r->device->memtype(p)) && !is_dev(r->device->memtype(p + bytes - 1))) continue;
    r->owner->stats.device_buffers_to_mpi++;
    if (r->staged)
      return set_error(STF_ERR_INTERNAL, "staged path handed a device buffer to MPI (message %d of %d)", k,
                       m.count());
  }
  return STF_SUCCESS;
}

// Whether all messages of one side together name a unit twice (cached in the plan).
bool side_has_duplicates(Plan &p, const Messages &m) {
  signed char &known = p.device_dups[&m == &p.root ? 0 : 1];
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
void settle_slot(stf_request r) {
  if (!r->device_pending) return;
  if (!r->event_device->event_query(r->done_event)) event_sync(r, r->done_event);
  r->device_pending = false;
}

// The slot's events, made by the device in use.
int ensure_events(stf_request r) {
  Device *dev = r->device;
  if (r->event_device == dev) return STF_SUCCESS;
  if (r->event_device) {
    r->event_device->event_destroy(r->done_event);
    r->event_device->event_destroy(r->ready_event);
  }
  r->event_device = nullptr;
  STF_CHECK(dev->event_create(&r->done_event));
  if (int rc = dev->event_create(&r->ready_event)) {
    dev->event_destroy(r->done_event);
    return rc;
  }
  r->event_device = dev;
  return STF_SUCCESS;
}

// Receives of a one-way exchange into user memory (REPLACE on contiguous
// slots) or the receive buffer: device memory, pinned host memory (staged),
// or the host buffer for host data. *into_user_device: whether some message
// lands straight in user device memory.
int prepare_device_recv(stf_request r, const Flow &f, bool *into_user_device) {
  const Unit &u = *r->unit;
  const std::size_t pb = u.packed_bytes, bytes = f.to.idx.size() * pb;
  const bool dst_dev = is_dev(r->dst_mem);
  char *base = nullptr;
  if (!dst_dev) {
    grow(&f.recv_buf, bytes);
    base = f.recv_buf.data();
  } else if (r->staged) {
    STF_CHECK(r->stage_recv.reserve(r->device, bytes));
    STF_CHECK(r->dev_recv.reserve(r->device, bytes));  // end copies up into it to unpack
    base = r->stage_recv.data();
  } else {
    STF_CHECK(r->dev_recv.reserve(r->device, bytes));
    base = r->dev_recv.data();
  }
  // User device memory takes no message on the staged path (MPI must not
  // see it) nor in model C (the stream may still be reading it).
  const bool user_ok = !dst_dev || (!r->staged && model_of(r) != STF_STREAM_MODEL_C);
  *into_user_device = false;
  r->recv_ptrs.resize(f.to.count());
  r->recv_direct.assign(f.to.count(), 0);
  for (int k = 0; k < f.to.count(); k++) {
    const bool direct =
        user_ok && r->op == MPI_REPLACE && direct_ok(u, f.to_lists[k]) && (!f.to_direct || f.to_direct[k]);
    r->recv_direct[k] = direct;
    r->recv_ptrs[k] = direct ? at(r->dst, f.to_lists[k].start, u.extent) : base + f.to.offset[k] * pb;
    *into_user_device |= direct && dst_dev;
  }
  return STF_SUCCESS;
}

// Sends of device data: from user memory where contiguous (device-aware),
// else packed by ONE kernel over all messages (the plan's concatenated
// index list; slices of contiguous messages are packed too). Staged: the
// packed buffer, or each contiguous message, is copied into pinned memory.
// *enqueued: whether device work was enqueued that the sends depend on.
int prepare_device_send(stf_request r, const Flow &f, bool *enqueued) {
  Device &dev = *r->device;
  const Unit &u = *r->unit;
  const std::size_t pb = u.packed_bytes, bytes = f.from.idx.size() * pb;
  bool any_packed = false;
  for (int k = 0; k < f.from.count(); k++) any_packed |= !direct_ok(u, f.from_lists[k]);
  *enqueued = false;
  if (any_packed) {
    IndexList all;
    const stf_int n = static_cast<stf_int>(f.from.idx.size());
    STF_CHECK(on_device(r, IndexList::array(f.from.idx.data(), n, false), &all));
    STF_CHECK(r->dev_send.reserve(&dev, bytes));
    r->dkernels->pack(dev, dev.library_stream(), u, all, r->src, r->dev_send.data());
    count_launch(r);
    count_pack(r, all);
    *enqueued = true;
  }
  if (r->staged && f.from.count() > 0) {
    STF_CHECK(r->stage_send.reserve(&dev, bytes));
    if (any_packed) {
      copy_async(r, r->stage_send.data(), r->dev_send.data(), bytes, CopyKind::d2h);
    } else {
      for (int k = 0; k < f.from.count(); k++)
        copy_async(r, r->stage_send.data() + f.from.offset[k] * pb, at(r->src, f.from_lists[k].start, u.extent),
                   static_cast<std::size_t>(f.from.size(k)) * pb, CopyKind::d2h);
    }
    *enqueued = true;
  }
  r->send_ptrs.resize(f.from.count());
  for (int k = 0; k < f.from.count(); k++) {
    if (r->staged) r->send_ptrs[k] = r->stage_send.data() + f.from.offset[k] * pb;
    else if (direct_ok(u, f.from_lists[k])) r->send_ptrs[k] = at(r->src, f.from_lists[k].start, u.extent);
    else r->send_ptrs[k] = r->dev_send.data() + f.from.offset[k] * pb;
  }
  return STF_SUCCESS;
}

int post_sends(stf_request r, Direction d) {
  Flow f = flow(r, d);
  STF_CHECK(check_for_mpi(r, f.from, r->send_ptrs.data()));
  return r->sf->transport->post_send(f.channel, d, f.tag, r->unit->packed_bytes, r->send_ptrs.data());
}

// The self part while messages fly: one scatter kernel when both sides are
// on the device; else a gather on one side and a copy across (device to
// host: end finishes it on the host).
int device_self_part(stf_request r, const Flow &f) {
  Device &dev = *r->device;
  const Stream s = dev.library_stream();
  const Unit &u = *r->unit;
  const IndexList &from = f.self_from, &to = f.self_to;
  r->self_to_host = false;
  if (from.n == 0 || (r->op == MPI_REPLACE && r->src == r->dst && r->sf->plan->self_in_place)) return STF_SUCCESS;
  r->owner->stats.scatter_calls++;
  const bool atomic = needs_atomics(to, true);
  const std::size_t bytes = static_cast<std::size_t>(from.n) * u.packed_bytes;
  IndexList dfrom, dto;  // the same lists, read by the device
  if (is_dev(r->src_mem) && is_dev(r->dst_mem)) {
    STF_CHECK(on_device(r, from, &dfrom));
    STF_CHECK(on_device(r, to, &dto));
    r->dkernels->scatter(dev, s, u, dfrom, r->src, dto, r->dst, atomic);
    count_launch(r);
  } else if (is_dev(r->src_mem)) {
    STF_CHECK(r->dev_self.reserve(&dev, bytes));
    grow(&r->selfbuf, bytes);
    STF_CHECK(on_device(r, from, &dfrom));
    r->dkernels->pack(dev, s, u, dfrom, r->src, r->dev_self.data());
    count_launch(r);
    copy_async(r, r->selfbuf.data(), r->dev_self.data(), bytes, CopyKind::d2h);
    r->self_to_host = true;
  } else {
    STF_CHECK(r->dev_self.reserve(&dev, bytes));
    grow(&r->selfbuf, bytes);
    r->kernels->pack(u, from, r->src, r->selfbuf.data());
    copy_async(r, r->dev_self.data(), r->selfbuf.data(), bytes, CopyKind::h2d);
    STF_CHECK(on_device(r, to, &dto));
    r->dkernels->unpack(dev, s, u, dto, r->dev_self.data(), r->dst, atomic);
    count_launch(r);
  }
  return STF_SUCCESS;
}

// Received messages into device data: straight from the receive buffer,
// or (staged) after copying it up. ONE kernel unpacks all messages when
// none landed in user memory (atomics if a slot appears twice across them);
// else one per buffered message. Staged REPLACE messages on contiguous slots
// are copied straight into user memory instead, when all of them are.
int unpack_into_device(stf_request r, const Flow &f) {
  Device &dev = *r->device;
  const Stream s = dev.library_stream();
  const Unit &u = *r->unit;
  const std::size_t pb = u.packed_bytes;
  if (f.to.idx.empty()) return STF_SUCCESS;
  const char *buf = r->dev_recv.data();
  if (r->staged) {
    bool all_copies = r->op == MPI_REPLACE;
    for (int k = 0; k < f.to.count() && all_copies; k++)
      all_copies = direct_ok(u, f.to_lists[k]) && (!f.to_direct || f.to_direct[k]);
    if (all_copies) {
      for (int k = 0; k < f.to.count(); k++)
        copy_async(r, at(r->dst, f.to_lists[k].start, u.extent), r->stage_recv.data() + f.to.offset[k] * pb,
                   static_cast<std::size_t>(f.to.size(k)) * pb, CopyKind::h2d);
      return STF_SUCCESS;
    }
    copy_async(r, r->dev_recv.data(), r->stage_recv.data(), f.to.idx.size() * pb, CopyKind::h2d);
    buf = r->dev_recv.data();
  }
  bool any_direct = false;
  for (int k = 0; k < f.to.count(); k++) any_direct |= r->recv_direct[k] != 0;
  if (!any_direct) {
    const bool dups = side_has_duplicates(*r->sf->plan, f.to);
    IndexList all;
    STF_CHECK(on_device(r, IndexList::array(f.to.idx.data(), static_cast<stf_int>(f.to.idx.size()), dups), &all));
    r->dkernels->unpack(dev, s, u, all, buf, r->dst, needs_atomics(all, true));
    count_launch(r);
    count_unpack(r, all);
    return STF_SUCCESS;
  }
  for (int k = 0; k < f.to.count(); k++)
    if (!r->recv_direct[k]) {
      IndexList list;
      STF_CHECK(on_device(r, f.to_lists[k], &list));
      r->dkernels->unpack(dev, s, u, list, buf + f.to.offset[k] * pb, r->dst, needs_atomics(list, true));
      count_launch(r);
      count_unpack(r, f.to_lists[k]);
    }
  return STF_SUCCESS;
}

}  // namespace

int post_deferred_sends(stf_sf sf, stf_request upto) {
  if (upto && !upto->send_deferred) return STF_SUCCESS;
  while (!sf->deferred_sends.empty()) {
    stf_request q = sf->deferred_sends.front();
    sf->deferred_sends.pop_front();
    q->send_deferred = false;
    if (q->send_waits_event) event_sync(q, q->ready_event);
    STF_CHECK(post_sends(q, q->send_dir));
    if (q == upto) break;
  }
  return STF_SUCCESS;
}

int device_begin(stf_request r, Direction d) {
  Flow f = flow(r, d);
  Device &dev = *r->device;
  const stf_stream_model model = model_of(r);
  const bool src_dev = is_dev(r->src_mem);
  r->staged = staged_path(r);
  settle_slot(r);
  STF_CHECK(ensure_events(r));
  // Model A: the user's data may still be written (or, for the leaves, read)
  // on any stream.
  if (model == STF_STREAM_MODEL_A) device_sync(r);

  bool into_user_device = false, enqueued = false;
  STF_CHECK(prepare_device_recv(r, f, &into_user_device));
  if (src_dev) STF_CHECK(prepare_device_send(r, f, &enqueued));
  else prepare_send(r, f.from, f.from_lists, r->src, &f.send_buf);

  // Before MPI reads device memory or a buffer the stream fills, or
  // overwrites user device memory the stream may still read: one wait (A:
  // only for work enqueued since its device sync; C: none, end waits).
  const bool sends_need_stream = src_dev && f.from.count() > 0;
  const bool deferred = model == STF_STREAM_MODEL_C;
  if (model == STF_STREAM_MODEL_B && (sends_need_stream || into_user_device)) stream_sync(r);
  if (model == STF_STREAM_MODEL_A && sends_need_stream && enqueued) stream_sync(r);

  STF_CHECK(check_for_mpi(r, f.to, r->recv_ptrs.data()));
  STF_CHECK(r->sf->transport->post_recv(f.channel, d, f.tag, r->unit->packed_bytes, r->recv_ptrs.data()));
  if (deferred) {
    r->send_waits_event = sends_need_stream;
    if (sends_need_stream) dev.event_record(r->ready_event, dev.library_stream());
  } else {
    STF_CHECK(post_deferred_sends(r->sf, nullptr));
    STF_CHECK(post_sends(r, d));
  }
  count_messages(r, f.from, f.to);
  STF_CHECK(device_self_part(r, f));
  if (deferred) {  // last: a failed begin must leave nothing queued
    r->send_dir = d;
    r->send_deferred = true;
    r->sf->deferred_sends.push_back(r);
  }
  return STF_SUCCESS;
}

int device_end(stf_request r, Direction d) {
  Flow f = flow(r, d);
  Device &dev = *r->device;
  STF_CHECK(post_deferred_sends(r->sf, r));
  STF_CHECK(r->sf->transport->wait_recv(f.channel));
  if (is_dev(r->dst_mem)) STF_CHECK(unpack_into_device(r, f));
  else unpack_received(r, f.to, f.to_lists, f.recv_buf, r->dst);
  if (r->self_to_host) {
    stream_sync(r);  // the d2h copy of the self part's sources
    r->kernels->unpack(*r->unit, f.self_to, r->selfbuf.data(), r->dst, r->op);
  }
  // Model A: results ready on return. Else work still queued reads this
  // slot's buffers: the next use waits for it.
  if (model_of(r) == STF_STREAM_MODEL_A) {
    stream_sync(r);
  } else {
    dev.event_record(r->done_event, dev.library_stream());
    r->device_pending = true;
  }
  return r->sf->transport->wait_send(f.channel);
}

// ---- fetch-and-op ------------------------------------------------------------
// Staged on every path: the host kernels run on pinned host copies of the
// device arrays (leaf data and leafupdate over [minleaf, maxleaf], and the
// root data), made in begin: another rank's end may make this rank serve
// the root side of this operation before its own end (ops/exchange.cpp).
// The results are copied back in end. The host waits in begin and end
// under every model (model A adds its device sync). Two fetch-and-ops in
// flight on the same device root data would each work on their own copy.

namespace {

// A host copy of n units of a device array from unit first on, addressed
// like the array (buf holds units [0, first + n)); returns the copy's base.
int stage_down(stf_request r, DeviceBuffer &buf, const void *data, stf_int first, stf_int n, void **base) {
  const std::size_t ext = r->unit->extent;
  STF_CHECK(buf.reserve(r->device, static_cast<std::size_t>(first + n) * ext));
  copy_async(r, at(buf.data(), first, ext), at(data, first, ext), static_cast<std::size_t>(n) * ext, CopyKind::d2h);
  *base = buf.data();
  return STF_SUCCESS;
}

}  // namespace

int device_fetch_begin(stf_request r) {
  stf_sf sf = r->sf;
  r->staged = true;
  settle_slot(r);
  STF_CHECK(ensure_events(r));
  if (model_of(r) == STF_STREAM_MODEL_A) device_sync(r);
  r->user_src = r->src, r->user_dst = r->dst, r->user_update = r->update;
  const stf_int nleaf = sf->nleaves > 0 ? sf->maxleaf - sf->minleaf + 1 : 0;
  bool copied = false;
  if (is_dev(r->src_mem) && nleaf > 0) {
    void *base = nullptr;
    STF_CHECK(stage_down(r, r->stage_send, r->src, sf->minleaf, nleaf, &base));
    r->src = base;
    copied = true;
  }
  if (is_dev(r->update_mem) && nleaf > 0) {
    void *base = nullptr;
    STF_CHECK(stage_down(r, r->stage_update, r->update, sf->minleaf, nleaf, &base));
    r->update = base;
    copied = true;
  }
  if (is_dev(r->dst_mem) && sf->nroots > 0) {
    void *base = nullptr;
    STF_CHECK(stage_down(r, r->stage_recv, r->dst, 0, sf->nroots, &base));
    r->dst = base;
    copied = true;
  }
  if (copied) stream_sync(r);
  return fetch_begin_host(r);
}

int device_fetch_end(stf_request r) {
  stf_sf sf = r->sf;
  const std::size_t ext = r->unit->extent;
  STF_CHECK(fetch_end_host(r));
  if (r->dst != r->user_dst)
    copy_async(r, r->user_dst, r->dst, static_cast<std::size_t>(sf->nroots) * ext, CopyKind::h2d);
  if (r->update != r->user_update) {
    const stf_int nleaf = sf->maxleaf - sf->minleaf + 1;
    copy_async(r, at(r->user_update, sf->minleaf, ext), at(r->update, sf->minleaf, ext),
               static_cast<std::size_t>(nleaf) * ext, CopyKind::h2d);
  }
  r->src = r->user_src, r->dst = r->user_dst, r->update = r->user_update;
  if (model_of(r) == STF_STREAM_MODEL_A) {
    stream_sync(r);
  } else {  // the copies read the staging buffers: the slot's next use waits
    r->device->event_record(r->done_event, r->device->library_stream());
    r->device_pending = true;
  }
  return STF_SUCCESS;
}

}  // namespace stf
