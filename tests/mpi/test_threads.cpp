// Different SFs used from different threads at once (MPI_THREAD_MULTIPLE),
// as the header's "Threads" section allows:
//  1. two basic SFs on MPI_COMM_WORLD (one shared private duplicate, its
//     tag counter, the communicator's deferred-send queue), created and set
//     up one after the other by the main thread, then driven by two threads
//     at once;
//  2. two SFs on two communicators, created and set up inside the threads at
//     the same time (communicator records, datatype cache, options), one
//     basic and one neighbor;
//  3. one SF called from a second thread while the first waits in a call
//     (not allowed): the second thread's calls are refused with
//     STF_ERR_STATE, and the first thread's operation is right.
// Every thread checks every result; each runs thousands of operations,
// mixing blocking calls, begin/end and stf_test polling. Exit 77 (skipped)
// when the MPI library does not provide MPI_THREAD_MULTIPLE.
#include <sched.h>

#include <atomic>
#include <chrono>

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "check.h"
#include "graphs.h"

using namespace stft;

namespace {

int me = 0, nranks = 1;

// One thread's work and what it found wrong.
struct Worker {
  LocalGraph graph;
  GlobalGraph global;  // gathered by the main thread (collective)
  stf_sf sf = nullptr;
  MPI_Comm comm = MPI_COMM_NULL;  // set: the thread creates and sets up its SF on it
  const char *options = nullptr;
  int iterations = 0;
  long long operations = 0;
  std::string failure;  // first failure, if any
  int id = 0;

  void fail(const std::string &what) {
    if (failure.empty()) failure = what;
  }
  bool ok(int rc, const char *what) {
    if (rc != STF_SUCCESS) fail(std::string(what) + ": " + stf_error_name(rc) + ": " + stf_last_error_message());
    return rc == STF_SUCCESS;
  }
  static double value(int worker, int rank, int it, stf_int root) {
    return worker * 1e6 + rank * 1e4 + it + 0.25 * root;
  }

  // Ends req by its end or by polling stf_test.
  bool finish(stf_request *req, bool poll, int (*end)(stf_sf, stf_request *)) {
    if (!poll) return ok(end(sf, req), "end");
    int done = 0;
    while (ok(stf_test(sf, req, &done), "stf_test") && !done) sched_yield();
    return done;
  }

  void run() {
    if (comm != MPI_COMM_NULL) {
      if (!ok(stf_create(comm, &sf), "stf_create") || (options && !ok(stf_set_sf_options(sf, options), "options")) ||
          !ok(stf_set_graph(sf, graph.nroots, graph.nleaves(), graph.ilocal_ptr(), STF_COPY_VALUES,
                            graph.iremote.data(), STF_COPY_VALUES),
              "stf_set_graph") ||
          !ok(stf_setup(sf), "stf_setup"))
        return;
    }
    stf_int lo = 0, hi = -1;
    graph.leaf_range(&lo, &hi);
    std::vector<double> roots(graph.nroots), leaves(hi + 1), sums(graph.nroots);
    for (int it = 0; it < iterations && failure.empty(); it++) {
      for (stf_int r = 0; r < graph.nroots; r++) roots[r] = value(id, me, it, r);
      stf_request req = nullptr;
      const bool poll = it % 3 == 1;
      if (it % 3 == 0) {
        if (!ok(stf_bcast(sf, MPI_DOUBLE, roots.data(), leaves.data(), MPI_REPLACE), "bcast")) return;
      } else if (!ok(stf_bcast_begin(sf, MPI_DOUBLE, roots.data(), leaves.data(), MPI_REPLACE, &req), "bcast_begin") ||
                 !finish(&req, poll, stf_bcast_end)) {
        return;
      }
      for (stf_int i = 0; i < graph.nleaves(); i++) {
        const stf_node n = graph.iremote[i];
        if (leaves[graph.slot(i)] != value(id, n.rank, it, n.index))
          return fail("iteration " + std::to_string(it) + ": leaf " + std::to_string(graph.slot(i)) + " wrong");
      }
      // Each root gets the sum of what its leaves read from it: degree * value.
      std::fill(sums.begin(), sums.end(), 0.0);
      if (!ok(stf_reduce_begin(sf, MPI_DOUBLE, leaves.data(), sums.data(), MPI_SUM, &req), "reduce_begin") ||
          !finish(&req, poll, stf_reduce_end))
        return;
      for (stf_int r = 0; r < graph.nroots; r++)
        if (sums[r] != global.degree(me, r) * roots[r])
          return fail("iteration " + std::to_string(it) + ": reduce onto root " + std::to_string(r) + " wrong");
      operations += 2;
    }
  }
};

// Rank 0's first thread waits in a call for the other ranks, which begin
// late (in its end; with window's fences in its begin already); its second
// thread calls into the same SF meanwhile. The second thread's calls would
// fail on their arguments if they got through (a begin with NULL root data
// where this rank has roots, a test of a NULL request), before any message.
void one_sf_two_threads(Checker &ck, const char *type) {
  ck.context(std::string("one SF, a second thread calling while the first waits: ") + type);
  const LocalGraph g = ring_graph(me, nranks, 5);
  stf_sf sf = nullptr;
  if (!ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "stf_create") ||
      !ck.code(stf_set_sf_options(sf, (std::string("-stf_type ") + type).c_str()), STF_SUCCESS, "options") ||
      !ck.code(stf_set_graph(sf, g.nroots, g.nleaves(), g.ilocal_ptr(), STF_COPY_VALUES, g.iremote.data(),
                             STF_COPY_VALUES),
               STF_SUCCESS, "stf_set_graph") ||
      !ck.code(stf_setup(sf), STF_SUCCESS, "stf_setup"))
    MPI_Abort(MPI_COMM_WORLD, 1);
  stf_int lo = 0, hi = -1;
  g.leaf_range(&lo, &hi);
  std::vector<double> roots(g.nroots), leaves(hi + 1, -1.0), other_leaves(hi + 1, -1.0);
  for (stf_int r = 0; r < g.nroots; r++) roots[r] = me * 100 + r;
  if (me == 0) {
    std::atomic<bool> calling{false}, finished{false};
    bool begin_refused = false, test_refused = false;
    std::string message;
    std::thread second([&] {
      while (!calling.load()) sched_yield();
      std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the others begin 2 s late
      stf_request mine = nullptr;
      while (!finished.load() && !(begin_refused && test_refused)) {
        if (!begin_refused &&
            stf_bcast_begin(sf, MPI_DOUBLE, nullptr, other_leaves.data(), MPI_REPLACE, &mine) == STF_ERR_STATE) {
          begin_refused = true;
          message = stf_last_error_message();
        }
        int done = 0;
        if (!test_refused && stf_test(sf, nullptr, &done) == STF_ERR_STATE) test_refused = true;
        sched_yield();
      }
    });
    calling.store(true);
    ck.code(stf_bcast(sf, MPI_DOUBLE, roots.data(), leaves.data(), MPI_REPLACE), STF_SUCCESS, "first thread's bcast");
    finished.store(true);
    second.join();
    ck.check(begin_refused, "the second thread's begin was never refused");
    ck.check(test_refused, "the second thread's stf_test was never refused");
    ck.check(message.find("another thread") != std::string::npos, "message: %s", message.c_str());
    for (double v : other_leaves) ck.check(v == -1.0, "the refused begin wrote leaves");
  } else {
    std::this_thread::sleep_for(std::chrono::seconds(2));
    ck.code(stf_bcast(sf, MPI_DOUBLE, roots.data(), leaves.data(), MPI_REPLACE), STF_SUCCESS, "bcast");
  }
  for (stf_int i = 0; i < g.nleaves(); i++) {
    const stf_node n = g.iremote[i];
    ck.check(leaves[g.slot(i)] == n.rank * 100 + n.index, "leaf %d: %g", static_cast<int>(g.slot(i)),
             leaves[g.slot(i)]);
  }
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
}

}  // namespace

