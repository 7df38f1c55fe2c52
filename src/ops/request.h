// An operation in flight. Request objects are pooled per SF and reused, so
// their buffers and the transport's cached requests survive between calls.
#pragma once

#include <vector>

#include "graph/sf.h"
#include "kernels/kernels.h"
#include "transport/transport.h"

namespace stf {

enum class OpKind { bcast, reduce, fetch_and_op, degree, gather, scatter };
const char *op_kind_name(OpKind k);

// Message tags: one per direction keeps operations begun in the same order
// on every rank matched; fetch-and-op returns are sent from end, whose order
// may differ between ranks, so each fetch-and-op gets its own tag.
constexpr int tag_root_to_leaf = 1;
constexpr int tag_leaf_to_root = 2;
constexpr int tag_fetch_first = 16;
constexpr int tag_fetch_count = 16384;

}  // namespace stf

struct stf_request_s {
  stf_sf owner = nullptr;  // the SF the user called (for gather/scatter: not the multi-SF)
  stf_sf sf = nullptr;     // the SF whose plan moves the data
  stf::OpKind kind = stf::OpKind::bcast;
  bool busy = false;
  std::size_t last_bytes = 0;  // unit bytes of the previous use (pool matching)

  const stf::Unit *unit = nullptr;
  const stf::Kernels *kernels = nullptr;  // for op
  const stf::Kernels *copy = nullptr;     // for MPI_REPLACE
  MPI_Op op = MPI_REPLACE;
  const void *src = nullptr;  // bcast: rootdata; reduce/fetch: leafdata
  void *dst = nullptr;        // bcast: leafdata; reduce/fetch: rootdata
  void *update = nullptr;     // fetch: leafupdate
  int fetch_tag = 0;

  std::vector<char> rootbuf, leafbuf, returnbuf, selfbuf;
  std::vector<char> recv_direct;  // per receiving peer: data landed in user memory
  std::vector<void *> recv_ptrs;
  std::vector<const void *> send_ptrs;
  stf::Channel to_leaf, to_root;
};
