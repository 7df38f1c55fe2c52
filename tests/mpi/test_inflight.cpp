// Several operations in flight on one SF, ended in another order than begun;
// request misuse (NULL, wrong end function, wrong SF) is refused without
// damaging the request; many repeated operations stay correct; prepared
// operations (prepared_case.h).
#include <sched.h>

#include <cstring>
#include <string>

#include "check.h"
#include "graphs.h"
#include "oracle.h"
#include "prepared_case.h"
#include "runner.h"
#include "units.h"

using namespace stft;

namespace {

std::string graph_name;  // current graph, prefixed to every context
void ctx(Checker &ck, const std::string &what) { ck.context(graph_name + ": " + what); }

const UnitSpec *find_unit(const std::vector<UnitSpec> &units, const char *name) {
  for (const auto &u : units)
    if (u.name == name) return &u;
  return nullptr;
}

// Begun bcast/reduce/gather on distinct buffers, ended in a different order.
void mixed_in_flight(Checker &ck, stf_sf sf, const GlobalGraph &g, int me, const UnitSpec &ui,
                     const UnitSpec &ud, std::uint64_t key) {
  const DataGen da{&g, &ui, MPI_REPLACE, hash_key(key, 1)};
  const DataGen db{&g, &ud, MPI_SUM, hash_key(key, 2)};
  const DataGen dc{&g, &ui, MPI_SUM, hash_key(key, 3)};
  const DataGen dd{&g, &ui, MPI_REPLACE, hash_key(key, 4)};
  Buffer ra = da.root_buffer(me), la = da.leaf_buffer(me);
  Buffer rb = db.root_buffer(me), lb = db.leaf_buffer(me);
  Buffer rc_ = dc.root_buffer(me), lc = dc.leaf_buffer(me);
  Buffer ld = dd.leaf_buffer(me), md = dd.blank_multi_buffer(me, 5);
  stf_request qa = nullptr, qb = nullptr, qc = nullptr, qd = nullptr;
  ctx(ck, "mixed in flight: begin A B C D, end C A D B");
  ck.code(stf_bcast_begin(sf, ui.type, ra.data(), la.data(), MPI_REPLACE, &qa), STF_SUCCESS, "bcast_begin A");
  ck.code(stf_bcast_begin(sf, ud.type, rb.data(), lb.data(), MPI_SUM, &qb), STF_SUCCESS, "bcast_begin B");
  ck.code(stf_reduce_begin(sf, ui.type, lc.data(), rc_.data(), MPI_SUM, &qc), STF_SUCCESS, "reduce_begin C");
  ck.code(stf_gather_begin(sf, ui.type, ld.data(), md.data(), &qd), STF_SUCCESS, "gather_begin D");
  ck.code(stf_reduce_end(sf, &qc), STF_SUCCESS, "reduce_end C");
  ck.code(stf_bcast_end(sf, &qa), STF_SUCCESS, "bcast_end A");
  ck.code(stf_gather_end(sf, &qd), STF_SUCCESS, "gather_end D");
  ck.code(stf_bcast_end(sf, &qb), STF_SUCCESS, "bcast_end B");
  compare_buffers(ck, ui, "A leafdata", la, expect_bcast(da, me), leaf_mask(g, me));
  compare_buffers(ck, ud, "B leafdata", lb, expect_bcast(db, me), leaf_mask(g, me));
  compare_buffers(ck, ui, "C rootdata", rc_, expect_reduce(dc, me), root_mask(g, me));
  compare_buffers(ck, ui, "D multirootdata", md, expect_gather(dd, me, 5), all_mask(md.size()));
}

// One root array read by two bcasts at once with different units: as
// contiguous(2,MPI_INT) pairs into one leaf array, and as plain ints (the
// first nroots ints of the same memory) into another.
void shared_root_two_units(Checker &ck, stf_sf sf, const GlobalGraph &g, int me,
                           const UnitSpec &ui, const UnitSpec &upair, std::uint64_t key) {
  const DataGen dp{&g, &upair, MPI_REPLACE, key};
  Buffer root = dp.root_buffer(me), lpair = dp.leaf_buffer(me);
  const Buffer root0 = root;
  const DataGen di{&g, &ui, MPI_REPLACE, key};
  Buffer lint = di.blank_leaf_buffer(me, 11);
  Buffer want_int = lint;
  const LocalGraph &lg = g.ranks[me];
  for (stf_int i = 0; i < lg.nleaves(); ++i) {  // int index of the owner's pair array
    Buffer owner = dp.root_buffer(lg.iremote[i].rank);
    std::memcpy(want_int.unit(lg.slot(i)),
                static_cast<const int *>(owner.data()) + lg.iremote[i].index, sizeof(int));
  }
  ctx(ck, "same rootdata, two units in flight");
  stf_request q1 = nullptr, q2 = nullptr;
  ck.code(stf_bcast_begin(sf, upair.type, root.data(), lpair.data(), MPI_REPLACE, &q1), STF_SUCCESS, "bcast_begin pairs");
  ck.code(stf_bcast_begin(sf, ui.type, root.data(), lint.data(), MPI_REPLACE, &q2), STF_SUCCESS, "bcast_begin ints");
  ck.code(stf_bcast_end(sf, &q2), STF_SUCCESS, "bcast_end ints");
  ck.code(stf_bcast_end(sf, &q1), STF_SUCCESS, "bcast_end pairs");
  compare_buffers(ck, upair, "pair leafdata", lpair, expect_bcast(dp, me), leaf_mask(g, me));
  compare_buffers(ck, ui, "int leafdata", lint, want_int, leaf_mask(g, me));
  compare_buffers(ck, upair, "shared rootdata", root, root0, no_mask(root));
}

// A bcast into one leaf array while a fetch_and_op runs on other buffers,
// and a degree computation in between.
void bcast_during_fetch(Checker &ck, stf_sf sf, const GlobalGraph &g, int me, const UnitSpec &ui,
                        std::uint64_t key) {
  const DataGen df{&g, &ui, MPI_SUM, hash_key(key, 1)};
  const DataGen db{&g, &ui, MPI_MAX, hash_key(key, 2)};
  Buffer froot = df.root_buffer(me), fleaf = df.leaf_buffer(me), fupd = df.blank_leaf_buffer(me, 3);
  Buffer broot = db.root_buffer(me), bleaf = db.leaf_buffer(me);
  Buffer want_root = froot, want_upd = fupd;
  expect_fetch(df, me, 3, &want_root, &want_upd);
  ctx(ck, "bcast and degree during fetch_and_op");
  stf_request qf = nullptr, qb = nullptr, qd = nullptr;
  const stf_int *deg = nullptr;
  ck.code(stf_fetch_and_op_begin(sf, ui.type, froot.data(), fleaf.data(), fupd.data(), MPI_SUM, &qf), STF_SUCCESS, "fetch_and_op_begin");
  ck.code(stf_bcast_begin(sf, ui.type, broot.data(), bleaf.data(), MPI_MAX, &qb), STF_SUCCESS, "bcast_begin");
  ck.code(stf_compute_degree_begin(sf, &qd), STF_SUCCESS, "compute_degree_begin");
  ck.code(stf_bcast_end(sf, &qb), STF_SUCCESS, "bcast_end");
  ck.code(stf_compute_degree_end(sf, &qd, &deg), STF_SUCCESS, "compute_degree_end");
  ck.code(stf_fetch_and_op_end(sf, &qf), STF_SUCCESS, "fetch_and_op_end");
  compare_buffers(ck, ui, "fetch rootdata", froot, want_root, root_mask(g, me));
  compare_buffers(ck, ui, "fetch leafupdate", fupd, want_upd, leaf_mask(g, me));
  compare_buffers(ck, ui, "bcast leafdata", bleaf, expect_bcast(db, me), leaf_mask(g, me));
  for (stf_int r = 0; deg && r < g.ranks[me].nroots; ++r)
    ck.check(deg[r] == g.degree(me, r), "degree[%d] = %d, expected %d", r, deg[r], g.degree(me, r));
}

// Three fetch-and-ops in flight on one SF, on separate buffers, ended in an
// order that differs between ranks (rotated by rank). Before the ends served
// each other's root sides this hung.
void fetches_ended_in_rank_order(Checker &ck, stf_sf sf, const GlobalGraph &g, int me, const UnitSpec &ui,
                                 std::uint64_t key) {
  const int n = 3;
  ctx(ck, "fetch_and_ops ended in a rank-dependent order");
  std::vector<Buffer> root, leaf, upd, want_root, want_upd;  // Buffer has no default constructor
  stf_request q[n] = {};
  for (int i = 0; i < n; ++i) {
    const DataGen d{&g, &ui, MPI_SUM, hash_key(key, i)};
    root.push_back(d.root_buffer(me)), leaf.push_back(d.leaf_buffer(me)), upd.push_back(d.blank_leaf_buffer(me, 3));
    want_root.push_back(root[i]), want_upd.push_back(upd[i]);
    expect_fetch(d, me, 3, &want_root[i], &want_upd[i]);
    ck.code(stf_fetch_and_op_begin(sf, ui.type, root[i].data(), leaf[i].data(), upd[i].data(), MPI_SUM, &q[i]),
            STF_SUCCESS, "fetch_and_op_begin");
  }
  for (int k = 0; k < n; ++k) ck.code(stf_fetch_and_op_end(sf, &q[(k + me) % n]), STF_SUCCESS, "fetch_and_op_end");
  for (int i = 0; i < n; ++i) {
    compare_buffers(ck, ui, "fetch rootdata", root[i], want_root[i], root_mask(g, me));
    compare_buffers(ck, ui, "fetch leafupdate", upd[i], want_upd[i], leaf_mask(g, me));
  }
}

// Two fetch-and-ops, a bcast and a reduce in flight, completed by stf_test
// alone, polled in a rank-dependent rotation (so ranks serve each other's
// fetch-and-ops in test calls, in different orders).
void polled_in_flight(Checker &ck, stf_sf sf, const GlobalGraph &g, int me, const UnitSpec &ui,
                      std::uint64_t key) {
  ctx(ck, "fetch_and_ops, bcast and reduce completed by stf_test");
  const DataGen f0{&g, &ui, MPI_SUM, hash_key(key, 0)}, f1{&g, &ui, MPI_MAX, hash_key(key, 1)};
  const DataGen db{&g, &ui, MPI_SUM, hash_key(key, 2)}, dr{&g, &ui, MPI_SUM, hash_key(key, 3)};
  std::vector<Buffer> root, leaf, upd, want_root, want_upd;
  for (const DataGen *d : {&f0, &f1}) {
    root.push_back(d->root_buffer(me)), leaf.push_back(d->leaf_buffer(me)), upd.push_back(d->blank_leaf_buffer(me, 3));
    want_root.push_back(root.back()), want_upd.push_back(upd.back());
    expect_fetch(*d, me, 3, &want_root.back(), &want_upd.back());
  }
  Buffer broot = db.root_buffer(me), bleaf = db.leaf_buffer(me), rroot = dr.root_buffer(me), rleaf = dr.leaf_buffer(me);
  stf_request q[4] = {};
  ck.code(stf_fetch_and_op_begin(sf, ui.type, root[0].data(), leaf[0].data(), upd[0].data(), MPI_SUM, &q[0]),
          STF_SUCCESS, "fetch_and_op_begin 0");
  ck.code(stf_bcast_begin(sf, ui.type, broot.data(), bleaf.data(), MPI_SUM, &q[1]), STF_SUCCESS, "bcast_begin");
  ck.code(stf_fetch_and_op_begin(sf, ui.type, root[1].data(), leaf[1].data(), upd[1].data(), MPI_MAX, &q[2]),
          STF_SUCCESS, "fetch_and_op_begin 1");
  ck.code(stf_reduce_begin(sf, ui.type, rleaf.data(), rroot.data(), MPI_SUM, &q[3]), STF_SUCCESS, "reduce_begin");
  int left = 4;
  for (long polls = 0; left > 0 && ck.check(polls < 100000000, "still %d requests after 10^8 tests", left); polls++) {
    stf_request *r = &q[(polls + me) % 4];
    int done = 0;
    if (*r && ck.code(stf_test(sf, r, &done), STF_SUCCESS, "stf_test") && done) left--;
    if (!ck.check(!done || *r == nullptr, "stf_test said done but left the request")) break;
    sched_yield();
  }
  for (int i = 0; i < 2; ++i) {
    compare_buffers(ck, ui, "fetch rootdata", root[i], want_root[i], root_mask(g, me));
    compare_buffers(ck, ui, "fetch leafupdate", upd[i], want_upd[i], leaf_mask(g, me));
  }
  compare_buffers(ck, ui, "bcast leafdata", bleaf, expect_bcast(db, me), leaf_mask(g, me));
  compare_buffers(ck, ui, "reduce rootdata", rroot, expect_reduce(dr, me), root_mask(g, me));
}

// Six bcasts in flight, ended in reverse order.
void many_in_flight(Checker &ck, stf_sf sf, const GlobalGraph &g, int me, const UnitSpec &ui,
                    std::uint64_t key) {
  const int n = 6;
  std::vector<DataGen> d;
  std::vector<Buffer> roots, leaves;
  std::vector<stf_request> q(n, nullptr);
  for (int k = 0; k < n; ++k) {
    d.push_back(DataGen{&g, &ui, k % 2 ? MPI_SUM : MPI_REPLACE, hash_key(key, k)});
    roots.push_back(d[k].root_buffer(me));
    leaves.push_back(d[k].leaf_buffer(me));
  }
  ctx(ck, "6 bcasts in flight, ended in reverse");
  for (int k = 0; k < n; ++k)
    ck.code(stf_bcast_begin(sf, ui.type, roots[k].data(), leaves[k].data(), d[k].op, &q[k]), STF_SUCCESS, "bcast_begin");
  for (int k = n - 1; k >= 0; --k) ck.code(stf_bcast_end(sf, &q[k]), STF_SUCCESS, "bcast_end");
  for (int k = 0; k < n; ++k)
    compare_buffers(ck, ui, "leafdata", leaves[k], expect_bcast(d[k], me), leaf_mask(g, me));
}

// 150 operations in flight, bcasts and reduces alternating on buffers of
// their own, ended in reverse. More receive buffers than Open MPI lets the
// window transport attach to its window (64): it must stay under that.
void more_in_flight_than_attachments(Checker &ck, stf_sf sf, const GlobalGraph &g, int me, const UnitSpec &ui,
                                     std::uint64_t key) {
  const int n = 150;
  std::vector<DataGen> d;
  std::vector<Buffer> roots, leaves;
  std::vector<stf_request> q(n, nullptr);
  for (int k = 0; k < n; ++k) {
    d.push_back(DataGen{&g, &ui, k % 4 == 0 ? MPI_REPLACE : MPI_SUM, hash_key(key, k)});  // reduces: SUM
    roots.push_back(d[k].root_buffer(me));
    leaves.push_back(d[k].leaf_buffer(me));
  }
  ctx(ck, "150 bcasts and reduces in flight, ended in reverse");
  for (int k = 0; k < n; ++k) {
    if (k % 2 == 0)
      ck.code(stf_bcast_begin(sf, ui.type, roots[k].data(), leaves[k].data(), d[k].op, &q[k]), STF_SUCCESS, "bcast_begin");
    else
      ck.code(stf_reduce_begin(sf, ui.type, leaves[k].data(), roots[k].data(), d[k].op, &q[k]), STF_SUCCESS,
              "reduce_begin");
  }
  for (int k = n - 1; k >= 0; --k)
    ck.code(k % 2 == 0 ? stf_bcast_end(sf, &q[k]) : stf_reduce_end(sf, &q[k]), STF_SUCCESS, "end");
  for (int k = 0; k < n; ++k) {
    if (k % 2 == 0)
      compare_buffers(ck, ui, "bcast leafdata", leaves[k], expect_bcast(d[k], me), leaf_mask(g, me));
    else
      compare_buffers(ck, ui, "reduce rootdata", roots[k], expect_reduce(d[k], me), root_mask(g, me));
  }
}

// Operations in flight on two SFs at once (same graph, separate
// communicators inside), ended crosswise; the degree array of the first SF
// stays valid throughout (it lives until reset/destroy).
void two_sfs(Checker &ck, stf_sf sf, stf_sf other, const GlobalGraph &g, int me,
             const UnitSpec &ui, std::uint64_t key) {
  ctx(ck, "two SFs in flight");
  const stf_int *deg = nullptr;
  ck.code(stf_compute_degree(sf, &deg), STF_SUCCESS, "stf_compute_degree");
  const DataGen d1{&g, &ui, MPI_SUM, hash_key(key, 1)}, d2{&g, &ui, MPI_MIN, hash_key(key, 2)};
  Buffer r1 = d1.root_buffer(me), l1 = d1.leaf_buffer(me);
  Buffer r2 = d2.root_buffer(me), l2 = d2.leaf_buffer(me);
  stf_request q1 = nullptr, q2 = nullptr;
  ck.code(stf_reduce_begin(sf, ui.type, l1.data(), r1.data(), MPI_SUM, &q1), STF_SUCCESS, "reduce_begin on sf");
  ck.code(stf_bcast_begin(other, ui.type, r2.data(), l2.data(), MPI_MIN, &q2), STF_SUCCESS, "bcast_begin on other");
  ck.code(stf_bcast_end(other, &q2), STF_SUCCESS, "bcast_end on other");
  ck.code(stf_reduce_end(sf, &q1), STF_SUCCESS, "reduce_end on sf");
  compare_buffers(ck, ui, "sf reduce rootdata", r1, expect_reduce(d1, me), root_mask(g, me));
  compare_buffers(ck, ui, "other bcast leafdata", l2, expect_bcast(d2, me), leaf_mask(g, me));
  for (stf_int r = 0; deg && r < g.ranks[me].nroots; ++r)
    ck.check(deg[r] == g.degree(me, r), "degree[%d] = %d after other operations, expected %d", r,
             deg[r], g.degree(me, r));
}

// A datatype freed and a different one created (MPI may hand out the same
// handle again): nothing cached for the old type may be applied to the new.
void recycled_datatype(Checker &ck, stf_sf sf, const GlobalGraph &g, int me, std::uint64_t key) {
  ctx(ck, "recycled datatype handle");
  for (int round = 0; round < 4; ++round) {
    UnitSpec u;
    if (round % 2 == 0) {  // 3 contiguous doubles
      u.name = "contiguous(3,MPI_DOUBLE)";
      MPI_Type_contiguous(3, MPI_DOUBLE, &u.type);
      u.extent = 3 * sizeof(double);
      u.oracle_type = MPI_DOUBLE;
      u.oracle_count = 3;
      for (int k = 0; k < 3; ++k) u.fields.push_back({k * sizeof(double), Kind::Float, sizeof(double)});
    } else {  // ints 0 and 2 of 3, with a gap
      u.name = "vector(2,1,2,MPI_INT)";
      MPI_Type_vector(2, 1, 2, MPI_INT, &u.type);
      u.extent = 3 * sizeof(int);
      u.fields = {{0, Kind::SInt, sizeof(int)}, {2 * sizeof(int), Kind::SInt, sizeof(int)}};
      u.gaps = {{sizeof(int), sizeof(int)}};
    }
    MPI_Type_commit(&u.type);
    run_bcast(ck, sf, DataGen{&g, &u, MPI_REPLACE, hash_key(key, round)}, me, Form::Split);
    run_reduce(ck, sf, DataGen{&g, &u, MPI_REPLACE, hash_key(key, round, 1)}, me, Form::Blocking);
    run_gather(ck, sf, DataGen{&g, &u, MPI_REPLACE, hash_key(key, round, 2)}, me, Form::Blocking);
    MPI_Type_free(&u.type);
  }
}

// Misused requests are refused locally and leave the request usable.
void request_errors(Checker &ck, stf_sf sf, stf_sf other, const GlobalGraph &g, int me,
                    const UnitSpec &ui, std::uint64_t key) {
  ctx(ck, "request errors");
  stf_request none = nullptr;
  const stf_int *deg = nullptr;
  ck.code_either(stf_bcast_end(sf, nullptr), STF_ERR_NULL, STF_ERR_REQUEST, "stf_bcast_end(sf, NULL)");
  ck.has_message("stf_bcast_end(sf, NULL)");
  ck.code(stf_bcast_end(sf, &none), STF_ERR_REQUEST, "stf_bcast_end(*req == NULL)");
  ck.has_message("stf_bcast_end(*req == NULL)");
  ck.code(stf_reduce_end(sf, &none), STF_ERR_REQUEST, "stf_reduce_end(*req == NULL)");
  ck.code(stf_fetch_and_op_end(sf, &none), STF_ERR_REQUEST, "stf_fetch_and_op_end(*req == NULL)");
  ck.code(stf_gather_end(sf, &none), STF_ERR_REQUEST, "stf_gather_end(*req == NULL)");
  ck.code(stf_scatter_end(sf, &none), STF_ERR_REQUEST, "stf_scatter_end(*req == NULL)");
  ck.code(stf_compute_degree_end(sf, &none, &deg), STF_ERR_REQUEST, "stf_compute_degree_end(*req == NULL)");

  const DataGen d{&g, &ui, MPI_REPLACE, key};
  Buffer root = d.root_buffer(me), leaf = d.leaf_buffer(me);
  ck.code(stf_bcast_begin(sf, ui.type, root.data(), leaf.data(), MPI_REPLACE, nullptr), STF_ERR_NULL,
          "stf_bcast_begin with NULL request pointer");
  stf_request req = nullptr;
  if (!ck.code(stf_bcast_begin(sf, ui.type, root.data(), leaf.data(), MPI_REPLACE, &req), STF_SUCCESS, "bcast_begin"))
    return;
  const stf_request saved = req;
  ck.code(stf_reduce_end(sf, &req), STF_ERR_REQUEST, "stf_reduce_end on a bcast request");
  ck.has_message("stf_reduce_end on a bcast request");
  ck.code(stf_fetch_and_op_end(sf, &req), STF_ERR_REQUEST, "stf_fetch_and_op_end on a bcast request");
  ck.code(stf_compute_degree_end(sf, &req, &deg), STF_ERR_REQUEST, "stf_compute_degree_end on a bcast request");
  ck.code(stf_bcast_end(other, &req), STF_ERR_REQUEST, "stf_bcast_end with another SF");
  ck.code_either(stf_bcast_end(nullptr, &req), STF_ERR_NULL, STF_ERR_REQUEST, "stf_bcast_end with a NULL SF");
  ck.check(req == saved, "a refused end changed the request handle");
  int done = 7;
  ck.code(stf_test(sf, &req, nullptr), STF_ERR_NULL, "stf_test with NULL done");
  ck.code(stf_test(other, &req, &done), STF_ERR_REQUEST, "stf_test with another SF");
  ck.check(done == 0, "a refused stf_test said done");
  ck.code(stf_test(sf, &none, &done), STF_ERR_REQUEST, "stf_test(*req == NULL)");
  ck.code(stf_test(sf, nullptr, &done), STF_ERR_NULL, "stf_test(sf, NULL, &done)");
  ck.check(req == saved, "a refused stf_test changed the request handle");
  req = saved;
  ck.code(stf_bcast_end(sf, &req), STF_SUCCESS, "stf_bcast_end after refused ends");
  compare_buffers(ck, ui, "leafdata after refused ends", leaf, expect_bcast(d, me), leaf_mask(g, me));

  // And the other way round: a reduce request offered to stf_bcast_end.
  const DataGen dr{&g, &ui, MPI_SUM, key + 1};
  Buffer rroot = dr.root_buffer(me), rleaf = dr.leaf_buffer(me);
  req = nullptr;
  if (!ck.code(stf_reduce_begin(sf, ui.type, rleaf.data(), rroot.data(), MPI_SUM, &req), STF_SUCCESS, "reduce_begin"))
    return;
  ck.code(stf_bcast_end(sf, &req), STF_ERR_REQUEST, "stf_bcast_end on a reduce request");
  ck.code(stf_gather_end(sf, &req), STF_ERR_REQUEST, "stf_gather_end on a reduce request");
  ck.code(stf_reduce_end(other, &req), STF_ERR_REQUEST, "stf_reduce_end with another SF");
  ck.code(stf_reduce_end(sf, &req), STF_SUCCESS, "stf_reduce_end after refused ends");
  compare_buffers(ck, ui, "rootdata after refused ends", rroot, expect_reduce(dr, me), root_mask(g, me));
}

// Repeated operations (persistent requests are reused inside the library).
void repeated(Checker &ck, stf_sf sf, const GlobalGraph &g, int me, const UnitSpec &ui,
              std::uint64_t key, int iterations) {
  for (int it = 0; it < iterations; ++it) {
    ctx(ck, "iteration " + std::to_string(it));
    const Form f = form_of(it);
    run_bcast(ck, sf, DataGen{&g, &ui, it % 2 ? MPI_SUM : MPI_REPLACE, hash_key(key, it)}, me, f);
    run_reduce(ck, sf, DataGen{&g, &ui, it % 2 ? MPI_REPLACE : MPI_SUM, hash_key(key, it, 1)}, me, f);
  }
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Checker ck("test_inflight", argc, argv, 20240612);
  const std::uint64_t seed = ck.seed();
  const int iterations = static_cast<int>(parse_long(argc, argv, "--iterations", "STF_TEST_ITERATIONS", 200));

  std::vector<UnitSpec> units = make_units();
  const UnitSpec &ui = *find_unit(units, "MPI_INT");
  const UnitSpec &ud = *find_unit(units, "MPI_DOUBLE");
  UnitSpec upair;  // contiguous(2, MPI_INT), for the shared-root case
  upair.name = "contiguous(2,MPI_INT)";
  MPI_Type_contiguous(2, MPI_INT, &upair.type);
  MPI_Type_commit(&upair.type);
  upair.extent = 2 * sizeof(int);
  upair.oracle_type = MPI_INT;
  upair.oracle_count = 2;
  upair.fields = {{0, Kind::SInt, sizeof(int)}, {sizeof(int), Kind::SInt, sizeof(int)}};

  std::vector<NamedGraph> graphs = {
      {"ring", ring_graph(me, size, 3)},
      {"all_to_one", all_to_one_graph(seed, me)},
      {"random#0", random_graph(seed, 0, me, size)},
      {"random#1", random_graph(seed, 1, me, size)},
      {"random#2", random_graph(seed, 2, me, size)},
  };
  for (std::size_t gi = 0; gi < graphs.size(); ++gi) {
    const NamedGraph &ng = graphs[gi];
    GlobalGraph g = gather_graph(ng.local, MPI_COMM_WORLD);
    ck.context(ng.name + " setup");
    stf_sf sf = make_sf(ck, ng.local, MPI_COMM_WORLD, nullptr, STF_COPY_VALUES);
    stf_sf other = make_sf(ck, ng.local, MPI_COMM_WORLD, nullptr, STF_COPY_VALUES);
    int ok = sf && other, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (all_ok) {
      const std::uint64_t key = hash_key(seed, gi);
      graph_name = ng.name;
      mixed_in_flight(ck, sf, g, me, ui, ud, hash_key(key, 1));
      shared_root_two_units(ck, sf, g, me, ui, upair, hash_key(key, 2));
      bcast_during_fetch(ck, sf, g, me, ui, hash_key(key, 3));
      fetches_ended_in_rank_order(ck, sf, g, me, ui, hash_key(key, 9));
      polled_in_flight(ck, sf, g, me, ui, hash_key(key, 10));
      many_in_flight(ck, sf, g, me, ui, hash_key(key, 4));
      more_in_flight_than_attachments(ck, sf, g, me, ui, hash_key(key, 11));
      request_errors(ck, sf, other, g, me, ui, hash_key(key, 5));
      two_sfs(ck, sf, other, g, me, ui, hash_key(key, 7));
      prepared_operations(ck, sf, other, g, me, ui, hash_key(key, 12), ng.name);
      recycled_datatype(ck, sf, g, me, hash_key(key, 8));
      if (gi == 2) repeated(ck, sf, g, me, ui, hash_key(key, 6), iterations);
    }
    if (sf) stf_destroy(&sf);
    if (other) stf_destroy(&other);
  }
  MPI_Type_free(&upair.type);
  free_units(units);
  int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
