// Communicator economy: thousands of SFs alive at once on one communicator.
// MPICH has 2048 communicator ids per process and Open MPI about 65,000, so
// this passes on MPICH only if SFs share one private duplicate of the
// user's communicator (each with tags of its own) instead of duplicating
// it; on every MPI it checks that they report one shared communicator.
//   --count N (default 20000): N SFs on MPI_COMM_WORLD, a ring graph each,
//     one bcast each (all begun, then all ended in reverse) with values
//     only that SF sends; destroyed, then the same again (on the duplicate
//     the last SF left).
//   --neighbor-count N (default 3000): the same with the neighbor
//     transport, whose SFs with the same peers share their two graph
//     communicators (6000 otherwise: more than MPICH has).
//   --user-comms N (default 3000): N user communicators one after the
//     other, each with an SF created, used and destroyed, then freed: the
//     duplicate kept after the last SF goes with its communicator (else
//     MPICH runs out of communicator ids), and an SF created, used and
//     destroyed again and again keeps one duplicate.
// At the end, MPI_Finalize frees the duplicate the last SF on
// MPI_COMM_WORLD left (checked from a callback on MPI_COMM_SELF that MPI
// runs after the library's, as it deletes those attributes last set first).
// Also: SFs derived from one (duplicate, multi-SF, algebra results, SFs
// created on an SF's communicator) share its communicator; operations of
// two SFs in flight at once, ended in a rank-dependent order, do not take
// each other's messages.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "check.h"

using namespace stft;

namespace {

int count_arg(int argc, char **argv, const char *name, int dflt) {
  for (int i = 1; i + 1 < argc; i++)
    if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
  return dflt;
}

// Leaf 0 of rank r reads root 0 of rank r+1, leaf 1 root 1 of rank r-1.
int ring(stf_sf sf, int me, int size) {
  stf_node remote[2] = {{(me + 1) % size, 0}, {(me + size - 1) % size, 1}};
  return stf_set_graph(sf, 2, 2, nullptr, STF_COPY_VALUES, remote, STF_COPY_VALUES);
}

double value(int sf_index, int rank, int root) { return 1e6 * sf_index + 10.0 * rank + root; }

// Create n ring SFs, bcast on each (all begun, then all ended), check, destroy.
void many(Checker &ck, int n, const char *type, int me, int size) {
  ck.context(std::to_string(n) + " SFs alive at once" + (type ? std::string(", transport ") + type : ""));
  std::vector<stf_sf> sfs(n, nullptr);
  std::vector<double> roots(2 * static_cast<std::size_t>(n)), leaves(2 * static_cast<std::size_t>(n), -1);
  std::vector<stf_request> reqs(n, nullptr);
  MPI_Comm first = MPI_COMM_NULL;
  bool shared = true;
  for (int i = 0; i < n; i++) {
    if (!ck.code(stf_create(MPI_COMM_WORLD, &sfs[i]), STF_SUCCESS, "stf_create")) return;
    if (type) ck.code(stf_set_type(sfs[i], type), STF_SUCCESS, "stf_set_type");
    ck.code(ring(sfs[i], me, size), STF_SUCCESS, "stf_set_graph");
    MPI_Comm c = MPI_COMM_NULL;
    stf_get_comm(sfs[i], &c);
    if (i == 0) first = c;
    shared &= c == first;
    roots[2 * i] = value(i, me, 0);
    roots[2 * i + 1] = value(i, me, 1);
  }
  ck.check(shared, "the SFs do not share one communicator");
  int result = MPI_UNEQUAL;
  MPI_Comm_compare(first, MPI_COMM_WORLD, &result);
  ck.check(result == MPI_CONGRUENT, "the shared communicator is not a duplicate of MPI_COMM_WORLD (%d)", result);
  for (int i = 0; i < n; i++)
    ck.code(stf_bcast_begin(sfs[i], MPI_DOUBLE, &roots[2 * i], &leaves[2 * i], MPI_REPLACE, &reqs[i]), STF_SUCCESS,
            "stf_bcast_begin");
  for (int i = n - 1; i >= 0; i--) ck.code(stf_bcast_end(sfs[i], &reqs[i]), STF_SUCCESS, "stf_bcast_end");
  long long wrong = 0;
  for (int i = 0; i < n; i++)
    wrong += leaves[2 * i] != value(i, (me + 1) % size, 0) || leaves[2 * i + 1] != value(i, (me + size - 1) % size, 1);
  ck.check(wrong == 0, "%lld SFs received wrong values", wrong);
  for (stf_sf &sf : sfs) ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
}

// One SF on a communicator at a time: each finds the duplicate the one
// before left (so it is not duplicated again), and a duplicate goes when its
// user's communicator is freed.
void one_at_a_time(Checker &ck, int n, int me, int size) {
  ck.context(std::to_string(n) + " user communicators, one SF each, freed one after the other");
  // A mark on the first SF's communicator, which a new duplicate would not have.
  int mark = MPI_KEYVAL_INVALID;
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &mark, nullptr);
  auto use_one = [&](MPI_Comm user, bool first) {
    stf_sf sf = nullptr;
    if (!ck.code(stf_create(user, &sf), STF_SUCCESS, "stf_create")) return false;
    ck.code(ring(sf, me, size), STF_SUCCESS, "stf_set_graph");
    MPI_Comm shared = MPI_COMM_NULL;
    stf_get_comm(sf, &shared);
    if (first) {
      MPI_Comm_set_attr(shared, mark, nullptr);
    } else {
      void *v = nullptr;
      int marked = 0;
      MPI_Comm_get_attr(shared, mark, &v, &marked);
      if (!ck.check(marked, "the second SF did not find the duplicate the first left")) return false;
    }
    double roots[2] = {value(0, me, 0), value(0, me, 1)}, leaves[2] = {-1, -1};
    ck.code(stf_bcast(sf, MPI_DOUBLE, roots, leaves, MPI_REPLACE), STF_SUCCESS, "stf_bcast");
    const bool right = leaves[0] == value(0, (me + 1) % size, 0) && leaves[1] == value(0, (me + size - 1) % size, 1);
    ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
    return ck.check(right, "wrong values");
  };
  for (int i = 0; i < n; i++) {
    MPI_Comm user = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &user);
    const bool ok = use_one(user, true) && use_one(user, false);
    MPI_Comm_free(&user);
    if (!ok) break;
  }
  MPI_Comm_free_keyval(&mark);
}

