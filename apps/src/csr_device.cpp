// The distributed CSR matrix on a device: blocks in device memory, products
// as kernels (csr_kernels.h, a work item per segment), ghosts over the ghost
// SF on device data, in the three SpMV variants (split phase, event-based,
// two streams).
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <utility>

#include "apps_error.h"
#include "csr.h"
#include "csr_kernels.h"
#include "device_launch.h"

namespace stf_apps {

// A block's arrays in device memory.
struct DeviceBlock {
  stf_int *rows = nullptr, *rowptr = nullptr, *col = nullptr, *seg = nullptr, *segcol = nullptr;
  std::uint8_t *shape = nullptr;
  double *val = nullptr;
  CsrView view;
};

struct CsrDevice {
  DeviceBlock diag, off;
  double *ghost = nullptr;
  stf_stream second = nullptr;
  stf_event x_ready = nullptr, diag_done = nullptr;
  // Kernel arguments per (x, y): enqueued kernels may still read them, so
  // they are made once and kept until the matrix goes.
  std::map<std::pair<const double *, double *>, std::unique_ptr<BlockMult[]>> args;
  stf_csr_sync_counts counts{};
};

namespace {

template <class T>
int upload(const std::vector<T> &host, T **dev) {
  const std::size_t bytes = host.size() * sizeof(T);
  if (int rc = core(stf_device_malloc(bytes, reinterpret_cast<void **>(dev)), "stf_csr_to_device")) return rc;
  return bytes ? core(stf_device_memcpy(*dev, host.data(), bytes), "stf_csr_to_device") : STF_SUCCESS;
}

int upload_block(const CsrBlock &h, DeviceBlock *d) {
  int rc = upload(h.rows, &d->rows);
  if (!rc) rc = upload(h.rowptr, &d->rowptr);
  if (!rc) rc = upload(h.col, &d->col);
  if (!rc) rc = upload(h.seg, &d->seg);
  if (!rc) rc = upload(h.segcol, &d->segcol);
  if (!rc) rc = upload(h.shape, &d->shape);
  if (!rc) rc = upload(h.val, &d->val);
  if (rc) return rc;
  d->view = CsrView{h.nseg(), h.rows.empty() ? nullptr : d->rows, d->rowptr, d->col, d->seg, d->segcol, d->shape,
                    d->val};
  return STF_SUCCESS;
}

// The diagonal and off-diagonal products for this x and y.
BlockMult *args_for(stf_csr A, const double *x, double *y) {
  CsrDevice &d = *A->dev;
  auto &slot = d.args[{x, y}];
  if (!slot) {
    slot.reset(new BlockMult[2]);
    slot[0] = BlockMult{d.diag.view, x, y, false};
    slot[1] = BlockMult{d.off.view, d.ghost, y, true};
  }
  return slot.get();
}

// Every kind of host wait: stream, device, and event (model C waits in end
// for its packing event before posting the sends).
long long host_waits(stf_sf sf) {
  stf_stats st = stf_stats_init();
  stf_get_stats(sf, &st);
  return st.device_stream_syncs + st.device_syncs + st.device_event_syncs;
}

int launch(stf_stream s, const BlockMult *m) { return stf_apps::launch(s, m->block.nseg, m, "stf_csr_mult_device"); }

}  // namespace

int release_device(stf_csr A) {
  CsrDevice *d = A->dev;
  if (!d) return STF_SUCCESS;
  A->dev = nullptr;
  // Kernels of the last products may still run: let them finish first.
  int rc = core(stf_device_synchronize(), "stf_csr_destroy");
  if (d->second) {
    int r2 = core(stf_stream_destroy(d->second), "stf_csr_destroy");
    rc = rc ? rc : r2;
  }
  if (d->x_ready) stf_event_destroy(d->x_ready);
  if (d->diag_done) stf_event_destroy(d->diag_done);
  for (DeviceBlock *b : {&d->diag, &d->off})
    for (void *p : {static_cast<void *>(b->rows), static_cast<void *>(b->rowptr), static_cast<void *>(b->col),
                    static_cast<void *>(b->seg), static_cast<void *>(b->segcol), static_cast<void *>(b->shape),
                    static_cast<void *>(b->val)})
      if (p) stf_device_free(p);
  if (d->ghost) stf_device_free(d->ghost);
  delete d;
  return rc;
}

}  // namespace stf_apps

using namespace stf_apps;

