// What the putsignal transport does beyond the oracle suite (which CTest
// also runs under it): more operations in flight than it has regions, ended
// in reverse and in a rank-dependent order; messages too large for their
// region (MPI point-to-point) mixed with ones that fit; the view's per-rank
// memory; and a rank that stops calling in: with -stf_putsignal_timeout its
// peer gets STF_ERR_TIMEOUT instead of waiting for ever (where the pair
// exchanges through regions), and its SF then refuses new operations.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "check.h"

using namespace stft;

namespace {

// Leaf 0 reads root 0 of the next rank, leaf 1 root 1 of the previous one.
stf_sf ring(Checker &ck, const char *options, int me, int size) {
  stf_sf sf = nullptr;
  ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "stf_create");
  ck.code(stf_set_sf_options(sf, options), STF_SUCCESS, options);
  stf_node remote[2] = {{(me + 1) % size, 0}, {(me + size - 1) % size, 1}};
  ck.code(stf_set_graph(sf, 2, 2, nullptr, STF_COPY_VALUES, remote, STF_COPY_VALUES), STF_SUCCESS, "graph");
  return sf;
}

double value(int op, int rank, int root, int component) { return 1000.0 * op + 10.0 * rank + root + 0.25 * component; }

// n bcasts in flight of units of `doubles` doubles, ended in reverse order
// on even ranks and in order on odd ones.
void many_in_flight(Checker &ck, const char *options, int n, int doubles, int me, int size) {
  ck.context(std::string(options) + ": " + std::to_string(n) + " bcasts of " + std::to_string(doubles) +
             " doubles in flight");
  stf_sf sf = ring(ck, options, me, size);
  MPI_Datatype unit;
  MPI_Type_contiguous(doubles, MPI_DOUBLE, &unit);
  MPI_Type_commit(&unit);
  const std::size_t per = 2 * static_cast<std::size_t>(doubles);
  std::vector<double> roots(n * per), leaves(n * per, -1);
  std::vector<stf_request> reqs(n, nullptr);
  for (int i = 0; i < n; i++) {
    for (int r = 0; r < 2; r++)
      for (int c = 0; c < doubles; c++) roots[i * per + r * doubles + c] = value(i, me, r, c);
    ck.code(stf_bcast_begin(sf, unit, &roots[i * per], &leaves[i * per], MPI_REPLACE, &reqs[i]), STF_SUCCESS,
            "stf_bcast_begin");
  }
  for (int j = 0; j < n; j++) {
    const int i = me % 2 ? j : n - 1 - j;
    ck.code(stf_bcast_end(sf, &reqs[i]), STF_SUCCESS, "stf_bcast_end");
  }
  long long wrong = 0;
  for (int i = 0; i < n; i++)
    for (int c = 0; c < doubles; c++)
      wrong += leaves[i * per + c] != value(i, (me + 1) % size, 0, c) ||
               leaves[i * per + doubles + c] != value(i, (me + size - 1) % size, 1, c);
  ck.check(wrong == 0, "%lld values wrong", wrong);
  MPI_Type_free(&unit);
  stf_destroy(&sf);
}