// Counted when MPI deletes it, with its communicator.
int duplicates_freed = 0;
int count_free(MPI_Comm, int, void *, void *) {
  duplicates_freed++;
  return MPI_SUCCESS;
}
bool freed_at_finalize = false;
int check_at_finalize(MPI_Comm, int, void *, void *) {
  freed_at_finalize = duplicates_freed == 1;
  return MPI_SUCCESS;
}

// An SF created and destroyed on MPI_COMM_WORLD, its duplicate marked.
void mark_duplicate_for_finalize(Checker &ck, int me, int size) {
  int counted = MPI_KEYVAL_INVALID;
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_free, &counted, nullptr);
  stf_sf sf = nullptr;
  ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "stf_create");
  ck.code(ring(sf, me, size), STF_SUCCESS, "stf_set_graph");
  MPI_Comm shared = MPI_COMM_NULL;
  stf_get_comm(sf, &shared);
  MPI_Comm_set_attr(shared, counted, nullptr);
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
  MPI_Comm_free_keyval(&counted);  // the attribute keeps it until deleted
}

// SFs made from an SF use its communicator.
void derived(Checker &ck, int me, int size) {
  ck.context("derived SFs share the communicator");
  stf_sf sf = nullptr, dup = nullptr, multi = nullptr, inv = nullptr, sub = nullptr;
  ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "stf_create");
  ck.code(ring(sf, me, size), STF_SUCCESS, "stf_set_graph");
  ck.code(stf_duplicate(sf, STF_DUPLICATE_GRAPH, &dup), STF_SUCCESS, "stf_duplicate");
  ck.code(stf_get_multi_sf(sf, &multi), STF_SUCCESS, "stf_get_multi_sf");
  ck.code(stf_create_inverse(sf, &inv), STF_SUCCESS, "stf_create_inverse");
  const stf_int keep = 1;
  ck.code(stf_create_embedded_roots(sf, 1, &keep, &sub), STF_SUCCESS, "stf_create_embedded_roots");
  MPI_Comm c[5];
  stf_sf all[5] = {sf, dup, multi, inv, sub};
  for (int i = 0; i < 5; i++) {
    ck.code(stf_get_comm(all[i], &c[i]), STF_SUCCESS, "stf_get_comm");
    ck.check(c[i] == c[0], "derived SF %d has its own communicator", i);
  }
  // SFs on the private communicator itself join it too.
  stf_sf on_private = nullptr;
  ck.code(stf_create(c[0], &on_private), STF_SUCCESS, "stf_create on the SF's communicator");
  MPI_Comm cp = MPI_COMM_NULL;
  stf_get_comm(on_private, &cp);
  ck.check(cp == c[0], "an SF created on an SF's communicator got another one");
  for (stf_sf *p : {&on_private, &sub, &inv, &dup, &sf}) ck.code(stf_destroy(p), STF_SUCCESS, "stf_destroy");
}

