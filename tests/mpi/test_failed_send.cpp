// Operations whose sends fail, with basic and putsignal (an MPI error:
// this program's MPI_Isend, which the library's calls reach before the MPI
// library's through the MPI profiling interface, fails on demand). Units of
// 24 B are larger than putsignal's regions (16 B per unit), so each message
// goes by MPI_Isend; -stf_putsignal_timeout 2 turns a message that never
// comes into STF_ERR_TIMEOUT (basic, without a timeout, is polled:
// bcast_or_give_up).
// - A send fails after another message of its operation left: the rank's
//   SF refuses its next operation (STF_ERR_STATE), rather than begin it
//   again and send a peer that has its message a second copy. putsignal
//   sends from the begin's queue through the node's heap, from the begin
//   itself point-to-point (one rank per node), from the end through the RMA
//   window.
// - The first send of a begin fails, before anything left: the bcast begun
//   again sends each peer its message once (basic, and putsignal's heap and
//   point-to-point routes, whose sends leave from the begin).
// - So does one begun again after a reduce took the failed bcast's request
//   slot.
// - A model C operation's deferred send fails inside another operation's
//   begin, or in its own test: its end reports the failure.
// - A begin fails when a message for it has come already: it may be begun
//   again only where its receive was cancelled in time, else it is refused,
//   never left waiting for that message or taking the next one.
// - An end's wait fails with a receive still pending (this program's
//   MPI_Wait and MPI_Waitall fail on demand, returning at once, as MPI may
//   with MPI_ERR_PENDING): basic's SF refuses its next operation, whose
//   receive would take the message the failed one waited for.
#include <mpi.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "check.h"

using namespace stft;

namespace {

int isends_left = -1;  // armed (>= 0): how many more MPI_Isend calls succeed

bool isend_fails() { return isends_left >= 0 && isends_left-- == 0; }

// call() with MPI_Isend failing from the (succeeding + 1)-th call on.
template <class Call>
int isends_failing(int succeeding, Call call) {
  isends_left = succeeding;
  const int rc = call();
  isends_left = -1;
  return rc;
}

}  // namespace

extern "C" int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                         MPI_Request *req) {
  return isend_fails() ? MPI_ERR_OTHER : PMPI_Isend(buf, count, type, dest, tag, comm, req);
}
namespace {

bool wait_fails = false;  // armed: the next MPI_Wait or MPI_Waitall fails at once

bool take_wait_failure() {
  const bool fails = wait_fails;
  wait_fails = false;
  return fails;
}

}  // namespace

extern "C" int MPI_Wait(MPI_Request *req, MPI_Status *status) {
  return take_wait_failure() ? MPI_ERR_OTHER : PMPI_Wait(req, status);
}
extern "C" int MPI_Waitall(int n, MPI_Request *reqs, MPI_Status *statuses) {
  return take_wait_failure() ? MPI_ERR_OTHER : PMPI_Waitall(n, reqs, statuses);
}
#if MPI_VERSION >= 4
extern "C" int MPI_Isend_c(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                           MPI_Request *req) {
  return isend_fails() ? MPI_ERR_OTHER : PMPI_Isend_c(buf, count, type, dest, tag, comm, req);
}
#endif

