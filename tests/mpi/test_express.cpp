// The putsignal transport's express path (express.cpp): prepared and
// repeated operations alone in flight take it (stf_stats::express_operations
// counts them); one that another operation, or stf_test, finds in flight
// finishes as an ordinary one, also where the other's message waits for the
// express one's region (one slot: its message is spilled); one whose peer
// sends units of another size fails as the ordinary path does, and the SF
// then takes the express path again. Every value is checked.
#include <sched.h>

#include <string>
#include <vector>

#include "check.h"

using namespace stft;

namespace {

constexpr int kUnits = 4;

// Leaves 0 and 1 read roots 0 and 1 of the next rank, leaves 2 and 3 roots 2
// and 3 of the previous one: one peer on 2 ranks, two on more.
stf_sf ring(Checker &ck, const std::string &options, int me, int size) {
  stf_sf sf = nullptr;
  ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "stf_create");
  ck.code(stf_set_sf_options(sf, options.c_str()), STF_SUCCESS, options.c_str());
  stf_node remote[kUnits];
  for (int i = 0; i < kUnits; i++) remote[i] = {i < 2 ? (me + 1) % size : (me + size - 1) % size, i};
  ck.code(stf_set_graph(sf, kUnits, kUnits, nullptr, STF_COPY_VALUES, remote, STF_COPY_VALUES), STF_SUCCESS,
          "stf_set_graph");
  return sf;
}

double value(int it, int rank, int i) { return 1000.0 * it + 10.0 * rank + i; }

struct Arrays {
  std::vector<double> roots = std::vector<double>(kUnits), leaves = std::vector<double>(kUnits);
};

// Roots (bcast) or leaves (reduce) of this rank for operation it; the other side zeroed.
void fill(Arrays *a, int it, int me, bool bcast) {
  for (int i = 0; i < kUnits; i++) {
    (bcast ? a->roots : a->leaves)[i] = value(it, me, i);
    (bcast ? a->leaves : a->roots)[i] = 0;
  }
}

// A bcast's leaf i holds root i of the rank it reads; a reduce's root j the
// leaf j that reads it (leaves 0 and 1 of the previous rank, 2 and 3 of the next).
void expect(Checker &ck, const Arrays &a, int it, int me, int size, bool bcast, const char *what) {
  const int next = (me + 1) % size, prev = (me + size - 1) % size;
  int wrong = 0;
  for (int i = 0; i < kUnits; i++) {
    const int from = bcast ? (i < 2 ? next : prev) : (i < 2 ? prev : next);
    wrong += (bcast ? a.leaves : a.roots)[i] != value(it, from, i);
  }
  ck.check(wrong == 0, "%s: %d of %d values wrong", what, wrong, kUnits);
}

long long express_count(stf_sf sf) {
  stf_stats s = stf_stats_init();
  stf_get_stats(sf, &s);
  return s.express_operations;
}

// A prepared bcast and reduce, each alone in flight: every start after the
// first goes express where each region's credit is back by then (two or
// more slots: the peer has ended the operation before the last).
void alone(Checker &ck, const std::string &options, bool counted, int me, int size) {
  ck.context(options + ": prepared operations alone in flight");
  stf_sf sf = ring(ck, options, me, size);
  Arrays b, r;
  stf_request qb = nullptr, qr = nullptr;
  ck.code(stf_bcast_init(sf, MPI_DOUBLE, b.roots.data(), b.leaves.data(), MPI_REPLACE, &qb), STF_SUCCESS, "init");
  ck.code(stf_reduce_init(sf, MPI_DOUBLE, r.leaves.data(), r.roots.data(), MPI_SUM, &qr), STF_SUCCESS, "init");
  const int starts = 6;
  for (int it = 0; it < starts; it++) {
    fill(&b, it, me, true);
    ck.code(stf_start(sf, &qb), STF_SUCCESS, "stf_start bcast");
    ck.code(stf_bcast_end(sf, &qb), STF_SUCCESS, "stf_bcast_end");
    expect(ck, b, it, me, size, true, "prepared bcast");
    fill(&r, it, me, false);
    ck.code(stf_start(sf, &qr), STF_SUCCESS, "stf_start reduce");
    ck.code(stf_reduce_end(sf, &qr), STF_SUCCESS, "stf_reduce_end");
    expect(ck, r, it, me, size, false, "prepared reduce");
  }
  const long long n = express_count(sf);
  if (counted)
    ck.check(n == 2 * (starts - 1), "%lld express operations, %d expected", n, 2 * (starts - 1));
  else
    ck.check(n <= 2 * (starts - 1), "%lld express operations, at most %d expected", n, 2 * (starts - 1));
  stf_request_free(sf, &qb);
  stf_request_free(sf, &qr);
  stf_destroy(&sf);
}

// Ends by stf_test alone.
void poll(Checker &ck, stf_sf sf, stf_request *q) {
  int done = 0;
  for (long polls = 0; !done && ck.check(polls < 100000000, "still in flight after 10^8 tests"); polls++) {
    if (!ck.code(stf_test(sf, q, &done), STF_SUCCESS, "stf_test")) return;
    sched_yield();
  }
}