// Every rank's leaf q reads root 0 of rank q: n bcasts and n reduces in
// flight at once, ended in an order that differs between ranks, `rounds`
// times (regions are reused, messages spill, staged messages wait for room).
void all_to_all_stress(Checker &ck, const char *options, int n, int rounds, int me, int size) {
  ck.context(std::string(options) + ": all-to-all, " + std::to_string(n) + " bcasts and reduces in flight");
  stf_sf sf = nullptr;
  ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "stf_create");
  ck.code(stf_set_sf_options(sf, options), STF_SUCCESS, options);
  std::vector<stf_node> remote;
  for (int q = 0; q < size; q++) remote.push_back({q, 0});
  ck.code(stf_set_graph(sf, 1, size, nullptr, STF_COPY_VALUES, remote.data(), STF_COPY_VALUES), STF_SUCCESS, "graph");
  long long wrong = 0;
  for (int round = 0; round < rounds; round++) {
    std::vector<double> roots(n), leaves(static_cast<std::size_t>(n) * size, -1), sums(n, 0),
        contributions(static_cast<std::size_t>(n) * size);
    std::vector<stf_request> b(n, nullptr), r(n, nullptr);
    for (int i = 0; i < n; i++) {
      roots[i] = 100.0 * round + 10.0 * i + me;
      std::fill_n(&contributions[i * size], size, roots[i]);
      ck.code(stf_bcast_begin(sf, MPI_DOUBLE, &roots[i], &leaves[i * size], MPI_REPLACE, &b[i]), STF_SUCCESS,
              "bcast_begin");
      ck.code(stf_reduce_begin(sf, MPI_DOUBLE, &contributions[i * size], &sums[i], MPI_SUM, &r[i]), STF_SUCCESS, "reduce_begin");
    }
    for (int j = 0; j < n; j++) {  // rotated by rank, reversed on odd ranks
      const int i = (me % 2 ? n - 1 - j : j + me + round) % n;
      ck.code(stf_reduce_end(sf, &r[i]), STF_SUCCESS, "reduce_end");
      ck.code(stf_bcast_end(sf, &b[i]), STF_SUCCESS, "bcast_end");
    }
    // Leaf q holds root i of rank q; root i sums every rank's contribution.
    for (int i = 0; i < n; i++) {
      double want = 0;
      for (int q = 0; q < size; q++) {
        wrong += leaves[i * size + q] != 100.0 * round + 10.0 * i + q;
        want += 100.0 * round + 10.0 * i + q;
      }
      wrong += sums[i] != want;
    }
  }
  ck.check(wrong == 0, "%lld values wrong", wrong);
  stf_destroy(&sf);
}

// What stf_view prints for sf (collective).
std::string view_text(Checker &ck, stf_sf sf) {
  std::FILE *f = std::tmpfile();
  ck.code(stf_view(sf, f), STF_SUCCESS, "stf_view");
  std::string text;
  std::rewind(f);
  char buf[512];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
  std::fclose(f);
  return text;
}

// Whether sf's messages to other nodes go by point-to-point, as its view
// says (collective; the answer is rank 0's, broadcast).
bool p2p_between_nodes(Checker &ck, stf_sf sf, MPI_Comm comm) {
  int p2p = view_text(ck, sf).find("other nodes' through MPI point-to-point") != std::string::npos;
  MPI_Bcast(&p2p, 1, MPI_INT, 0, comm);
  return p2p;
}

// The view says what each rank holds.
void view(Checker &ck, int me, int size) {
  ck.context("view");
  stf_sf sf = ring(ck, "-stf_type putsignal", me, size);
  ck.code(stf_setup(sf), STF_SUCCESS, "stf_setup");
  const std::string text = view_text(ck, sf);
  if (me == 0)
    ck.check(text.find("transport putsignal (one-sided put with signal") != std::string::npos &&
                 text.find("peer link(s) in the node's heap") != std::string::npos &&
                 text.find("fetch-and-op: basic fallback") != std::string::npos,
             "view:\n%s", text.c_str());
  stf_destroy(&sf);
}

// -stf_putsignal_net auto: the route to other nodes that the test's
// environment expects (STF_TEST_NET: rma where MPI's RMA is one-sided, p2p
// where Open MPI emulates it with osc/pt2pt or where built with MPICH),
// with its reason in the view; a second SF takes the first one's answer
// (Open MPI: MPICH builds do not probe).
void net_choice(Checker &ck, int me, int size) {
  const char *want = std::getenv("STF_TEST_NET");
  if (!want || !*want) return;
  ck.context("net choice");
#if defined(MPICH_VERSION)
  const char *probed = "";  // auto means p2p there without a probe
#else
  const char *probed = " (probed before)";
#endif
  for (const char *again : {"", probed}) {
    stf_sf sf = ring(ck, "-stf_type putsignal -stf_putsignal_net auto", me, size);
    ck.code(stf_setup(sf), STF_SUCCESS, "stf_setup");
    int nnodes = 1;
    ck.code(stf_get_node_layout(sf, nullptr, &nnodes, nullptr, nullptr), STF_SUCCESS, "stf_get_node_layout");
    if (nnodes == 1) {  // nothing to choose
      stf_destroy(&sf);
      return;
    }
    const std::string text = view_text(ck, sf);
    const std::string route = std::strcmp(want, "p2p") == 0 ? "other nodes' through MPI point-to-point (auto"
                                                             : "other nodes' through an MPI RMA window (auto";
    if (me == 0)
      ck.check(text.find(route) != std::string::npos && text.find(again) != std::string::npos,
               "wanted \"%s\"%s in the view:\n%s", route.c_str(), again, text.c_str());
    stf_destroy(&sf);
  }
}

