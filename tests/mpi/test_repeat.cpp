// Repeated begins: a bcast or reduce begun with the arguments of one of the
// last eight begins that kept nothing keeps its slot, and each begin after
// that restarts it (stf_stats::repeated_begins counts them). Checked
// here: the data of every repeat against the ring's oracle, the handles
// (each ends with its operation; a kept slot is no prepared request), up to
// eight kept begins (the least recently begun goes first) and the begins
// that never come back (they push out none), the same arguments twice in
// flight, no slot kept for messages over 1 MiB, and the SF's life around
// kept slots (stf_reset and stf_destroy count no resting one, and refuse
// one in flight). Run under every host transport by the ENV variants.
#include <string>
#include <vector>

#include "check.h"
#include "ring_case.h"

using namespace stft;

namespace {

// Argument sets: the arrays of a bcast and of a reduce back. An SF keeps
// eight begins' slots, four sets; one more pushes out the first.
constexpr int kSets = 5;

struct Ring {
  int rank = 0, size = 1;
  stf_sf sf = nullptr;
};

// Leaf 0 of each rank reads root 0 of the next rank, leaf 1 root 1 of the previous.
void make_ring(Checker &ck, Ring *g, const char *options = "") {
  MPI_Comm_rank(MPI_COMM_WORLD, &g->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g->size);
  ck.code(stf_create(MPI_COMM_WORLD, &g->sf), STF_SUCCESS, "stf_create");
  ck.code(stf_set_sf_options(g->sf, options), STF_SUCCESS, "stf_set_sf_options");
  stf_node roots[2] = {{(g->rank + 1) % g->size, 0}, {(g->rank + g->size - 1) % g->size, 1}};
  ck.code(stf_set_graph(g->sf, 2, 2, nullptr, STF_COPY_VALUES, roots, STF_COPY_VALUES), STF_SUCCESS,
          "stf_set_graph");
  ck.code(stf_setup(g->sf), STF_SUCCESS, "stf_setup");
}

// Root i of rank r in round t.
double root_value(int r, int i, int t) { return 1000.0 * t + 10.0 * r + i; }

long long repeats(Checker &ck, stf_sf sf) {
  stf_stats s = stf_stats_init();
  ck.code(stf_get_stats(sf, &s), STF_SUCCESS, "stf_get_stats");
  return s.repeated_begins;
}

// Round t on arrays root and leaf: a split bcast (or a blocking one), its
// leaves checked; then a reduce (sum) of the leaves onto roots cleared to
// 1, checked.
void round_trip(Checker &ck, const Ring &g, double *root, double *leaf, int t, bool blocking) {
  for (int i = 0; i < 2; i++) root[i] = root_value(g.rank, i, t);
  leaf[0] = leaf[1] = -1;
  if (blocking) {
    ck.code(stf_bcast(g.sf, MPI_DOUBLE, root, leaf, MPI_REPLACE), STF_SUCCESS, "stf_bcast");
  } else {
    stf_request req = nullptr;
    ck.code(stf_bcast_begin(g.sf, MPI_DOUBLE, root, leaf, MPI_REPLACE, &req), STF_SUCCESS, "bcast_begin");
    ck.code(stf_bcast_end(g.sf, &req), STF_SUCCESS, "bcast_end");
    ck.check(req == nullptr, "the ended request is not NULL");
  }
  const int next = (g.rank + 1) % g.size, prev = (g.rank + g.size - 1) % g.size;
  ck.check(leaf[0] == root_value(next, 0, t) && leaf[1] == root_value(prev, 1, t),
           "round %d: leaves %g %g, want %g %g", t, leaf[0], leaf[1], root_value(next, 0, t), root_value(prev, 1, t));
  root[0] = root[1] = 1;
  stf_request req = nullptr;
  ck.code(stf_reduce_begin(g.sf, MPI_DOUBLE, leaf, root, MPI_SUM, &req), STF_SUCCESS, "reduce_begin");
  int done = 0;
  while (!done) ck.code(stf_test(g.sf, &req, &done), STF_SUCCESS, "stf_test");
  // Root 0 here is leaf 0 of the previous rank: our own root 0 of round t.
  ck.check(root[0] == 1 + root_value(g.rank, 0, t) && root[1] == 1 + root_value(g.rank, 1, t),
           "round %d: roots %g %g after the reduce, want %g %g", t, root[0], root[1], 1 + root_value(g.rank, 0, t),
           1 + root_value(g.rank, 1, t));
}

// The same arrays every round: each begin after the second is a repeat
// (none where options turn repeated begins off: repeating false).
void same_arguments(Checker &ck, const char *options, bool repeating) {
  ck.context(std::string("same arguments ") + options);
  Ring g;
  make_ring(ck, &g, options);
  double root[2], leaf[2];
  const int n = 20;
  for (int t = 0; t < n; t++) round_trip(ck, g, root, leaf, t, t % 2);
  const int want = repeating ? 2 * (n - 2) : 0;
  ck.check(repeats(ck, g.sf) == want, "%lld repeated begins, want %d", repeats(ck, g.sf), want);
  ck.code(stf_destroy(&g.sf), STF_SUCCESS, "stf_destroy with kept slots between operations");
}

// A kept slot's handle ends with its operation, and is no prepared request.
void handles(Checker &ck) {
  ck.context("handles");
  Ring g;
  make_ring(ck, &g);
  double root[2] = {1, 2}, leaf[2];
  stf_request req = nullptr, copy = nullptr;
  for (int k = 0; k < 3; k++) {  // seen, kept, repeated
    ck.code(stf_bcast_begin(g.sf, MPI_DOUBLE, root, leaf, MPI_REPLACE, &req), STF_SUCCESS, "bcast_begin");
    if (k < 2) copy = req;
    ck.code(stf_start(g.sf, &req), STF_ERR_REQUEST, "stf_start on a begun request");
    ck.code(stf_request_free(g.sf, &req), STF_ERR_REQUEST, "stf_request_free on a begun request");
    // The keeping begin's handle, ended, stays ended while its slot runs the repeat.
    if (k == 2) {
      ck.check(req != copy, "the repeat's handle is the keeping begin's");
      ck.code(stf_bcast_end(g.sf, &copy), STF_ERR_REQUEST, "bcast_end on the keeping begin's handle during the repeat");
    }
    ck.code(stf_bcast_end(g.sf, &req), STF_SUCCESS, "bcast_end");
    ck.code(stf_bcast_end(g.sf, &copy), STF_ERR_REQUEST, "bcast_end on an ended request's copy");
  }
  ck.check(repeats(ck, g.sf) == 1, "%lld repeated begins, want 1", repeats(ck, g.sf));
  ck.code(stf_bcast_begin(g.sf, MPI_DOUBLE, root, leaf, MPI_REPLACE, &req), STF_SUCCESS, "bcast_begin");
  ck.code(stf_destroy(&g.sf), STF_ERR_STATE, "stf_destroy with a repeated begin in flight");
  ck.code(stf_reset(g.sf), STF_ERR_STATE, "stf_reset with a repeated begin in flight");
  ck.code(stf_bcast_end(g.sf, &req), STF_SUCCESS, "bcast_end");
  ck.code(stf_destroy(&g.sf), STF_SUCCESS, "stf_destroy");
}

// Argument sets taken in turn. Four: the first turn sees them, the second
// keeps their eight slots, the third repeats. Then five: the fifth set's
// first turn keeps nothing (it pushes out no kept slot), its second keeps
// two slots and pushes out the first set's, the least recently begun. In
// the turn after, the first set comes back unseen (the fifth's first turn
// wrote over it among the last eight seen): it keeps nothing.
void many_arguments(Checker &ck) {
  ck.context("many arguments");
  Ring g;
  make_ring(ck, &g);
  std::vector<double> roots(2 * kSets), leaves(2 * kSets);
  int t = 0;
  const auto turn = [&](int sets) {
    for (int s = 0; s < sets; s++, t++) round_trip(ck, g, &roots[2 * s], &leaves[2 * s], t, false);
  };
  for (int k = 0; k < 3; k++) turn(kSets - 1);
  long long want = 2 * (kSets - 1);
  ck.check(repeats(ck, g.sf) == want, "four sets: %lld repeated begins, want %lld", repeats(ck, g.sf), want);
  turn(kSets);
  turn(kSets);
  want += 2 * 2 * (kSets - 1);  // the first four sets, twice
  ck.check(repeats(ck, g.sf) == want, "five sets: %lld repeated begins, want %lld", repeats(ck, g.sf), want);
  turn(kSets);
  want += 2 * (kSets - 1);  // all but the first set
  ck.check(repeats(ck, g.sf) == want, "five sets, once more: %lld repeated begins, want %lld", repeats(ck, g.sf),
           want);
  ck.code(stf_reset(g.sf), STF_SUCCESS, "stf_reset with kept slots between operations");
  ck.code(stf_destroy(&g.sf), STF_SUCCESS, "stf_destroy");
}

// The same arguments begun while their kept slot is in flight: the second
// runs in a slot of its own, and the kept one repeats after.
void twice_in_flight(Checker &ck) {
  ck.context("twice in flight");
  Ring g;
  make_ring(ck, &g);
  double root[2], leaf[2];
  round_trip(ck, g, root, leaf, 0, false);
  round_trip(ck, g, root, leaf, 1, false);
  for (int i = 0; i < 2; i++) root[i] = root_value(g.rank, i, 2);
  stf_request a = nullptr, b = nullptr;
  ck.code(stf_bcast_begin(g.sf, MPI_DOUBLE, root, leaf, MPI_REPLACE, &a), STF_SUCCESS, "bcast_begin");
  ck.code(stf_bcast_begin(g.sf, MPI_DOUBLE, root, leaf, MPI_REPLACE, &b), STF_SUCCESS, "second bcast_begin");
  ck.check(a != b, "two operations in flight share a handle");
  ck.code(stf_bcast_end(g.sf, &b), STF_SUCCESS, "second bcast_end");
  ck.code(stf_bcast_end(g.sf, &a), STF_SUCCESS, "bcast_end");
  const int next = (g.rank + 1) % g.size, prev = (g.rank + g.size - 1) % g.size;
  ck.check(leaf[0] == root_value(next, 0, 2) && leaf[1] == root_value(prev, 1, 2), "leaves %g %g, want %g %g",
           leaf[0], leaf[1], root_value(next, 0, 2), root_value(prev, 1, 2));
  round_trip(ck, g, root, leaf, 3, false);
  // Round 1 kept both; the first begin of round 2 and both of round 3 repeated.
  ck.check(repeats(ck, g.sf) == 3, "%lld repeated begins, want 3", repeats(ck, g.sf));
  ck.code(stf_destroy(&g.sf), STF_SUCCESS, "stf_destroy");
}

// Messages of more than 1 MiB to and from this rank keep no slot (its
// buffers would stay with it): the begins run anew, the data still right.
void large_messages(Checker &ck) {
  ck.context("large messages");
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int n = 80000;  // doubles each way: 1.28 MB with a peer
  stf_sf sf = ring_sf(ck, n);
  std::vector<double> root(n), leaf(n);
  const int rounds = 3;
  for (int t = 0; t < rounds; t++) {
    for (int i = 0; i < n; i++) root[i] = root_value(rank, i, t);
    ck.code(stf_bcast(sf, MPI_DOUBLE, root.data(), leaf.data(), MPI_REPLACE), STF_SUCCESS, "stf_bcast");
    int wrong = 0;
    for (int i = 0; i < n; i++) wrong += leaf[i] != root_value((rank + 1) % size, i, t);
    ck.check(wrong == 0, "round %d: %d leaves wrong", t, wrong);
  }
  // Alone, the rank sends nothing: its operations are small and repeat.
  const long long want = size == 1 ? rounds - 2 : 0;
  ck.check(repeats(ck, sf) == want, "%lld repeated begins, want %lld", repeats(ck, sf), want);
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  Checker ck("test_repeat", argc, argv, 1);
  same_arguments(ck, "", true);
  same_arguments(ck, "-stf_debug", true);
  same_arguments(ck, "-stf_repeat_begins 0", false);
  handles(ck);
  many_arguments(ck);
  twice_in_flight(ck);
  large_messages(ck);
  const int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