namespace {

constexpr stf_int kUnits = 4;

// n leaves on the roots of rank from[me] (none where it is -1); kUnits roots on every rank.
stf_sf chain_sf(Checker &ck, const std::string &options, MPI_Comm trio, const int (&from)[3]) {
  int me = 0;
  MPI_Comm_rank(trio, &me);
  std::vector<stf_node> remote(from[me] < 0 ? 0 : kUnits);
  for (stf_int i = 0; i < static_cast<stf_int>(remote.size()); i++) remote[i] = {from[me], i};
  stf_sf sf = nullptr;
  ck.code(stf_create(trio, &sf), STF_SUCCESS, "stf_create");
  ck.code(stf_set_sf_options(sf, (options + " -stf_putsignal_timeout 2").c_str()), STF_SUCCESS, "options");
  ck.code(stf_set_graph(sf, kUnits, static_cast<stf_int>(remote.size()), nullptr, STF_COPY_VALUES, remote.data(),
                        STF_COPY_VALUES),
          STF_SUCCESS, "graph");
  ck.code(stf_setup(sf), STF_SUCCESS, "stf_setup");
  return sf;
}

// Units of three doubles: 24 B, larger than their regions (16 B per unit).
struct Data {
  MPI_Datatype unit;
  std::vector<double> root, leaf;
  explicit Data(int me) : root(3 * kUnits), leaf(3 * kUnits, -1) {
    MPI_Type_contiguous(3, MPI_DOUBLE, &unit);
    MPI_Type_commit(&unit);
    for (stf_int j = 0; j < 3 * kUnits; j++) root[j] = 100 * me + 0.5 + j;
  }
  ~Data() { MPI_Type_free(&unit); }
  int bcast(stf_sf sf) { return stf_bcast(sf, unit, root.data(), leaf.data(), MPI_REPLACE); }
  // A bcast whose MPI_Isend calls fail from the (succeeding + 1)-th on.
  int bcast_failing(stf_sf sf, int succeeding) {
    return isends_failing(succeeding, [&] { return bcast(sf); });
  }
  // A bcast whose message may never come. putsignal's timeout ends it
  // (STF_ERR_TIMEOUT); basic has none, so it is polled for 2 s and, not
  // done, left in flight (its SF then cannot be destroyed: *in_flight).
  int bcast_or_give_up(stf_sf sf, bool times_out, bool *in_flight) {
    if (times_out) return bcast(sf);
    stf_request req = nullptr;
    int rc = stf_bcast_begin(sf, unit, root.data(), leaf.data(), MPI_REPLACE, &req);
    int done = 0;
    for (const double t0 = MPI_Wtime(); rc == STF_SUCCESS && !done && MPI_Wtime() - t0 < 2;) {
      rc = stf_test(sf, &req, &done);
      if (!done) usleep(1000);
    }
    *in_flight = rc == STF_SUCCESS && !done;
    return *in_flight ? STF_ERR_TIMEOUT : rc;
  }
  // The leaves hold rank from's roots, or (not received) are untouched.
  long long wrong(int from, bool received) const {
    long long n = 0;
    for (stf_int j = 0; j < 3 * kUnits; j++) n += leaf[j] != (received ? 100 * from + 0.5 + j : -1);
    return n;
  }
};

bool times_out(const std::string &options) { return options.find("putsignal") != std::string::npos; }

// Rank 0's second send fails, after its first left: one peer has its
// message, the other times out, and rank 0 refuses its next bcast.
void send_fails_after_one_left(Checker &ck, const std::string &options, MPI_Comm trio) {
  ck.context(options + ": rank 0's second send fails");
  int me = 0;
  MPI_Comm_rank(trio, &me);
  stf_sf sf = chain_sf(ck, options, trio, {-1, 0, 0});
  Data d(me);
  int received = 0;
  bool in_flight = false;
  if (me == 0) {
    ck.code(d.bcast_failing(sf, 1), STF_ERR_MPI, "bcast, its second send failing");
    ck.code(d.bcast(sf), STF_ERR_STATE, "the bcast again");
    ck.has_message("destroy the SF");
  } else {
    const int rc = d.bcast_or_give_up(sf, times_out(options), &in_flight);
    ck.code_either(rc, STF_SUCCESS, STF_ERR_TIMEOUT, "bcast from a rank whose send fails");
    received = rc == STF_SUCCESS;
    ck.check(d.wrong(0, received) == 0, "%lld values wrong", d.wrong(0, received));
  }
  int total = 0;
  MPI_Allreduce(&received, &total, 1, MPI_INT, MPI_SUM, trio);
  ck.check(total == 1, "%d peers got their message, not 1", total);
  if (!in_flight) ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
}

// Rank 0's first send fails, before anything left: its bcast begun again
// sends each peer its message once.
void first_send_fails(Checker &ck, const std::string &options, MPI_Comm trio) {
  ck.context(options + ": rank 0's first send fails");
  int me = 0;
  MPI_Comm_rank(trio, &me);
  stf_sf sf = chain_sf(ck, options, trio, {-1, 0, 0});
  Data d(me);
  if (me == 0) {
    ck.code(d.bcast_failing(sf, 0), STF_ERR_MPI, "bcast, its first send failing");
    ck.code(d.bcast(sf), STF_SUCCESS, "the bcast again");
  } else {
    ck.code(d.bcast(sf), STF_SUCCESS, "bcast");
    ck.check(d.wrong(0, true) == 0, "%lld values wrong", d.wrong(0, true));
  }
  // basic: a second copy would be taken by the next bcast's receive.
  for (double &x : d.root) x += 1000;
  ck.code(d.bcast(sf), STF_SUCCESS, "the next bcast");
  if (me > 0) ck.check(d.leaf[0] == 1000.5, "the next bcast gave %g", d.leaf[0]);
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
}

// As first_send_fails, but a reduce begun between the failed bcast and
// the bcast begun again takes the failed one's request slot: the bcast
// must pair with its peers' all the same (putsignal numbered it anew, on a
// new slot, and its peers waited for the failed one's message).
void retried_on_another_slot(Checker &ck, const std::string &options, MPI_Comm trio) {
  ck.context(options + ": a bcast begun again after a reduce");
  int me = 0;
  MPI_Comm_rank(trio, &me);
  stf_sf sf = chain_sf(ck, options, trio, {-1, 0, 0});
  Data d(me);
  std::vector<double> sum(3 * kUnits, 0.0), part(3 * kUnits, me);
  stf_request bcast = nullptr, reduce = nullptr;
  auto begin_bcast = [&] { return stf_bcast_begin(sf, d.unit, d.root.data(), d.leaf.data(), MPI_REPLACE, &bcast); };
  if (me == 0) ck.code(isends_failing(0, begin_bcast), STF_ERR_MPI, "bcast_begin, its first send failing");
  // part into sum on rank 0 (REPLACE: the units are not of one base type).
  ck.code(stf_reduce_begin(sf, d.unit, part.data(), sum.data(), MPI_REPLACE, &reduce), STF_SUCCESS, "reduce_begin");
  ck.code(begin_bcast(), STF_SUCCESS, me == 0 ? "bcast_begin again" : "bcast_begin");
  ck.code(stf_bcast_end(sf, &bcast), STF_SUCCESS, "bcast_end");
  ck.code(stf_reduce_end(sf, &reduce), STF_SUCCESS, "reduce_end");
  if (me > 0) ck.check(d.wrong(0, true) == 0, "%lld values wrong", d.wrong(0, true));
  if (me == 0) ck.check(sum[0] == 1 || sum[0] == 2, "the reduce gave %g, not 1 or 2", sum[0]);
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
}

// Rank 1 receives from rank 0 and sends to rank 2. Rank 0's message has
// come (its bcast ended, and a barrier) when rank 1's begin fails on its
// own send, before anything of it left: its receive cannot be cancelled,
// so its bcast begun again would wait for that message (for ever: basic)
// or take rank 0's next one. It must either succeed (the receive was
// cancelled in time) or refuse (STF_ERR_STATE); not time out.
void received_before_failing(Checker &ck, const std::string &options, MPI_Comm trio) {
  ck.context(options + ": a message in before the begin fails");
  int me = 0;
  MPI_Comm_rank(trio, &me);
  stf_sf sf = chain_sf(ck, options, trio, {-1, 0, 1});
  Data d(me);
  if (me == 0) ck.code(d.bcast(sf), STF_SUCCESS, "bcast");
  MPI_Barrier(trio);
  int retried = STF_SUCCESS;
  bool in_flight = false;  // (basic before its fix, rank 1: the retry's receive waits for the message taken)
  if (me == 1) {
    ck.code(d.bcast_failing(sf, 0), STF_ERR_MPI, "bcast, its send failing");
    retried = d.bcast_or_give_up(sf, times_out(options), &in_flight);
    ck.code_either(retried, STF_SUCCESS, STF_ERR_STATE, "the bcast again");
    // Refused, the leaves are untouched or hold what the failed begin's
    // receive put there (user memory: the message is contiguous).
    const bool right = d.wrong(0, true) == 0 || (retried != STF_SUCCESS && d.wrong(0, false) == 0);
    ck.check(right, "%lld values wrong", d.wrong(0, true));
  }
  MPI_Bcast(&retried, 1, MPI_INT, 1, trio);
  if (me == 2) {
    const int want = retried == STF_SUCCESS ? STF_SUCCESS : STF_ERR_TIMEOUT;
    ck.code(d.bcast_or_give_up(sf, times_out(options), &in_flight), want, "bcast from rank 1");
    ck.check(d.wrong(1, want == STF_SUCCESS) == 0, "%lld values wrong", d.wrong(1, want == STF_SUCCESS));
  }
  if (!in_flight) ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
}

// basic: rank 1's bcast from rank 0 fails in its end, its wait returning
// before rank 0 has sent anything; then rank 0 sends two bcasts, the first
// with other values. Rank 1's bcast begun again must be refused: its
// receive would take the first message, the failed operation's.
void end_fails_before_message(Checker &ck, MPI_Comm trio) {
  ck.context("basic: an end failing before a peer's message came");
  int me = 0;
  MPI_Comm_rank(trio, &me);
  stf_sf sf = chain_sf(ck, "-stf_type basic", trio, {-1, 0, -1});
  Data d(me);
  if (me == 1) {
    stf_request req = nullptr;
    ck.code(stf_bcast_begin(sf, d.unit, d.root.data(), d.leaf.data(), MPI_REPLACE, &req), STF_SUCCESS, "bcast_begin");
    wait_fails = true;
    ck.code(stf_bcast_end(sf, &req), STF_ERR_MPI, "bcast_end, its wait failing");
    wait_fails = false;
  }
  MPI_Barrier(trio);
  if (me == 0) {
    for (double &x : d.root) x += 1000;  // the first message's values differ
    ck.code(d.bcast(sf), STF_SUCCESS, "bcast 1");
    for (double &x : d.root) x -= 1000;
    ck.code(d.bcast(sf), STF_SUCCESS, "bcast 2");
  }
  if (me == 1) {
    ck.code(d.bcast(sf), STF_ERR_STATE, "the bcast begun again");
    ck.has_message("destroy the SF");
    ck.check(d.wrong(0, false) == 0, "%lld leaves written", d.wrong(0, false));
  }
  MPI_Barrier(trio);  // rank 0's messages have left (eager) before the SF goes
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
}

// basic, stream model C: rank 0's bcast A on device data queues its sends
// for its end; a host bcast H on another SF of the same communicator posts
// them first, and A's first send fails there. H's begin fails (its own
// sends must not leave after A's failed), and A's end reports the failure:
// it used to end with STF_SUCCESS, its messages unsent. Also where A's
// first test posts them: its end reports what the test did. A's SF then
// refuses new operations. The peers get neither operation: polled, and
// left in flight.
void deferred_send_fails(Checker &ck, MPI_Comm trio, bool in_test) {
  ck.context(std::string("basic, model C: a deferred send failing in ") + (in_test ? "its test" : "another begin"));
  int me = 0;
  MPI_Comm_rank(trio, &me);
  ck.code(stf_device_select("emu"), STF_SUCCESS, "stf_device_select emu");
  stf_sf sf_a = chain_sf(ck, "-stf_type basic -stf_stream_model C", trio, {-1, 0, 0});
  stf_sf sf_h = chain_sf(ck, "-stf_type basic", trio, {-1, 0, 0});
  Data h(me);
  std::vector<double> host_root(3 * kUnits, me), leaf(3 * kUnits, -1);
  void *root = host_root.data();
  if (me == 0) {
    ck.code(stf_device_malloc(host_root.size() * sizeof(double), &root), STF_SUCCESS, "stf_device_malloc");
    ck.code(stf_device_memcpy(root, host_root.data(), host_root.size() * sizeof(double)), STF_SUCCESS, "memcpy");
  }
  stf_request a = nullptr, hreq = nullptr;
  auto begin_h = [&] { return stf_bcast_begin(sf_h, h.unit, h.root.data(), h.leaf.data(), MPI_REPLACE, &hreq); };
  ck.code(stf_bcast_begin(sf_a, MPI_DOUBLE, root, leaf.data(), MPI_REPLACE, &a), STF_SUCCESS, "bcast_begin A");
  bool in_flight = false;
  if (me == 0) {
    int done = 0;
    if (in_test)
      ck.code(isends_failing(0, [&] { return stf_test(sf_a, &a, &done); }), STF_ERR_MPI,
              "stf_test A, its first send failing");
    else
      ck.code(isends_failing(0, begin_h), STF_ERR_MPI, "bcast_begin H, A's first send failing in it");
    ck.code(stf_bcast_end(sf_a, &a), STF_ERR_MPI, "bcast_end A");
    ck.has_message("deferred sends");
    // The peers' receives for A would take this rank's next messages of A's SF.
    ck.code(stf_bcast_begin(sf_a, MPI_DOUBLE, root, leaf.data(), MPI_REPLACE, &a), STF_ERR_STATE, "A begun again");
    ck.has_message("destroy the SF");
    stf_device_free(root);
  } else {
    if (!in_test) ck.code(begin_h(), STF_SUCCESS, "bcast_begin H");
    int done_a = 0, done_h = 0, rc = STF_SUCCESS;
    for (const double t0 = MPI_Wtime(); rc == STF_SUCCESS && !done_a && !done_h && MPI_Wtime() - t0 < 2;) {
      rc = stf_test(sf_a, &a, &done_a);
      if (rc == STF_SUCCESS && !in_test) rc = stf_test(sf_h, &hreq, &done_h);
      usleep(1000);
    }
    ck.check(rc == STF_SUCCESS && !done_a && !done_h, "a message came (rc %d, A %d, H %d)", rc, done_a, done_h);
    in_flight = true;
  }
  if (!in_flight) {
    ck.code(stf_destroy(&sf_h), STF_SUCCESS, "stf_destroy H");
    ck.code(stf_destroy(&sf_a), STF_SUCCESS, "stf_destroy A");
  }
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  Checker ck("test_failed_send", argc, argv, 1);
  MPI_Comm trio;
  MPI_Comm_split(MPI_COMM_WORLD, me < 3 ? 0 : MPI_UNDEFINED, me, &trio);
  int size = 0;
  if (trio != MPI_COMM_NULL) MPI_Comm_size(trio, &size);
  if (size == 3) {
    std::vector<std::string> routes = {"-stf_type basic", "-stf_type putsignal",
                                       "-stf_type putsignal -stf_ranks_per_node 1 -stf_putsignal_net p2p"};
#ifndef MPICH_VERSION  // MPICH's RMA between "nodes" stalls (transport.cpp)
    routes.push_back("-stf_type putsignal -stf_ranks_per_node 1 -stf_putsignal_net rma");
#endif
    for (const std::string &o : routes) send_fails_after_one_left(ck, o, trio);
    for (const std::string &o : {routes[0], routes[1], routes[2]}) {  // sent from the begin
      first_send_fails(ck, o, trio);
      retried_on_another_slot(ck, o, trio);
      received_before_failing(ck, o, trio);
    }
    end_fails_before_message(ck, trio);
    for (bool in_test : {false, true}) deferred_send_fails(ck, trio, in_test);  // last: they select the emulated device
  }
  if (trio != MPI_COMM_NULL) MPI_Comm_free(&trio);
  const int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