// Ranks 0 and 1 on a communicator of their own (*pair; the other ranks
// get NULL): one leaf each, reading the other's root.
stf_sf pair_sf(Checker &ck, const char *options, int me, MPI_Comm *pair) {
  MPI_Comm_split(MPI_COMM_WORLD, me < 2 ? 0 : MPI_UNDEFINED, me, pair);
  if (*pair == MPI_COMM_NULL) return nullptr;
  stf_sf sf = nullptr;
  ck.code(stf_create(*pair, &sf), STF_SUCCESS, "stf_create");
  ck.code(stf_set_sf_options(sf, options), STF_SUCCESS, options);
  stf_node remote = {1 - me, 0};
  ck.code(stf_set_graph(sf, 1, 1, nullptr, STF_COPY_VALUES, &remote, STF_COPY_VALUES), STF_SUCCESS, "graph");
  return sf;
}

// Ranks 0 and 1 of MPI_COMM_WORLD (others get nullptr): rank 0 owns n roots,
// rank 1 has n leaves on them, in order; *pair is their communicator.
stf_sf one_way_sf(Checker &ck, const char *options, stf_int n, int me, MPI_Comm *pair) {
  MPI_Comm_split(MPI_COMM_WORLD, me < 2 ? 0 : MPI_UNDEFINED, me, pair);
  if (*pair == MPI_COMM_NULL) return nullptr;
  std::vector<stf_node> remote(me == 1 ? n : 0);
  for (stf_int i = 0; i < static_cast<stf_int>(remote.size()); i++) remote[i] = {0, i};
  stf_sf sf = nullptr;
  ck.code(stf_create(*pair, &sf), STF_SUCCESS, "stf_create");
  ck.code(stf_set_sf_options(sf, options), STF_SUCCESS, options);
  ck.code(stf_set_graph(sf, me == 0 ? n : 0, static_cast<stf_int>(remote.size()), nullptr, STF_COPY_VALUES,
                        remote.data(), STF_COPY_VALUES),
          STF_SUCCESS, "graph");
  return sf;
}

// An SF one of whose operations timed out refuses new ones, with a clear
// error, instead of pairing them with its peers' wrong operations.
void refuses_after_timeout(Checker &ck, stf_sf sf) {
  double root = 7, leaf = -1;
  ck.code(stf_bcast(sf, MPI_DOUBLE, &root, &leaf, MPI_REPLACE), STF_ERR_STATE, "bcast after a timeout");
  ck.has_message("destroy the SF");
  ck.code(stf_reduce(sf, MPI_DOUBLE, &leaf, &root, MPI_SUM), STF_ERR_STATE, "reduce after a timeout");
  ck.check(leaf == -1 && root == 7, "a refused operation wrote %g, %g", leaf, root);
}