extern "C" int stf_csr_to_device(stf_csr A) try {
  if (!A) return fail(STF_ERR_NULL, "the matrix handle is NULL");
  if (A->dev) return fail(STF_ERR_STATE, "stf_csr_to_device: the matrix is already on the device");
  CsrDevice *d = new (std::nothrow) CsrDevice;
  if (!d) return fail(STF_ERR_MEMORY, "cannot allocate the device copy");
  A->dev = d;
  int rc = upload_block(A->diag, &d->diag);
  if (!rc) rc = upload_block(A->off, &d->off);
  if (!rc) rc = upload(A->ghost, &d->ghost);
  if (!rc) rc = core(stf_stream_create(&d->second), "stf_csr_to_device");
  if (!rc) rc = core(stf_event_create(&d->x_ready), "stf_csr_to_device");
  if (!rc) rc = core(stf_event_create(&d->diag_done), "stf_csr_to_device");
  if (rc) release_device(A);
  return rc;
} STF_APPS_CATCH

extern "C" int stf_csr_mult_device(stf_csr A, const double *x, double *y, stf_csr_mult_variant variant) try {
  if (!A) return fail(STF_ERR_NULL, "the matrix handle is NULL");
  if (!A->dev) return fail(STF_ERR_STATE, "stf_csr_mult_device: call stf_csr_to_device first");
  if (variant != STF_CSR_MULT_SPLIT && variant != STF_CSR_MULT_EVENT && variant != STF_CSR_MULT_TWO_STREAMS)
    return fail(STF_ERR_ARG, "unknown SpMV variant %d", variant);
  if (A->nlocal > 0 && (!x || !y)) return fail(STF_ERR_NULL, "x or y is NULL");
  const char *device = nullptr;
  stf_device_get_name(&device);
  stf_memtype mx = STF_MEMTYPE_DEVICE, my = STF_MEMTYPE_DEVICE;
  if (A->nlocal > 0 && std::strcmp(device, "host") != 0) {
    stf_get_memtype(x, &mx);
    stf_get_memtype(y, &my);
  }
  if (mx != STF_MEMTYPE_DEVICE || my != STF_MEMTYPE_DEVICE)
    return fail(STF_ERR_ARG, "stf_csr_mult_device: x and y must be device memory of '%s'", device);

  CsrDevice &d = *A->dev;
  BlockMult *m = args_for(A, x, y);
  const stf_stream_model model = variant == STF_CSR_MULT_EVENT ? STF_STREAM_MODEL_C : STF_STREAM_MODEL_B;
  if (int rc = core(stf_set_stream_model(A->ghost_sf, model), "stf_csr_mult_device")) return rc;
  if (variant == STF_CSR_MULT_TWO_STREAMS) {
    // x is ready where the library stream stands now; the diagonal product
    // starts from there on the second stream, before begin's wait.
    if (int rc = core(stf_event_record(d.x_ready, nullptr), "stf_csr_mult_device")) return rc;
    if (int rc = core(stf_stream_wait_event(d.second, d.x_ready), "stf_csr_mult_device")) return rc;
    if (int rc = launch(d.second, &m[0])) return rc;
  }
  const long long w0 = host_waits(A->ghost_sf);
  stf_request req = nullptr;
  if (int rc = core(stf_bcast_begin(A->ghost_sf, MPI_DOUBLE, x, d.ghost, MPI_REPLACE, &req), "stf_csr_mult_device"))
    return rc;
  const long long w1 = host_waits(A->ghost_sf);
  if (variant != STF_CSR_MULT_TWO_STREAMS)
    if (int rc = launch(nullptr, &m[0])) return rc;
  if (int rc = core(stf_bcast_end(A->ghost_sf, &req), "stf_csr_mult_device")) return rc;
  const long long w2 = host_waits(A->ghost_sf);
  if (variant == STF_CSR_MULT_TWO_STREAMS) {
    // Join: the off-diagonal part is added once the diagonal product is in y.
    if (int rc = core(stf_event_record(d.diag_done, d.second), "stf_csr_mult_device")) return rc;
    if (int rc = core(stf_stream_wait_event(nullptr, d.diag_done), "stf_csr_mult_device")) return rc;
  }
  if (int rc = launch(nullptr, &m[1])) return rc;
  d.counts.mults++;
  d.counts.waits_in_begin += w1 - w0;
  d.counts.waits_in_end += w2 - w1;
  return STF_SUCCESS;
} STF_APPS_CATCH

extern "C" int stf_csr_get_sync_counts(stf_csr A, stf_csr_sync_counts *counts) try {
  if (!A) return fail(STF_ERR_NULL, "the matrix handle is NULL");
  if (!counts) return fail(STF_ERR_NULL, "counts is NULL");
  *counts = A->dev ? A->dev->counts : stf_csr_sync_counts{};
  return STF_SUCCESS;
} STF_APPS_CATCH
