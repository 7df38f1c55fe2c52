#include "prepared_case.h"

#include <sched.h>

#include <cstring>

#include "runner.h"

namespace stft {
namespace {

// Ends both requests by stf_test alone, polled in a rank-dependent order.
void poll_both(Checker &ck, stf_sf sf, stf_request q[2], int me) {
  const stf_request kept[2] = {q[0], q[1]};
  bool done[2] = {false, false};
  for (long polls = 0; !(done[0] && done[1]); polls++) {
    if (!ck.check(polls < 100000000, "prepared requests still in flight after 10^8 tests")) return;
    const int k = static_cast<int>((polls + me) % 2);
    int d = 0;
    if (!done[k] && !ck.code(stf_test(sf, &q[k], &d), STF_SUCCESS, "stf_test of a prepared request")) return;
    done[k] = done[k] || d;
    sched_yield();
  }
  ck.check(q[0] == kept[0] && q[1] == kept[1], "stf_test changed a prepared request's handle");
}

// Misuse of prepared requests that are not in flight: each refused, the handles kept.
void misuse_at_rest(Checker &ck, stf_sf sf, stf_sf other, stf_request q[2]) {
  const stf_request kept[2] = {q[0], q[1]};
  stf_request none = nullptr;
  int done = 7;
  ck.code(stf_bcast_end(sf, &q[0]), STF_ERR_REQUEST, "stf_bcast_end of a prepared request not started");
  ck.has_message("stf_bcast_end of a prepared request not started");
  ck.code(stf_test(sf, &q[1], &done), STF_ERR_REQUEST, "stf_test of a prepared request not started");
  ck.code(stf_start(other, &q[0]), STF_ERR_REQUEST, "stf_start with another SF");
  ck.code(stf_start(sf, &none), STF_ERR_REQUEST, "stf_start(*req == NULL)");
  ck.code(stf_start(sf, nullptr), STF_ERR_NULL, "stf_start(sf, NULL)");
  ck.code(stf_request_free(other, &q[1]), STF_ERR_REQUEST, "stf_request_free with another SF");
  ck.code(stf_bcast_init(sf, MPI_INT, nullptr, nullptr, MPI_SUM, nullptr), STF_ERR_NULL, "stf_bcast_init(NULL req)");
  ck.check(std::strstr(stf_last_error_message(), "bcast_init") != nullptr, "stf_bcast_init's error names it: %s",
           stf_last_error_message());
  ck.code(stf_reset(sf), STF_ERR_STATE, "stf_reset with prepared requests");
  ck.has_message("stf_reset with prepared requests");
  ck.check(q[0] == kept[0] && q[1] == kept[1], "a refused call changed a prepared request's handle");
}

}  // namespace

void prepared_operations(Checker &ck, stf_sf sf, stf_sf other, const GlobalGraph &g, int me, const UnitSpec &ui,
                         std::uint64_t key, const std::string &where) {
  ck.context(where + ": prepared bcast and reduce");
  const DataGen first{&g, &ui, MPI_SUM, key};
  Buffer broot = first.root_buffer(me), bleaf = first.leaf_buffer(me);
  Buffer rroot = first.root_buffer(me), rleaf = first.leaf_buffer(me);
  stf_request q[2] = {nullptr, nullptr};  // bcast, reduce
  const bool made = ck.code(stf_bcast_init(sf, ui.type, broot.data(), bleaf.data(), MPI_SUM, &q[0]), STF_SUCCESS,
                            "stf_bcast_init") &
                    ck.code(stf_reduce_init(sf, ui.type, rleaf.data(), rroot.data(), MPI_SUM, &q[1]), STF_SUCCESS,
                            "stf_reduce_init");
  if (made) misuse_at_rest(ck, sf, other, q);
  for (int it = 0; made && it < 4; ++it) {
    ck.context(where + ": prepared bcast and reduce, start " + std::to_string(it));
    const DataGen d{&g, &ui, MPI_SUM, hash_key(key, it)};
    broot.overwrite(d.root_buffer(me));  // the prepared requests hold this memory
    bleaf.overwrite(d.leaf_buffer(me));
    rroot.overwrite(d.root_buffer(me));
    rleaf.overwrite(d.leaf_buffer(me));
    if (!ck.code(stf_start(sf, &q[0]), STF_SUCCESS, "stf_start bcast")) break;
    if (it == 0) {
      ck.code(stf_start(sf, &q[0]), STF_ERR_REQUEST, "stf_start of a request in flight");
      ck.code(stf_request_free(sf, &q[0]), STF_ERR_REQUEST, "stf_request_free of a request in flight");
      ck.has_message("stf_request_free of a request in flight");
    }
    if (!ck.code(stf_start(sf, &q[1]), STF_SUCCESS, "stf_start reduce")) break;
    if (it == 2) run_bcast(ck, sf, DataGen{&g, &ui, MPI_REPLACE, hash_key(key, it, 1)}, me, Form::Split);
    if (it % 2) {
      poll_both(ck, sf, q, me);
    } else {
      ck.code(stf_reduce_end(sf, &q[1]), STF_SUCCESS, "stf_reduce_end");
      ck.code(stf_bcast_end(sf, &q[0]), STF_SUCCESS, "stf_bcast_end");
      ck.check(q[0] && q[1], "an end set a prepared request to NULL");
    }
    compare_buffers(ck, ui, "prepared bcast leafdata", bleaf, expect_bcast(d, me), leaf_mask(g, me));
    compare_buffers(ck, ui, "prepared reduce rootdata", rroot, expect_reduce(d, me), root_mask(g, me));
  }
  ck.context(where + ": prepared requests freed");
  const stf_request stale = q[0];
  for (stf_request &r : q)
    if (r) ck.code(stf_request_free(sf, &r), STF_SUCCESS, "stf_request_free");
  ck.check(!q[0] && !q[1], "stf_request_free left a handle");
  stf_request copy = stale;
  if (stale) ck.code(stf_start(sf, &copy), STF_ERR_REQUEST, "stf_start of a freed request");
  stf_request begun = nullptr;  // a begun request is not a prepared one
  const Buffer root = first.root_buffer(me);
  Buffer leaf = first.leaf_buffer(me);
  if (ck.code(stf_bcast_begin(sf, ui.type, root.data(), leaf.data(), MPI_SUM, &begun), STF_SUCCESS, "bcast_begin")) {
    stf_request held = begun;
    ck.code(stf_request_free(sf, &held), STF_ERR_REQUEST, "stf_request_free of a begun request");
    ck.code(stf_start(sf, &held), STF_ERR_REQUEST, "stf_start of a begun request");
    ck.code(stf_bcast_end(sf, &begun), STF_SUCCESS, "bcast_end");
  }
}

}  // namespace stft
