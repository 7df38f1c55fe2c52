// The exchange: bcast, reduce and fetch-and-op as one sequence of steps for
// every memory (host, device, a mix). The skeleton (exchange.cpp) is written
// once over a memory's hooks (hooks.h: the steps only device data needs),
// and each side's memory space (space.h) fills in how its data reaches MPI.
//
// A one-way exchange (bcast: roots to leaves; reduce: leaves to roots):
//   begin: before_pack (device: slot reuse, model A sync) -> receive
//          targets -> post receives -> pack -> before_mpi (device: the
//          model's wait) -> post sends (or, model C, defer them to end) ->
//          self part, while messages fly;
//   end:   [post deferred sends] -> wait for receives -> unpack ->
//          after_unpack (device: finish self part, model A sync) -> wait
//          for sends.
// A transport may take a bcast or reduce of host data whole instead
// (collectives on the user's arrays).
//
// Fetch-and-op: contributions travel leaf -> root in begin; in end the root
// applies them in (leaf rank, leaf slot) order, keeping each old value, and
// sends the old values back (Leg::fetch_return). A fetch-and-op end first
// serves the root side of every fetch-and-op in flight on its SF, oldest
// begin first, so ends may come in any order. Device data runs these host
// steps on host copies (the hooks' fetch_in and fetch_out).
#pragma once

#include "ops/flow.h"

namespace stf {

// Begin and end of one-way exchanges and fetch-and-ops run through the
// operation's Memory (memory.h).
// Whether the end would find every message arrived and sent (stf_test);
// they make progress (MPI tests) but never wait for messages. A one-way test
// first posts the request's deferred sends (model C), as its end would; a
// fetch-and-op test serves, oldest first, the fetch-and-ops whose
// contributions have all arrived.
int one_way_test(stf_request r, Direction d, bool *done);
int fetch_test(stf_request r, bool *done);

// Fetch-and-op's steps on host memory (fetch.cpp).
int fetch_begin_on_host(stf_request r);
int fetch_end_on_host(stf_request r);

}  // namespace stf