// Two SFs with the same graph on one communicator, operations of both in
// flight, ended in an order that differs between ranks: each gets its own
// data (their messages carry different tags).
void interleaved(Checker &ck, int me, int size) {
  ck.context("two SFs in flight, ends in rank-dependent order");
  stf_sf a = nullptr, b = nullptr;
  ck.code(stf_create(MPI_COMM_WORLD, &a), STF_SUCCESS, "stf_create");
  ck.code(stf_create(MPI_COMM_WORLD, &b), STF_SUCCESS, "stf_create");
  ck.code(ring(a, me, size), STF_SUCCESS, "ring a");
  ck.code(ring(b, me, size), STF_SUCCESS, "ring b");
  double ra[2] = {value(1, me, 0), value(1, me, 1)}, rb[2] = {value(2, me, 0), value(2, me, 1)};
  double la[2] = {-1, -1}, lb[2] = {-1, -1};
  double sa[2] = {0, 0}, sb[2] = {0, 0};
  stf_request qa = nullptr, qb = nullptr, qra = nullptr, qrb = nullptr;
  ck.code(stf_bcast_begin(a, MPI_DOUBLE, ra, la, MPI_REPLACE, &qa), STF_SUCCESS, "bcast a");
  ck.code(stf_bcast_begin(b, MPI_DOUBLE, rb, lb, MPI_REPLACE, &qb), STF_SUCCESS, "bcast b");
  ck.code(stf_reduce_begin(b, MPI_DOUBLE, rb, sb, MPI_SUM, &qrb), STF_SUCCESS, "reduce b");
  ck.code(stf_reduce_begin(a, MPI_DOUBLE, ra, sa, MPI_SUM, &qra), STF_SUCCESS, "reduce a");
  if (me % 2) {
    ck.code(stf_bcast_end(b, &qb), STF_SUCCESS, "end b");
    ck.code(stf_reduce_end(a, &qra), STF_SUCCESS, "end reduce a");
    ck.code(stf_bcast_end(a, &qa), STF_SUCCESS, "end a");
    ck.code(stf_reduce_end(b, &qrb), STF_SUCCESS, "end reduce b");
  } else {
    ck.code(stf_reduce_end(b, &qrb), STF_SUCCESS, "end reduce b");
    ck.code(stf_bcast_end(a, &qa), STF_SUCCESS, "end a");
    ck.code(stf_reduce_end(a, &qra), STF_SUCCESS, "end reduce a");
    ck.code(stf_bcast_end(b, &qb), STF_SUCCESS, "end b");
  }
  const int next = (me + 1) % size, prev = (me + size - 1) % size;
  ck.check(la[0] == value(1, next, 0) && la[1] == value(1, prev, 1), "SF a got %g %g", la[0], la[1]);
  ck.check(lb[0] == value(2, next, 0) && lb[1] == value(2, prev, 1), "SF b got %g %g", lb[0], lb[1]);
  // The leaf arrays of the reduces are the bcasts' root arrays: root 0 of
  // rank r sums leaf 0 of rank r-1, root 1 leaf 1 of rank r+1.
  ck.check(sa[0] == value(1, prev, 0) && sa[1] == value(1, next, 1), "reduce a gave %g %g", sa[0], sa[1]);
  ck.check(sb[0] == value(2, prev, 0) && sb[1] == value(2, next, 1), "reduce b gave %g %g", sb[0], sb[1]);
  ck.code(stf_destroy(&a), STF_SUCCESS, "destroy a");
  ck.code(stf_destroy(&b), STF_SUCCESS, "destroy b");
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int at_finalize = MPI_KEYVAL_INVALID;  // before the library's first SF sets its own
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, check_at_finalize, &at_finalize, nullptr);
  MPI_Comm_set_attr(MPI_COMM_SELF, at_finalize, nullptr);
  Checker ck("test_many_sfs", argc, argv, 1);
  const int count = count_arg(argc, argv, "--count", 20000);
  const int neighbor_count = count_arg(argc, argv, "--neighbor-count", 3000);
  const int user_comms = count_arg(argc, argv, "--user-comms", 3000);
  derived(ck, me, size);
  interleaved(ck, me, size);
  many(ck, count, nullptr, me, size);
  many(ck, count, nullptr, me, size);  // again, on the duplicate the first left
  one_at_a_time(ck, user_comms, me, size);
  mark_duplicate_for_finalize(ck, me, size);
  ck.check(duplicates_freed == 0, "the duplicate went with the last SF instead of staying for the next");
  many(ck, neighbor_count, "neighbor", me, size);
  int rc = ck.finish();
  MPI_Finalize();
  if (!freed_at_finalize) {
    std::printf("[rank %d] FAIL test_many_sfs: MPI_Finalize did not free the duplicate the last SF left "
                "(%d freed)\n", me, duplicates_freed);
    rc = 1;
  }
  return rc;
}
