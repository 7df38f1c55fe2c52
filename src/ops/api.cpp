// Public operation calls: argument checks, then begin/end through the ops layer.
#include "core/error.h"
#include "ops/exchange.h"

namespace stf {
namespace {

struct OpArgs {
  OpKind kind;
  MPI_Datatype type;
  MPI_Op op;
  const void *src;
  void *dst;
  void *update;
  int src_mem = -1, dst_mem = -1;  // stf_memtype, or -1: ask the device
};

// Where the data lives, and the device kernels when some of it is on the device.
int resolve_memory(const OpArgs &a, stf_request r) {
  STF_CHECK(active_device(&r->device));
  r->src_mem = a.src_mem >= 0 ? static_cast<stf_memtype>(a.src_mem) : r->device->memtype(a.src);
  r->dst_mem = a.dst_mem >= 0 ? static_cast<stf_memtype>(a.dst_mem) : r->device->memtype(a.dst);
  r->update_mem = a.update ? r->device->memtype(a.update) : STF_MEMTYPE_HOST;
  r->dkernels = nullptr;
  // Fetch-and-op on device data runs the host kernels on staged copies.
  if (a.kind == OpKind::fetch_and_op) return STF_SUCCESS;
  if (r->src_mem == STF_MEMTYPE_HOST && r->dst_mem == STF_MEMTYPE_HOST) return STF_SUCCESS;
  return get_device_kernels(*r->device, *r->unit, a.op, &r->dkernels);
}

int begin_kind(stf_request r) {
  switch (r->kind) {
    case OpKind::bcast:
    case OpKind::scatter: return one_way_begin(r, Direction::root_to_leaf);
    case OpKind::reduce:
    case OpKind::gather: return one_way_begin(r, Direction::leaf_to_root);
    case OpKind::fetch_and_op: return fetch_begin(r);
    case OpKind::degree: return STF_SUCCESS;
  }
  return set_error(STF_ERR_INTERNAL, "unknown operation kind");
}

int end_kind(stf_request r) {
  switch (r->kind) {
    case OpKind::bcast:
    case OpKind::scatter: return one_way_end(r, Direction::root_to_leaf);
    case OpKind::reduce:
    case OpKind::gather: return one_way_end(r, Direction::leaf_to_root);
    case OpKind::fetch_and_op: return fetch_end(r);
    case OpKind::degree: return STF_SUCCESS;
  }
  return set_error(STF_ERR_INTERNAL, "unknown operation kind");
}

// owner is the SF the user called; sf moves the data (the multi-SF for gather/scatter).
int begin(stf_sf owner, stf_sf sf, const OpArgs &a, stf_request *req) {
  if (!req) return set_error(STF_ERR_NULL, "%s_begin: request pointer is NULL", op_kind_name(a.kind));
  *req = nullptr;
  const Unit *unit = nullptr;
  const Kernels *kernels = nullptr, *copy = nullptr;
  STF_CHECK(resolve_unit(a.type, a.op, &unit, &kernels, &copy));
  STF_CHECK(ensure_setup(sf));
  bool roots_written = a.kind == OpKind::reduce || a.kind == OpKind::gather || a.kind == OpKind::fetch_and_op;
  const void *rootdata = roots_written ? a.dst : a.src;
  const void *leafdata = roots_written ? a.src : a.dst;
  STF_CHECK(check_data(sf, rootdata, leafdata, op_kind_name(a.kind)));
  if (a.kind == OpKind::fetch_and_op && sf->nleaves > 0 && !a.update)
    return set_error(STF_ERR_NULL, "fetch_and_op: leafupdate is NULL but this rank has %d leaves", sf->nleaves);
  stf_request r = nullptr;
  STF_CHECK(acquire_request(owner, sf, a.kind, unit->packed_bytes, &r));
  r->unit = unit;
  r->kernels = kernels;
  r->copy = copy;
  r->op = a.op;
  r->src = a.src;
  r->dst = a.dst;
  r->update = a.update;
  int rc = resolve_memory(a, r);
  if (!rc) rc = begin_kind(r);
  if (rc) {
    release_request(r);
    return rc;
  }
  *req = r;
  return STF_SUCCESS;
}

int end(stf_sf owner, stf_request *req, OpKind kind) {
  stf_request r = nullptr;
  STF_CHECK(take_request(owner, req, kind, &r));
  int rc = end_kind(r);
  release_request(r);
  *req = nullptr;
  return rc;
}

int blocking(stf_sf sf, const OpArgs &a) {
  stf_request r = nullptr;
  STF_CHECK(check_sf(sf));
  stf_sf mover = sf;
  if (a.kind == OpKind::gather || a.kind == OpKind::scatter) STF_CHECK(stf_get_multi_sf(sf, &mover));
  STF_CHECK(begin(sf, mover, a, &r));
  return end(sf, &r, a.kind);
}

int multi_begin(stf_sf sf, const OpArgs &a, stf_request *req) {
  STF_CHECK(check_sf(sf));
  stf_sf multi = nullptr;
  STF_CHECK(stf_get_multi_sf(sf, &multi));
  return begin(sf, multi, a, req);
}

}  // namespace
}  // namespace stf

using stf::OpArgs;
using stf::OpKind;