// An express bcast X made ordinary: by a begun bcast Y, by a prepared
// reduce, by stf_test; ended in an order that differs between ranks.
void settled(Checker &ck, const std::string &options, int me, int size) {
  ck.context(options + ": express operations made ordinary");
  stf_sf sf = ring(ck, options, me, size);
  Arrays x, y, r;
  stf_request qx = nullptr, qr = nullptr;
  ck.code(stf_bcast_init(sf, MPI_DOUBLE, x.roots.data(), x.leaves.data(), MPI_REPLACE, &qx), STF_SUCCESS, "init");
  ck.code(stf_reduce_init(sf, MPI_DOUBLE, r.leaves.data(), r.roots.data(), MPI_SUM, &qr), STF_SUCCESS, "init");
  fill(&x, 0, me, true);
  ck.code(stf_start(sf, &qx), STF_SUCCESS, "stf_start");  // the first start: ordinary, and aimed
  ck.code(stf_bcast_end(sf, &qx), STF_SUCCESS, "stf_bcast_end");
  expect(ck, x, 0, me, size, true, "first start");
  fill(&r, 0, me, false);
  ck.code(stf_start(sf, &qr), STF_SUCCESS, "stf_start");
  ck.code(stf_reduce_end(sf, &qr), STF_SUCCESS, "stf_reduce_end");
  const long long before = express_count(sf);
  for (int it = 1; it < 9; it++) {
    fill(&x, it, me, true);
    ck.code(stf_start(sf, &qx), STF_SUCCESS, "stf_start");
    const bool x_first = (me + it) % 2;
    switch (it % 3) {
      case 0: {  // a begun bcast on other arrays
        stf_request qy = nullptr;
        fill(&y, it + 100, me, true);
        ck.code(stf_bcast_begin(sf, MPI_DOUBLE, y.roots.data(), y.leaves.data(), MPI_REPLACE, &qy), STF_SUCCESS,
                "stf_bcast_begin");
        if (x_first) ck.code(stf_bcast_end(sf, &qx), STF_SUCCESS, "stf_bcast_end (prepared)");
        ck.code(stf_bcast_end(sf, &qy), STF_SUCCESS, "stf_bcast_end (begun)");
        if (!x_first) ck.code(stf_bcast_end(sf, &qx), STF_SUCCESS, "stf_bcast_end (prepared)");
        expect(ck, y, it + 100, me, size, true, "begun bcast beside an express one");
        break;
      }
      case 1:  // the prepared reduce, the other direction
        fill(&r, it + 200, me, false);
        ck.code(stf_start(sf, &qr), STF_SUCCESS, "stf_start reduce");
        if (x_first) ck.code(stf_bcast_end(sf, &qx), STF_SUCCESS, "stf_bcast_end");
        ck.code(stf_reduce_end(sf, &qr), STF_SUCCESS, "stf_reduce_end");
        if (!x_first) ck.code(stf_bcast_end(sf, &qx), STF_SUCCESS, "stf_bcast_end");
        expect(ck, r, it + 200, me, size, false, "prepared reduce beside an express bcast");
        break;
      default:
        poll(ck, sf, &qx);
    }
    expect(ck, x, it, me, size, true, "express bcast made ordinary");
  }
  ck.check(express_count(sf) == before, "%lld express operations counted, none expected",
           express_count(sf) - before);
  stf_request_free(sf, &qx);
  stf_request_free(sf, &qr);
  stf_destroy(&sf);
}

// Three begins alike on rank 0 (the third restarts the second's kept slot
// on the express path) while the other ranks' third moves `other` units:
// every rank's third end fails with STF_ERR_ARG; then, with units that
// agree, the SF goes express again.
void units_differ(Checker &ck, int me, int size) {
  ck.context("-stf_type putsignal: the peers' units differ on the express path");
  stf_sf sf = ring(ck, "-stf_type putsignal", me, size);
  Arrays a, f;
  for (int it = 0; it < 3; it++) {
    fill(&a, it, me, true);
    const bool odd = me != 0 && it == 2;
    const MPI_Datatype unit = odd ? MPI_FLOAT : MPI_DOUBLE;
    Arrays &to = odd ? f : a;
    const int rc = stf_bcast(sf, unit, to.roots.data(), to.leaves.data(), MPI_REPLACE);
    ck.code(rc, it == 2 ? STF_ERR_ARG : STF_SUCCESS, it == 2 ? "bcast of units of another size" : "bcast");
    if (it < 2) expect(ck, a, it, me, size, true, "bcast before the units differ");
  }
  const long long before = express_count(sf);
  for (int it = 3; it < 7; it++) {
    fill(&a, it, me, true);
    ck.code(stf_bcast(sf, MPI_DOUBLE, a.roots.data(), a.leaves.data(), MPI_REPLACE), STF_SUCCESS, "bcast after");
    expect(ck, a, it, me, size, true, "bcast after the units differed");
  }
  ck.check(express_count(sf) > before, "no express operation after the failed one");
  stf_destroy(&sf);
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Checker ck("test_express", argc, argv, 1);
  alone(ck, "-stf_type putsignal", true, me, size);
  alone(ck, "-stf_type putsignal -stf_putsignal_slots 1", false, me, size);
  for (const char *slots : {"1", "2", "4"})
    settled(ck, std::string("-stf_type putsignal -stf_putsignal_slots ") + slots, me, size);
  if (size >= 2) units_differ(ck, me, size);
  const int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
