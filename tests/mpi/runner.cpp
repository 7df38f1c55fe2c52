#include "runner.h"

#include <sched.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <utility>

namespace stft {

namespace {

// Checks shared by every split-phase run: begin hands out a request, end
// takes it back and clears the handle.
bool begun(Checker &ck, int rc, stf_request req, const char *what) {
  if (!ck.code(rc, STF_SUCCESS, what)) return false;
  return ck.check(req != nullptr, "%s succeeded but returned a NULL request", what);
}
// Call as ended(ck, stf_x_end(sf, &req), &req, ...): the pointer is read
// after the end call has run (argument evaluation order is unspecified).
int ended(Checker &ck, int rc, const stf_request *req, const char *what) {
  if (rc == STF_SUCCESS) ck.check(*req == nullptr, "%s did not set the request to NULL", what);
  return rc;
}

// End a begun request as form says: its end, or stf_test until it is done
// (yielding the core between tests, as a computing rank would).
int finish(Checker &ck, stf_sf sf, stf_request *req, Form form, int (*end)(stf_sf, stf_request *),
           const char *what) {
  if (form != Form::Polled) return ended(ck, end(sf, req), req, what);
  int done = 0, rc;
  while ((rc = stf_test(sf, req, &done)) == STF_SUCCESS && !done) {
    if (!ck.check(*req != nullptr, "stf_test said not done but cleared the request")) return STF_ERR_INTERNAL;
    sched_yield();
  }
  return ended(ck, rc, req, "stf_test");
}

}  // namespace

stf_sf make_sf(Checker &ck, const LocalGraph &g, MPI_Comm comm, const char *options,
               stf_copy_mode mode, bool setup) {
  stf_sf sf = nullptr;
  if (!ck.code(stf_create(comm, &sf), STF_SUCCESS, "stf_create")) return nullptr;
  if (options && !ck.code(stf_set_sf_options(sf, options), STF_SUCCESS, "stf_set_sf_options")) {
    stf_destroy(&sf);
    return nullptr;
  }
  const stf_int n = g.nleaves();
  const stf_int *ilocal = g.ilocal_ptr();
  const stf_node *iremote = g.iremote.data();
  if (mode == STF_OWN_POINTER) {  // the SF free()s these
    stf_int *il = nullptr;
    if (ilocal) {
      il = static_cast<stf_int *>(std::malloc(sizeof(stf_int) * (n + 1)));
      if (n) std::memcpy(il, ilocal, sizeof(stf_int) * n);
    }
    stf_node *ir = static_cast<stf_node *>(std::malloc(sizeof(stf_node) * (n + 1)));
    if (n) std::memcpy(ir, iremote, sizeof(stf_node) * n);
    ilocal = il;
    iremote = ir;
  }
  int rc = stf_set_graph(sf, g.nroots, n, ilocal, mode, iremote, mode);
  if (ck.code(rc, STF_SUCCESS, "stf_set_graph") &&
      (!setup || ck.code(stf_setup(sf), STF_SUCCESS, "stf_setup")))
    return sf;
  stf_destroy(&sf);
  return nullptr;
}

void check_leaf_range(Checker &ck, stf_sf sf, const GlobalGraph &g, int me) {
  stf_int lo = -7, hi = -7, wlo, whi;
  g.ranks[me].leaf_range(&wlo, &whi);
  if (!ck.code(stf_get_leaf_range(sf, &lo, &hi), STF_SUCCESS, "stf_get_leaf_range")) return;
  ck.check(lo == wlo && hi == whi, "leaf range [%d, %d], expected [%d, %d]", lo, hi, wlo, whi);
}

void run_degree(Checker &ck, stf_sf sf, const GlobalGraph &g, int me, Form form) {
  const stf_int *deg = nullptr;
  int rc;
  if (form == Form::Blocking) {
    rc = stf_compute_degree(sf, &deg);
  } else {
    stf_request req = nullptr;
    rc = stf_compute_degree_begin(sf, &req);
    if (!begun(ck, rc, req, "stf_compute_degree_begin")) return;
    rc = ended(ck, stf_compute_degree_end(sf, &req, &deg), &req, "stf_compute_degree_end");
  }
  if (!ck.code(rc, STF_SUCCESS, "compute_degree")) return;
  const stf_int nroots = g.ranks[me].nroots;
  if (nroots == 0) return;
  if (!ck.check(deg != nullptr, "degree array is NULL with %d roots", nroots)) return;
  int bad = 0;
  for (stf_int r = 0; r < nroots; ++r)
    if (deg[r] != g.degree(me, r) && bad++ < 3)
      ck.check(false, "degree of root %d is %d, expected %d", r, deg[r], g.degree(me, r));
  if (!bad) ck.pass();
}

void run_bcast(Checker &ck, stf_sf sf, const DataGen &d, int me, Form form) {
  Buffer root = d.root_buffer(me), leaf = d.leaf_buffer(me);
  const Buffer root0 = root;
  int rc;
  if (form == Form::Blocking) {
    rc = stf_bcast(sf, d.u->type, root.data(), leaf.data(), d.op);
  } else {
    stf_request req = nullptr;
    rc = stf_bcast_begin(sf, d.u->type, root.data(), leaf.data(), d.op, &req);
    if (!begun(ck, rc, req, "stf_bcast_begin")) return;
    rc = finish(ck, sf, &req, form, stf_bcast_end, "stf_bcast_end");
  }
  if (!ck.code(rc, STF_SUCCESS, "bcast")) return;
  compare_buffers(ck, *d.u, "bcast leafdata", leaf, expect_bcast(d, me), leaf_mask(*d.g, me));
  compare_buffers(ck, *d.u, "bcast rootdata (input)", root, root0, no_mask(root));
}

void run_reduce(Checker &ck, stf_sf sf, const DataGen &d, int me, Form form) {
  Buffer root = d.root_buffer(me), leaf = d.leaf_buffer(me);
  const Buffer leaf0 = leaf;
  int rc;
  if (form == Form::Blocking) {
    rc = stf_reduce(sf, d.u->type, leaf.data(), root.data(), d.op);
  } else {
    stf_request req = nullptr;
    rc = stf_reduce_begin(sf, d.u->type, leaf.data(), root.data(), d.op, &req);
    if (!begun(ck, rc, req, "stf_reduce_begin")) return;
    rc = finish(ck, sf, &req, form, stf_reduce_end, "stf_reduce_end");
  }
  if (!ck.code(rc, STF_SUCCESS, "reduce")) return;
  Buffer want = expect_reduce(d, me);
  if (d.op == MPI_REPLACE) accept_any_leaf(d, me, root, &want);
  compare_buffers(ck, *d.u, "reduce rootdata", root, want, root_mask(*d.g, me));
  compare_buffers(ck, *d.u, "reduce leafdata (input)", leaf, leaf0, no_mask(leaf));
}

void run_fetch(Checker &ck, stf_sf sf, const DataGen &d, int me, Form form) {
  const std::uint64_t update_tag = 77;
  Buffer root = d.root_buffer(me), leaf = d.leaf_buffer(me);
  Buffer update = d.blank_leaf_buffer(me, update_tag);
  const Buffer leaf0 = leaf;
  int rc;
  if (form == Form::Blocking) {
    rc = stf_fetch_and_op(sf, d.u->type, root.data(), leaf.data(), update.data(), d.op);
  } else {
    stf_request req = nullptr;
    rc = stf_fetch_and_op_begin(sf, d.u->type, root.data(), leaf.data(), update.data(), d.op, &req);
    if (!begun(ck, rc, req, "stf_fetch_and_op_begin")) return;
    rc = finish(ck, sf, &req, form, stf_fetch_and_op_end, "stf_fetch_and_op_end");
  }
  if (!ck.code(rc, STF_SUCCESS, "fetch_and_op")) return;
  Buffer want_root = root, want_update = update;
  expect_fetch(d, me, update_tag, &want_root, &want_update);
  compare_buffers(ck, *d.u, "fetch_and_op rootdata", root, want_root, root_mask(*d.g, me));
  compare_buffers(ck, *d.u, "fetch_and_op leafupdate", update, want_update, leaf_mask(*d.g, me));
  compare_buffers(ck, *d.u, "fetch_and_op leafdata (input)", leaf, leaf0, no_mask(leaf));
}

void run_gather(Checker &ck, stf_sf sf, const DataGen &d, int me, Form form) {
  const std::uint64_t blank_tag = 5;
  Buffer leaf = d.leaf_buffer(me), multi = d.blank_multi_buffer(me, blank_tag);
  const Buffer leaf0 = leaf;
  int rc;
  if (form == Form::Blocking) {
    rc = stf_gather(sf, d.u->type, leaf.data(), multi.data());
  } else {
    stf_request req = nullptr;
    rc = stf_gather_begin(sf, d.u->type, leaf.data(), multi.data(), &req);
    if (!begun(ck, rc, req, "stf_gather_begin")) return;
    rc = finish(ck, sf, &req, form, stf_gather_end, "stf_gather_end");
  }
  if (!ck.code(rc, STF_SUCCESS, "gather")) return;
  compare_buffers(ck, *d.u, "gather multirootdata", multi, expect_gather(d, me, blank_tag),
                  all_mask(multi.size()));
  compare_buffers(ck, *d.u, "gather leafdata (input)", leaf, leaf0, no_mask(leaf));
}

void run_scatter(Checker &ck, stf_sf sf, const DataGen &d, int me, Form form) {
  Buffer multi = d.multi_buffer(me), leaf = d.leaf_buffer(me);
  const Buffer multi0 = multi;
  int rc;
  if (form == Form::Blocking) {
    rc = stf_scatter(sf, d.u->type, multi.data(), leaf.data());
  } else {
    stf_request req = nullptr;
    rc = stf_scatter_begin(sf, d.u->type, multi.data(), leaf.data(), &req);
    if (!begun(ck, rc, req, "stf_scatter_begin")) return;
    rc = finish(ck, sf, &req, form, stf_scatter_end, "stf_scatter_end");
  }
  if (!ck.code(rc, STF_SUCCESS, "scatter")) return;
  compare_buffers(ck, *d.u, "scatter leafdata", leaf, expect_scatter(d, me), leaf_mask(*d.g, me));
  compare_buffers(ck, *d.u, "scatter multirootdata (input)", multi, multi0, no_mask(multi));
}

void check_multi_sf(Checker &ck, stf_sf sf, const GlobalGraph &g, int me, const UnitSpec &int_unit,
                    std::uint64_t key) {
  stf_sf multi = nullptr;
  if (!ck.code(stf_get_multi_sf(sf, &multi), STF_SUCCESS, "stf_get_multi_sf")) return;
  if (!ck.check(multi != nullptr, "stf_get_multi_sf returned NULL")) return;
  stf_int nroots = -1, nleaves = -1;
  const stf_int *ilocal = nullptr;
  const stf_node *iremote = nullptr;
  if (!ck.code(stf_get_graph(multi, &nroots, &nleaves, &ilocal, &iremote), STF_SUCCESS,
               "stf_get_graph(multi)"))
    return;
  const LocalGraph &lg = g.ranks[me];
  ck.check(nroots == g.nmulti(me), "multi-SF nroots %d, expected sum of degrees %d", nroots,
           g.nmulti(me));
  if (!ck.check(nleaves == lg.nleaves(), "multi-SF nleaves %d, expected %d", nleaves, lg.nleaves()))
    return;
  // Compare as slot -> (rank, multi-root): the leaf order may differ.
  std::map<stf_int, std::pair<int, stf_int>> want, got;
  for (stf_int i = 0; i < lg.nleaves(); ++i) {
    const stf_node &n = lg.iremote[i];
    want[lg.slot(i)] = {n.rank, g.multi_offset[n.rank][n.index] + g.position[me][i]};
  }
  LocalGraph mg;  // the multi-SF's graph as reported, for the data check below
  mg.nroots = nroots;
  mg.contiguous = ilocal == nullptr;
  for (stf_int i = 0; i < nleaves; ++i) {
    got[ilocal ? ilocal[i] : i] = {iremote[i].rank, iremote[i].index};
    if (ilocal) mg.ilocal.push_back(ilocal[i]);
    mg.iremote.push_back(iremote[i]);
  }
  int bad = 0;
  for (const auto &w : want) {
    auto it = got.find(w.first);
    if (it == got.end() || it->second != w.second) {
      if (bad++ < 3)
        ck.check(false, "multi-SF leaf slot %d -> (%d, %d), expected (%d, %d)", w.first,
                 it == got.end() ? -1 : it->second.first, it == got.end() ? -1 : it->second.second,
                 w.second.first, w.second.second);
    }
  }
  if (bad) return;
  ck.pass();
  // Data over the multi-SF itself: bcast is a scatter, reduce a gather.
  GlobalGraph gm = gather_graph(mg, g.comm);
  std::string ctx = ck.context();
  ck.context(ctx + " multi-SF bcast");
  run_bcast(ck, multi, DataGen{&gm, &int_unit, MPI_REPLACE, key}, me, Form::Split);
  ck.context(ctx + " multi-SF reduce");
  run_reduce(ck, multi, DataGen{&gm, &int_unit, MPI_SUM, key + 1}, me, Form::Blocking);
  ck.context(ctx);
}

void run_bad_op(Checker &ck, stf_sf sf, const DataGen &d, int me, int want) {
  Buffer root = d.root_buffer(me), leaf = d.leaf_buffer(me);
  Buffer update = d.blank_leaf_buffer(me, 9);
  const Buffer root0 = root, leaf0 = leaf, update0 = update;
  MPI_Datatype t = d.u->type;
  ck.code(stf_bcast(sf, t, root.data(), leaf.data(), d.op), want, "stf_bcast with undefined op");
  ck.has_message("stf_bcast with undefined op");
  ck.code(stf_reduce(sf, t, leaf.data(), root.data(), d.op), want, "stf_reduce with undefined op");
  ck.code(stf_fetch_and_op(sf, t, root.data(), leaf.data(), update.data(), d.op), want,
          "stf_fetch_and_op with undefined op");
  // The split forms must refuse at begin and leave the request NULL.
  int garbage = 0;
  const stf_request stale = reinterpret_cast<stf_request>(&garbage);
  stf_request req = stale;
  int rc = stf_bcast_begin(sf, t, root.data(), leaf.data(), d.op, &req);
  ck.code(rc, want, "stf_bcast_begin with undefined op");
  if (rc == STF_SUCCESS && req) stf_bcast_end(sf, &req);
  ck.check(req == nullptr, "a failed stf_bcast_begin left the request non-NULL");
  req = stale;
  rc = stf_reduce_begin(sf, t, leaf.data(), root.data(), d.op, &req);
  ck.code(rc, want, "stf_reduce_begin with undefined op");
  if (rc == STF_SUCCESS && req) stf_reduce_end(sf, &req);
  ck.check(req == nullptr, "a failed stf_reduce_begin left the request non-NULL");
  req = stale;
  rc = stf_fetch_and_op_begin(sf, t, root.data(), leaf.data(), update.data(), d.op, &req);
  ck.code(rc, want, "stf_fetch_and_op_begin with undefined op");
  if (rc == STF_SUCCESS && req) stf_fetch_and_op_end(sf, &req);
  ck.check(req == nullptr, "a failed stf_fetch_and_op_begin left the request non-NULL");
  compare_buffers(ck, *d.u, "rootdata after refused op", root, root0, no_mask(root));
  compare_buffers(ck, *d.u, "leafdata after refused op", leaf, leaf0, no_mask(leaf));
  compare_buffers(ck, *d.u, "leafupdate after refused op", update, update0, no_mask(update));
}

}  // namespace stft
