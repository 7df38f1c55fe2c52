// test_robust's failed operations: a begin or end that fails (units that
// differ between ranks, a message routed to the wrong operation, a failed
// step of a node-aware strategy) leaves every SF usable, and no rank
// crashes, hangs or writes past a buffer.
#include <unistd.h>

#include <string>
#include <vector>

#include "check.h"
#include "ring_case.h"
#include "robust_parts.h"

using namespace stft;

namespace {

int world_size() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

}  // namespace

// Rank 0 moves MPI_INT, the others MPI_DOUBLE (units must agree: -stf_debug
// 1 checks it, below). Without the check no rank may crash, hang or write
// past a buffer, and every SF stays usable. Who notices depends on the
// transport: basic and collective fail on rank 0, which receives a longer
// message than it posted for (MPI_ERR_TRUNCATE), and basic also on the rank
// receiving rank 0's shorter message (STF_ERR_ARG); window fails on every
// origin whose message differs in size from the target's slice (rank 0 in
// both directions of the ring) and moves only what fits; putsignal's
// regions hold either message, and the size tag of its signal fails the
// receiver's end (rank 0 receives the longer message in the bcast and the
// shorter one in the reduce). neighbor fails on rank 0 where MPI reports the
// truncation (Open MPI 4.1, on MPI_COMM_WORLD's handler: the transport has
// it return errors while it waits) or, where MPI reports none (MPICH
// 4.0.2), by the size word behind each message, which also fails the
// receiver of the shorter message (a neighbourhood collective has no
// per-message status).
void failed_operation(Checker &ck) {
  const int me = ck.rank(), nranks = world_size();
  if (nranks < 2) return;
  const stf_int n = 4;
  const int unchecked = -1;
  // MPI's truncation error (MPICH) or basic's size check, which sees the
  // truncated size where MPI reports none (Open MPI 4.1's MPI_Testall).
  const int truncated = -2;
  const struct {
    const char *options;
    int rank0_code;    // what rank 0's bcast and reduce return
    int shorter_code;  // what the receiver of rank 0's shorter message returns
  } cases[] = {{"-stf_pack_opt 1", truncated, STF_ERR_ARG},
               {"-stf_pack_opt 0", truncated, STF_ERR_ARG},
               {"-stf_type collective", truncated, STF_ERR_ARG},  // a ring: no collective pattern, so basic
               {"-stf_type neighbor", truncated, STF_ERR_ARG},
               {"-stf_type window -stf_window_sync fence", STF_ERR_ARG, unchecked},
               {"-stf_type window -stf_window_sync lock", STF_ERR_ARG, unchecked},
               {"-stf_type window -stf_window_sync pscw", STF_ERR_ARG, unchecked},
               {"-stf_type putsignal", STF_ERR_ARG, STF_ERR_ARG},
               // Every peer through RMA, then by point-to-point (size checked from the status).
               {"-stf_type putsignal -stf_ranks_per_node 1", STF_ERR_ARG, STF_ERR_ARG},
               {"-stf_type putsignal -stf_ranks_per_node 1 -stf_putsignal_net p2p", STF_ERR_ARG, STF_ERR_ARG}};
  for (const auto &c : cases) {
    ck.context(std::string("bcast with mismatched units, ") + c.options);
    stf_sf sf = ring_sf(ck, n, c.options);
    // Each array is this rank's n units with a guard of 8 bytes before and
    // after: a write past the units shows in the guards.
    const MPI_Datatype unit = me == 0 ? MPI_INT : MPI_DOUBLE;
    const std::size_t bytes = n * (me == 0 ? sizeof(int) : sizeof(double));
    std::vector<unsigned char> roots(bytes + 16, 0xab), leaves(bytes + 16, 0xab);
    const auto guards_intact = [&](const std::vector<unsigned char> &a) {
      for (std::size_t i = 0; i < 8; i++)
        if (a[i] != 0xab || a[bytes + 8 + i] != 0xab) return false;
      return true;
    };
    const auto rank0_expects = [&](int rc) {
      return c.rank0_code == truncated && (rc == STF_ERR_MPI || rc == STF_ERR_ARG) ? rc : c.rank0_code;
    };
    const int rc = stf_bcast(sf, unit, roots.data() + 8, leaves.data() + 8, MPI_REPLACE);
    if (me == 0 && ck.code(rc, rank0_expects(rc), "bcast with units of another size than its peers'") && rc)
      ck.has_message("bcast");
    // In the bcast rank nranks - 1 receives rank 0's message, in the reduce rank 1.
    if (me == nranks - 1 && c.shorter_code != unchecked)
      ck.code(rc, c.shorter_code, "bcast receiving a shorter message than its units need");
    ck.check(guards_intact(leaves), "the bcast wrote outside the leaf array");
    check_ring_works(ck, sf, n);
    // The same with begin and end, the failure in the end.
    stf_request req = nullptr;
    ck.code(stf_reduce_begin(sf, unit, leaves.data() + 8, roots.data() + 8, MPI_SUM, &req), STF_SUCCESS,
            "reduce_begin");
    const int rc_end = stf_reduce_end(sf, &req);
    if (me == 0) ck.code(rc_end, rank0_expects(rc_end), "reduce_end with units of another size than its peers'");
    if (me == 1 && c.shorter_code != unchecked)
      ck.code(rc_end, c.shorter_code, "reduce_end receiving a shorter message than its units need");
    ck.check(req == nullptr, "the request is still set after its end");
    ck.check(guards_intact(roots), "the reduce wrote outside the root array");
    check_ring_works(ck, sf, n);
    // And through stf_test, which completes the request when it is done.
    ck.code(stf_bcast_begin(sf, unit, roots.data() + 8, leaves.data() + 8, MPI_REPLACE, &req), STF_SUCCESS,
            "bcast_begin");
    int done = 0, rc_test = STF_SUCCESS;
    while (rc_test == STF_SUCCESS && !done) rc_test = stf_test(sf, &req, &done);
    if (req) rc_test = stf_bcast_end(sf, &req);  // a failed test left it in flight
    if (me == 0) ck.code(rc_test, rank0_expects(rc_test), "stf_test with units of another size than its peers'");
    if (me == nranks - 1 && c.shorter_code != unchecked)
      ck.code(rc_test, c.shorter_code, "stf_test receiving a shorter message than its units need");
    ck.check(guards_intact(leaves), "the tested bcast wrote outside the leaf array");
    check_ring_works(ck, sf, n);
    ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
    // neighbor under Open MPI: MPI_COMM_WORLD's handler is this program's again.
    MPI_Errhandler world = MPI_ERRHANDLER_NULL;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &world);
    ck.check(world == MPI_ERRORS_ARE_FATAL, "MPI_COMM_WORLD's error handler was changed");
    MPI_Errhandler_free(&world);
  }
}