// Rank 1 begins two operations (with one region per peer, its second
// message must wait until rank 0 has taken the first) and then does not
// call in for 3 s; rank 0, with a timeout of 1 s, ends the second first.
// Where messages between nodes go by point-to-point (net_choice.h)
// nothing waits for the sleeping rank there, and both succeed.
void stalled_peer(Checker &ck, int me) {
  ck.context("a peer that stops calling in");
  MPI_Comm pair;
  stf_sf sf = pair_sf(ck, "-stf_type putsignal -stf_putsignal_slots 1 -stf_putsignal_timeout 1", me, &pair);
  if (!sf) return;
  ck.code(stf_setup(sf), STF_SUCCESS, "stf_setup");
  int nnodes = 1;
  ck.code(stf_get_node_layout(sf, nullptr, &nnodes, nullptr, nullptr), STF_SUCCESS, "stf_get_node_layout");
  const int second = nnodes > 1 && p2p_between_nodes(ck, sf, pair) ? STF_SUCCESS : STF_ERR_TIMEOUT;
  double root[2] = {1.0 + me, 2.0 + me}, leaf[2] = {0, 0};
  stf_request a = nullptr, b = nullptr;
  ck.code(stf_bcast_begin(sf, MPI_DOUBLE, &root[0], &leaf[0], MPI_REPLACE, &a), STF_SUCCESS, "begin 1");
  ck.code(stf_bcast_begin(sf, MPI_DOUBLE, &root[1], &leaf[1], MPI_REPLACE, &b), STF_SUCCESS, "begin 2");
  if (me == 0) {
    const double t0 = MPI_Wtime();
    ck.code(stf_bcast_end(sf, &b), second, "end 2 while the peer sleeps");
    if (second == STF_SUCCESS)
      ck.check(leaf[1] == 3.0, "op 2 gave %g", leaf[1]);
    else
      ck.has_message("timeout");
    ck.check(MPI_Wtime() - t0 < 2.5, "end 2 returned after %.1f s", MPI_Wtime() - t0);
    ck.code(stf_bcast_end(sf, &a), STF_SUCCESS, "end 1");
    ck.check(leaf[0] == 2.0, "op 1 gave %g", leaf[0]);
  } else {
    sleep(3);
    ck.code(stf_bcast_end(sf, &a), STF_SUCCESS, "end 1 after sleeping");
    ck.check(leaf[0] == 1.0, "op 1 gave %g", leaf[0]);
    // Rank 0 left its second message unwritten when it timed out (if it did).
    ck.code(stf_bcast_end(sf, &b), second, "end 2 after the peer's end 2");
    if (second == STF_SUCCESS) ck.check(leaf[1] == 2.0, "op 2 gave %g", leaf[1]);
  }
  if (second == STF_ERR_TIMEOUT) refuses_after_timeout(ck, sf);
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy after a timeout");
  MPI_Comm_free(&pair);
}

// A message larger than its region (24-byte units), from a rank that
// begins 3 s late: rank 0's end gives up after its timeout of 1 s,
// cancelling its receive (a persistent request), and leaves its leaves
// untouched; rank 1's bcast, once begun, completes; both destroy the SF.
void late_large_message(Checker &ck, int me) {
  ck.context("a large message from a rank that begins late");
  MPI_Comm pair;
  stf_sf sf = pair_sf(ck, "-stf_type putsignal -stf_putsignal_timeout 1", me, &pair);
  if (!sf) return;
  MPI_Datatype unit;
  MPI_Type_contiguous(3, MPI_DOUBLE, &unit);
  MPI_Type_commit(&unit);
  std::vector<double> root = {1.0 + me, 2.0 + me, 3.0 + me}, leaf(3, -1.0);
  ck.code(stf_setup(sf), STF_SUCCESS, "stf_setup");
  if (me == 0) {
    const double t0 = MPI_Wtime();
    ck.code(stf_bcast(sf, unit, root.data(), leaf.data(), MPI_REPLACE), STF_ERR_TIMEOUT, "bcast, the peer late");
    ck.has_message("larger than its region");
    ck.check(MPI_Wtime() - t0 < 2.5, "the timeout came after %.1f s", MPI_Wtime() - t0);
  } else {
    sleep(3);
    ck.code(stf_bcast(sf, unit, root.data(), leaf.data(), MPI_REPLACE), STF_SUCCESS, "bcast, begun late");
    ck.check(leaf[0] == 1.0 && leaf[2] == 3.0, "the bcast gave %g .. %g", leaf[0], leaf[2]);
  }
  MPI_Barrier(pair);  // rank 1's message has come by now
  if (me == 0) {
    ck.check(leaf[0] == -1.0 && leaf[2] == -1.0, "the abandoned bcast wrote %g .. %g", leaf[0], leaf[2]);
    refuses_after_timeout(ck, sf);
  }
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy after a timeout");
  MPI_Type_free(&unit);
  MPI_Comm_free(&pair);
}