int main(int argc, char **argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (provided < MPI_THREAD_MULTIPLE) {
    if (me == 0) std::printf("test_threads: skipped, MPI provides thread level %d only\n", provided);
    MPI_Finalize();
    return 77;
  }
  Checker ck("test_threads", argc, argv, 20251125);
  const int iterations = static_cast<int>(parse_long(argc, argv, "--iterations", "STF_TEST_ITERATIONS", 1500));
  const std::uint64_t seed = ck.seed();

  for (int phase = 0; phase < 2; phase++) {
    const bool own_comms = phase == 1;
    ck.context(own_comms ? "two SFs on two communicators, set up in the threads"
                         : "two basic SFs on MPI_COMM_WORLD, driven at once");
    std::vector<Worker> w(2);
    for (int t = 0; t < 2; t++) {
      w[t].id = t;
      w[t].iterations = iterations;
      w[t].graph = t == 0 ? ring_graph(me, nranks, 5) : random_graph(hash_key(seed, phase), t, me, nranks);
      w[t].global = gather_graph(w[t].graph, MPI_COMM_WORLD);
      if (own_comms) {
        MPI_Comm_dup(MPI_COMM_WORLD, &w[t].comm);
        w[t].options = t == 1 ? "-stf_type neighbor" : nullptr;
      } else {
        const LocalGraph &g = w[t].graph;
        if (!ck.code(stf_create(MPI_COMM_WORLD, &w[t].sf), STF_SUCCESS, "stf_create") ||
            !ck.code(stf_set_graph(w[t].sf, g.nroots, g.nleaves(), g.ilocal_ptr(), STF_COPY_VALUES,
                                   g.iremote.data(), STF_COPY_VALUES),
                     STF_SUCCESS, "stf_set_graph") ||
            !ck.code(stf_setup(w[t].sf), STF_SUCCESS, "stf_setup"))
          MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
    std::thread other([&w] { w[1].run(); });
    w[0].run();
    other.join();
    long long ops = 0;
    for (Worker &x : w) {
      ck.check(x.failure.empty(), "thread %d: %s", x.id, x.failure.c_str());
      ck.check(x.operations == 2LL * iterations || !x.failure.empty(), "thread %d ran %lld operations", x.id,
               x.operations);
      ops += x.operations;
      stf_destroy(&x.sf);
      if (x.comm != MPI_COMM_NULL) MPI_Comm_free(&x.comm);
    }
    if (me == 0) std::printf("test_threads: %s: %lld operations on rank 0\n", ck.context().c_str(), ops);
  }
  for (const char *type : {"basic", "window", "putsignal"}) one_sf_two_threads(ck, type);
  int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