// putsignal sizes its regions for units of 16 bytes: 8-byte units fit,
// 32-byte ones do not. In a bcast from rank 0's roots to rank 1's leaves
// with 8-byte units on rank 0 and 32-byte ones on rank 1, rank 0 puts the
// message in its region while rank 1 waits for it from MPI; the other way
// round, rank 0 sends it by MPI (and marks the region) while rank 1 waits
// in the region. Either way rank 1 must fail, not wait for ever, the
// sender succeed (with 4 units its message goes eagerly; with 2^15 units,
// 1 MiB, it waits for rank 1 to receive it, which rank 1 does before its
// failed end returns), and the SF still move both sizes afterwards. Built
// with MPICH, peers on other nodes have no region: there both messages go
// by MPI, and the receiver fails on its size.
// Rank 1 comes late, so that rank 0 runs ahead: its bcasts complete
// without rank 1 (but for the 1 MiB message by MPI, which waits for its
// receipt), and it sends the large message of the third bcast, by MPI,
// before rank 1 has looked at the first's region. Rank 1's receive for the
// first bcast must not take it (large messages are tagged by their
// operation's number), or the third bcast would wait for ever. With one
// region per peer, rank 0's third bcast waits for the credit of the second,
// which waits for the first's.
void misrouted_message(Checker &ck) {
  const int me = ck.rank(), nranks = world_size();
  if (nranks < 2) return;
  MPI_Datatype wide;  // 32 bytes
  MPI_Type_contiguous(4, MPI_DOUBLE, &wide);
  MPI_Type_commit(&wide);
  for (const char *options : {"-stf_type putsignal", "-stf_type putsignal -stf_ranks_per_node 1",
                              "-stf_type putsignal -stf_putsignal_slots 1"})
    for (const stf_int n : {4, 1 << 15})
    for (bool sender_wide : {false, true}) {
      ck.context(std::string(sender_wide ? "a message sent by MPI where a region's is awaited, "
                                         : "a message in a region where MPI's is awaited, ") +
                 options + ", " + std::to_string(n) + " units");
      std::vector<stf_node> remote(me == 1 ? n : 0);
      for (stf_int i = 0; i < static_cast<stf_int>(remote.size()); i++) remote[i] = {0, i};
      stf_sf sf = nullptr;
      if (!ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "stf_create")) continue;
      ck.code(stf_set_sf_options(sf, options), STF_SUCCESS, options);
      ck.code(stf_set_graph(sf, me == 0 ? n : 0, static_cast<stf_int>(remote.size()), nullptr, STF_COPY_VALUES,
                            remote.data(), STF_COPY_VALUES),
              STF_SUCCESS, "stf_set_graph");
      const std::size_t bytes = n * 32;
      std::vector<unsigned char> roots(bytes + 16, 0xab), leaves(bytes + 16, 0xab);
      const MPI_Datatype unit = (me == 0) == sender_wide ? wide : MPI_DOUBLE;
      ck.code(stf_setup(sf), STF_SUCCESS, "stf_setup");  // collective: before rank 1 is late
      MPI_Barrier(MPI_COMM_WORLD);
      if (me == 1) usleep(100000);
      const int rc = stf_bcast(sf, unit, roots.data() + 8, leaves.data() + 8, MPI_REPLACE);
      if (me == 1 && ck.code(rc, STF_ERR_ARG, "bcast with the units of another size than the sender's") && rc)
        ck.has_message("another size");
      if (me == 0) ck.code(rc, STF_SUCCESS, "bcast, the sender");
      for (std::size_t i = 0; i < 8; i++)
        ck.check(leaves[i] == 0xab && leaves[bytes + 8 + i] == 0xab, "the bcast wrote outside the leaf array");
      for (MPI_Datatype u : {MPI_DOUBLE, wide}) {  // in regions, then by MPI
        std::vector<double> r(4 * n), l(4 * n, -1);
        for (stf_int i = 0; i < 4 * n; i++) r[i] = i + 0.5;
        ck.code(stf_bcast(sf, u, r.data(), l.data(), MPI_REPLACE), STF_SUCCESS, "a bcast afterwards");
        const stf_int values = u == wide ? 4 * n : n;
        int wrong = 0;
        for (stf_int i = 0; me == 1 && i < values; i++) wrong += l[i] != i + 0.5;
        ck.check(wrong == 0, "a bcast afterwards: %d wrong values", wrong);
      }
      ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
    }
  MPI_Type_free(&wide);
}

