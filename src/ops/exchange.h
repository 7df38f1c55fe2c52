// Internal entry points of the ops layer, shared by the public API file.
#pragma once

#include "ops/request.h"

namespace stf {

// Take a pooled request slot of sf for an operation called on owner.
int acquire_request(stf_sf owner, stf_sf sf, OpKind kind, std::size_t unit_bytes, stf_request *out);
void release_request(stf_request r);
// Check that *req is an active request of owner begun by kind.
int take_request(stf_sf owner, stf_request *req, OpKind kind, stf_request *out);

int resolve_unit(MPI_Datatype type, MPI_Op op, const Unit **unit, const Kernels **kernels, const Kernels **copy);
// NULL data is an error only where this rank has roots (leaves) to touch.
int check_data(stf_sf sf, const void *rootdata, const void *leafdata, const char *what);

// bcast (root_to_leaf) and reduce (leaf_to_root): r->src flows into r->dst with r->op.
int one_way_begin(stf_request r, Direction d);
int one_way_end(stf_request r, Direction d);
int fetch_begin(stf_request r);
int fetch_end(stf_request r);

// Device data (device_exchange.cpp), called by the four above.
int device_begin(stf_request r, Direction d);
int device_end(stf_request r, Direction d);
int device_fetch_begin(stf_request r);
int device_fetch_end(stf_request r);
// Stream model C posts sends from end. Messages of one direction are
// matched in the order sends are posted, so every send on sf leaves in begin
// order: post the deferred sends of sf, oldest first, up to and including
// upto (all of them if NULL; nothing if upto is not deferred).
int post_deferred_sends(stf_sf sf, stf_request upto);

}  // namespace stf