extern "C" int stf_bcast_begin(stf_sf sf, MPI_Datatype unit, const void *rootdata, void *leafdata, MPI_Op op,
                               stf_request *req) {
  STF_CHECK(stf::check_sf(sf));
  return stf::begin(sf, sf, OpArgs{OpKind::bcast, unit, op, rootdata, leafdata, nullptr}, req);
}
extern "C" int stf_bcast_end(stf_sf sf, stf_request *req) { return stf::end(sf, req, OpKind::bcast); }
extern "C" int stf_bcast(stf_sf sf, MPI_Datatype unit, const void *rootdata, void *leafdata, MPI_Op op) {
  return stf::blocking(sf, OpArgs{OpKind::bcast, unit, op, rootdata, leafdata, nullptr});
}

static int check_memtype(stf_memtype m, const char *what) {
  if (m != STF_MEMTYPE_HOST && m != STF_MEMTYPE_DEVICE)
    return stf::set_error(STF_ERR_ARG, "%s: memory type %d is neither STF_MEMTYPE_HOST nor STF_MEMTYPE_DEVICE", what,
                          static_cast<int>(m));
  return STF_SUCCESS;
}

extern "C" int stf_bcast_begin_mem(stf_sf sf, MPI_Datatype unit, stf_memtype rootmtype, const void *rootdata,
                                   stf_memtype leafmtype, void *leafdata, MPI_Op op, stf_request *req) {
  STF_CHECK(stf::check_sf(sf));
  STF_CHECK(check_memtype(rootmtype, "stf_bcast_begin_mem"));
  STF_CHECK(check_memtype(leafmtype, "stf_bcast_begin_mem"));
  return stf::begin(sf, sf, OpArgs{OpKind::bcast, unit, op, rootdata, leafdata, nullptr, rootmtype, leafmtype}, req);
}

extern "C" int stf_reduce_begin(stf_sf sf, MPI_Datatype unit, const void *leafdata, void *rootdata, MPI_Op op,
                                stf_request *req) {
  STF_CHECK(stf::check_sf(sf));
  return stf::begin(sf, sf, OpArgs{OpKind::reduce, unit, op, leafdata, rootdata, nullptr}, req);
}
extern "C" int stf_reduce_begin_mem(stf_sf sf, MPI_Datatype unit, stf_memtype leafmtype, const void *leafdata,
                                    stf_memtype rootmtype, void *rootdata, MPI_Op op, stf_request *req) {
  STF_CHECK(stf::check_sf(sf));
  STF_CHECK(check_memtype(leafmtype, "stf_reduce_begin_mem"));
  STF_CHECK(check_memtype(rootmtype, "stf_reduce_begin_mem"));
  return stf::begin(sf, sf, OpArgs{OpKind::reduce, unit, op, leafdata, rootdata, nullptr, leafmtype, rootmtype}, req);
}
extern "C" int stf_reduce_end(stf_sf sf, stf_request *req) { return stf::end(sf, req, OpKind::reduce); }
extern "C" int stf_reduce(stf_sf sf, MPI_Datatype unit, const void *leafdata, void *rootdata, MPI_Op op) {
  return stf::blocking(sf, OpArgs{OpKind::reduce, unit, op, leafdata, rootdata, nullptr});
}

extern "C" int stf_fetch_and_op_begin(stf_sf sf, MPI_Datatype unit, void *rootdata, const void *leafdata,
                                      void *leafupdate, MPI_Op op, stf_request *req) {
  STF_CHECK(stf::check_sf(sf));
  return stf::begin(sf, sf, OpArgs{OpKind::fetch_and_op, unit, op, leafdata, rootdata, leafupdate}, req);
}
extern "C" int stf_fetch_and_op_end(stf_sf sf, stf_request *req) { return stf::end(sf, req, OpKind::fetch_and_op); }
extern "C" int stf_fetch_and_op(stf_sf sf, MPI_Datatype unit, void *rootdata, const void *leafdata,
                                void *leafupdate, MPI_Op op) {
  return stf::blocking(sf, OpArgs{OpKind::fetch_and_op, unit, op, leafdata, rootdata, leafupdate});
}

extern "C" int stf_gather_begin(stf_sf sf, MPI_Datatype unit, const void *leafdata, void *multirootdata,
                                stf_request *req) {
  return stf::multi_begin(sf, OpArgs{OpKind::gather, unit, MPI_REPLACE, leafdata, multirootdata, nullptr}, req);
}
extern "C" int stf_gather_end(stf_sf sf, stf_request *req) { return stf::end(sf, req, OpKind::gather); }
extern "C" int stf_gather(stf_sf sf, MPI_Datatype unit, const void *leafdata, void *multirootdata) {
  return stf::blocking(sf, OpArgs{OpKind::gather, unit, MPI_REPLACE, leafdata, multirootdata, nullptr});
}

extern "C" int stf_scatter_begin(stf_sf sf, MPI_Datatype unit, const void *multirootdata, void *leafdata,
                                 stf_request *req) {
  return stf::multi_begin(sf, OpArgs{OpKind::scatter, unit, MPI_REPLACE, multirootdata, leafdata, nullptr}, req);
}
extern "C" int stf_scatter_end(stf_sf sf, stf_request *req) { return stf::end(sf, req, OpKind::scatter); }
extern "C" int stf_scatter(stf_sf sf, MPI_Datatype unit, const void *multirootdata, void *leafdata) {
  return stf::blocking(sf, OpArgs{OpKind::scatter, unit, MPI_REPLACE, multirootdata, leafdata, nullptr});
}