// A node-aware strategy whose step fails midway (rank 0's units are of
// another size): every rank runs the operation's remaining steps (they
// hung, waiting for the failed rank's part), every rank that receives rank
// 0's data, directly or forwarded by a step, fails (rank nranks - 1's
// leaves read rank 0's roots; rank 0's leaves reduce into rank 1's roots:
// a forwarding rank whose step failed passed garbage on as data), and the
// SF still works and is destroyed (collective over the steps' windows) on
// every rank. split too: it planned its steps per unit size on first use,
// collectively, so the ranks with the new size waited there for rank 0,
// which waited in a step (all hung).
void failed_step(Checker &ck) {
  const int me = ck.rank(), nranks = world_size();
  if (nranks < 4) return;
  const stf_int n = 4;
  for (const char *type : {"2step", "3step", "split"})
    for (const char *steps : {"-stf_node_transport putsignal -stf_net_transport window",
                              "-stf_node_transport basic -stf_net_transport basic",
                              "-stf_node_transport neighbor -stf_net_transport neighbor"}) {
      for (const bool one_byte : {false, true}) {  // rank 0's unit: 4 bytes against 8, or 1 against 2
      const std::string options = std::string("-stf_type ") + type + " -stf_ranks_per_node 2 " + steps;
      ck.context("a failed step, " + options + (one_byte ? ", MPI_INT8_T against MPI_INT16_T" : ""));
      stf_sf sf = ring_sf(ck, n, options.c_str());
      const MPI_Datatype unit = one_byte ? (me == 0 ? MPI_INT8_T : MPI_INT16_T) : (me == 0 ? MPI_INT : MPI_DOUBLE);
      for (int round = 0; round < 2; round++) {
        std::vector<double> roots(n, 1.0), leaves(n, 1.0);
        const int rc = round == 0 ? stf_bcast(sf, unit, roots.data(), leaves.data(), MPI_REPLACE)
                                  : stf_reduce(sf, unit, leaves.data(), roots.data(), MPI_SUM);
        const char *what = round == 0 ? "bcast" : "reduce";
        ck.check(rc == STF_SUCCESS || rc == STF_ERR_ARG || rc == STF_ERR_MPI, "%s with mismatched units gave %s",
                 what, stf_error_name(rc));
        if (me == (round == 0 ? nranks - 1 : 1))
          ck.check(rc != STF_SUCCESS, "%s: rank 0's data reached this rank, which returned STF_SUCCESS (%g %g)",
                   what, round == 0 ? leaves[0] : roots[0], round == 0 ? leaves[n - 1] : roots[n - 1]);
        check_ring_works(ck, sf, n);
      }
      ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
      }
    }
}
