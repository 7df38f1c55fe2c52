// Public operation calls: argument checks and set-up, then the ops layer.
#include "core/error.h"
#include "ops/operation.h"
#include "sf/sf.h"

namespace stf {
namespace {

// owner is the SF the user called; sf moves the data (the multi-SF for gather/scatter).
int begin(stf_sf owner, stf_sf sf, const OpArgs &a, stf_request *req) {
  if (!req) return set_error(STF_ERR_NULL, "%s_begin: request pointer is NULL", op_kind_name(a.kind));
  *req = nullptr;
  Resolved res;
  STF_CHECK(resolve_unit(a, &res));
  STF_CHECK(ensure_setup(sf));
  return begin_operation(owner->engine, sf->engine, a, res, req);
}

int end(stf_sf owner, stf_request *req, OpKind kind) {
  STF_CHECK(check_sf(owner));
  return end_operation(owner->engine, req, kind);
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