// Large messages (24-byte units: by MPI, 384 KiB, not sent eagerly) from
// rank 0 to rank 1, two regions, each message's region marked. Rank 1
// completes bcast 1 by stf_test, which takes mark 1 (and not mark 0, as a
// waiting end would): rank 0's mark 2 waits, staged, for region 0, and
// mark 3 goes at once. Rank 0 ends 3 first, rank 1 ends 2 before it begins
// 3, and 2 needs mark 2: rank 0 must write it while it waits for rank 1 to
// receive message 3 (it waited in MPI_Waitall, and both waited for ever).
void staged_mark_while_sending(Checker &ck, int me) {
  ck.context("a staged mark while the sender waits for its large message's receipt");
  MPI_Comm pair;
  const stf_int n = 1 << 14;
  stf_sf sf = one_way_sf(ck, "-stf_type putsignal -stf_putsignal_slots 2", n, me, &pair);
  if (pair == MPI_COMM_NULL) return;
  MPI_Datatype unit;
  MPI_Type_contiguous(3, MPI_DOUBLE, &unit);
  MPI_Type_commit(&unit);
  std::vector<std::vector<double>> roots(4), leaves(4);
  stf_request reqs[4] = {nullptr, nullptr, nullptr, nullptr};
  const auto begin = [&](int i) {
    roots[i].assign(3 * n, 0);
    leaves[i].assign(3 * n, -1);
    for (stf_int j = 0; me == 0 && j < 3 * n; j++) roots[i][j] = value(i, 0, 0, 0) + j;
    ck.code(stf_bcast_begin(sf, unit, roots[i].data(), leaves[i].data(), MPI_REPLACE, &reqs[i]), STF_SUCCESS,
            "stf_bcast_begin");
  };
  const auto end = [&](int i) { ck.code(stf_bcast_end(sf, &reqs[i]), STF_SUCCESS, "stf_bcast_end"); };
  for (int i : {0, 1, 2}) begin(i);
  if (me == 1) {
    int done = 0;
    while (!done && ck.code(stf_test(sf, &reqs[1], &done), STF_SUCCESS, "stf_test")) {
    }
  }
  MPI_Barrier(pair);
  if (me == 0) {
    begin(3);
    for (int i : {3, 0, 1, 2}) end(i);
  } else {
    usleep(200000);  // rank 0 ends 3 before this rank gives region 0 back
    end(2);
    begin(3);
    end(3);
    end(0);
  }
  long long wrong = 0;
  for (int i = 0; me == 1 && i < 4; i++)
    for (stf_int j = 0; j < 3 * n; j++) wrong += leaves[i][j] != value(i, 0, 0, 0) + j;
  ck.check(wrong == 0, "%lld values wrong", wrong);
  MPI_Type_free(&unit);
  stf_destroy(&sf);
  MPI_Comm_free(&pair);
}

// A large message (24-byte units, 384 KiB: not sent eagerly) to a rank that
// begins 3 s late: the sender's end gives up after its timeout of 1 s and
// it destroys the SF at once (which waits in MPI_Win_free for the late
// rank). The late rank's bcast must still get the sender's data: the
// abandoned send's buffer outlives the SF.
void abandoned_large_send(Checker &ck, int me) {
  ck.context("a large send abandoned by a timed-out end, then its SF destroyed");
  MPI_Comm pair;
  const stf_int n = 1 << 14;
  stf_sf sf = one_way_sf(ck, "-stf_type putsignal -stf_putsignal_timeout 1", n, me, &pair);
  if (pair == MPI_COMM_NULL) return;
  ck.code(stf_setup(sf), STF_SUCCESS, "stf_setup");
  MPI_Datatype unit;
  MPI_Type_contiguous(3, MPI_DOUBLE, &unit);
  MPI_Type_commit(&unit);
  std::vector<double> root(3 * n), leaf(3 * n, -1);
  for (stf_int j = 0; j < 3 * n; j++) root[j] = 0.5 + j;
  if (me == 0) {
    ck.code(stf_bcast(sf, unit, root.data(), leaf.data(), MPI_REPLACE), STF_ERR_TIMEOUT, "bcast, the receiver late");
    ck.has_message("larger than its region");
    ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy with its large send in flight");
  } else {
    sleep(3);
    ck.code(stf_bcast(sf, unit, root.data(), leaf.data(), MPI_REPLACE), STF_SUCCESS, "bcast, begun late");
    long long wrong = 0;
    for (stf_int j = 0; j < 3 * n; j++) wrong += leaf[j] != 0.5 + j;
    ck.check(wrong == 0, "%lld values wrong", wrong);
    ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
  }
  MPI_Type_free(&unit);
  MPI_Comm_free(&pair);
}

// A begin never waits for its peer: through the RMA window, whose flush may
// complete only once the target calls MPI (MPICH 4.0.2: rank 0's begin
// took as long as rank 1 slept), rank 0's begin returns at once while rank
// 1 begins 2 s late; its end then moves the data.
void begin_never_waits(Checker &ck, int me) {
  ck.context("a begin whose peer is late, through the RMA window");
  MPI_Comm pair;
  stf_sf sf = one_way_sf(ck, "-stf_type putsignal -stf_ranks_per_node 1 -stf_putsignal_net rma", 4, me, &pair);
  if (pair == MPI_COMM_NULL) return;
  ck.code(stf_setup(sf), STF_SUCCESS, "stf_setup");
  std::vector<double> root = {1, 2, 3, 4}, leaf(4, -1);
  MPI_Barrier(pair);
  if (me == 0) {
    stf_request req = nullptr;
    const double t0 = MPI_Wtime();
    ck.code(stf_bcast_begin(sf, MPI_DOUBLE, root.data(), leaf.data(), MPI_REPLACE, &req), STF_SUCCESS, "begin");
    const double took = MPI_Wtime() - t0;
    ck.check(took < 1.0, "the begin took %.2f s, its peer 2 s late", took);
    ck.code(stf_bcast_end(sf, &req), STF_SUCCESS, "end");
  } else {
    sleep(2);
    ck.code(stf_bcast(sf, MPI_DOUBLE, root.data(), leaf.data(), MPI_REPLACE), STF_SUCCESS, "bcast, begun late");
    ck.check(leaf[0] == 1 && leaf[3] == 4, "the bcast gave %g .. %g", leaf[0], leaf[3]);
  }
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
  MPI_Comm_free(&pair);
}

// Messages larger than their region go by MPI point-to-point: where they
// are contiguous in the user's arrays they go from and into them, without
// a copy (pack and unpack counts 0), but for a reduce that combines (SUM
// unpacks), strided data, and sends with a timeout set (a timed-out end
// would leave the send reading the user's array: sent from the outbox). Leaves
// 0..n-1 read roots 0..n-1 of the next rank; units of 24 bytes (regions
// hold 16 per unit); the strided case reads every other root.
void large_contiguous(Checker &ck, int me, int size) {
  if (size < 2) return;
  const stf_int n = 4096;
  MPI_Datatype unit;
  MPI_Type_contiguous(3, MPI_DOUBLE, &unit);
  MPI_Type_commit(&unit);
  const struct {
    const char *options;
    bool strided;
    int bcast[2], reduce[2];  // pack and unpack calls of a bcast and a reduce REPLACE on each rank
  } cases[] = {{"-stf_type putsignal", false, {0, 0}, {0, 0}},
               {"-stf_type putsignal -stf_putsignal_timeout 60", false, {1, 0}, {1, 0}},
               {"-stf_type putsignal", true, {1, 0}, {0, 1}}};
  for (const auto &c : cases) {
    ck.context(std::string("large contiguous messages, ") + c.options + (c.strided ? ", strided roots" : ""));
    const stf_int nroots = c.strided ? 2 * n : n;
    std::vector<stf_node> remote(n);
    for (stf_int i = 0; i < n; i++) remote[i] = {(me + 1) % size, c.strided ? 2 * i : i};
    stf_sf sf = nullptr;
    ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "stf_create");
    ck.code(stf_set_sf_options(sf, c.options), STF_SUCCESS, "options");
    ck.code(stf_set_graph(sf, nroots, n, nullptr, STF_COPY_VALUES, remote.data(), STF_COPY_VALUES), STF_SUCCESS,
            "graph");
    std::vector<double> roots(3 * nroots), leaves(3 * n, -1);
    for (stf_int j = 0; j < 3 * nroots; j++) roots[j] = 1e6 * me + j;
    stf_stats s = stf_stats_init();
    ck.code(stf_bcast(sf, unit, roots.data(), leaves.data(), MPI_REPLACE), STF_SUCCESS, "bcast");
    const int from = (me + 1) % size;
    long long wrong = 0;
    for (stf_int i = 0; i < n; i++)
      for (int k = 0; k < 3; k++) wrong += leaves[3 * i + k] != 1e6 * from + 3 * (c.strided ? 2 * i : i) + k;
    ck.check(wrong == 0, "bcast: %lld values wrong", wrong);
    ck.code(stf_get_stats(sf, &s), STF_SUCCESS, "stf_get_stats");
    ck.check(s.pack_calls == c.bcast[0] && s.unpack_calls == c.bcast[1],
             "bcast: pack_calls %lld, unpack_calls %lld, not %d, %d", s.pack_calls, s.unpack_calls, c.bcast[0],
             c.bcast[1]);
    ck.code(stf_reset_stats(sf), STF_SUCCESS, "stf_reset_stats");
    for (stf_int j = 0; j < 3 * n; j++) leaves[j] = -j;
    ck.code(stf_reduce(sf, unit, leaves.data(), roots.data(), MPI_REPLACE), STF_SUCCESS, "reduce REPLACE");
    wrong = 0;
    for (stf_int i = 0; i < n; i++)
      for (int k = 0; k < 3; k++) wrong += roots[3 * (c.strided ? 2 * i : i) + k] != -(3 * i + k);
    ck.check(wrong == 0, "reduce REPLACE: %lld values wrong", wrong);
    ck.code(stf_get_stats(sf, &s), STF_SUCCESS, "stf_get_stats");
    ck.check(s.pack_calls == c.reduce[0] && s.unpack_calls == c.reduce[1],
             "reduce REPLACE: pack_calls %lld, unpack_calls %lld, not %d, %d", s.pack_calls, s.unpack_calls,
             c.reduce[0], c.reduce[1]);
    ck.code(stf_reset_stats(sf), STF_SUCCESS, "stf_reset_stats");
    ck.code(stf_reduce(sf, unit, leaves.data(), roots.data(), MPI_SUM), STF_SUCCESS, "reduce SUM");
    ck.code(stf_get_stats(sf, &s), STF_SUCCESS, "stf_get_stats");
    ck.check(s.pack_calls == c.reduce[0] && s.unpack_calls == 1, "reduce SUM: pack_calls %lld, unpack_calls %lld",
             s.pack_calls, s.unpack_calls);
    wrong = 0;
    for (stf_int i = 0; i < n; i++)
      for (int k = 0; k < 3; k++) wrong += roots[3 * (c.strided ? 2 * i : i) + k] != -2 * (3 * i + k);
    ck.check(wrong == 0, "reduce SUM: %lld values wrong", wrong);
    stf_destroy(&sf);
  }
  MPI_Type_free(&unit);
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Checker ck("test_putsignal", argc, argv, 1);
  for (const char *o : {"-stf_type putsignal -stf_putsignal_slots 1", "-stf_type putsignal -stf_putsignal_slots 2",
                        "-stf_type putsignal"}) {
    many_in_flight(ck, o, 9, 1, me, size);
    many_in_flight(ck, o, 5, 3, me, size);  // 24-byte units: larger than their 16-byte-per-unit regions
  }
  many_in_flight(ck, "-stf_type putsignal -stf_putsignal_unit_bytes 24 -stf_putsignal_slots 1", 7, 3, me, size);
  for (const char *o : {"-stf_type putsignal -stf_putsignal_slots 1", "-stf_type putsignal -stf_putsignal_slots 2"})
    all_to_all_stress(ck, o, 7, 20, me, size);
  view(ck, me, size);
  net_choice(ck, me, size);
  large_contiguous(ck, me, size);
  if (size >= 2) begin_never_waits(ck, me);
  if (size >= 2) stalled_peer(ck, me);
  if (size >= 2) late_large_message(ck, me);
  if (size >= 2) staged_mark_while_sending(ck, me);
  if (size >= 2) abandoned_large_send(ck, me);
  int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
