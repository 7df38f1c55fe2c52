// Set-up is all or nothing on every rank (-stf_validate, the default):
// - options that must be alike everywhere, given differently on one rank,
//   fail set-up on every rank with STF_ERR_OPTION naming the option (each
//   used to hang: another transport's collectives, another discovery);
// - options that may differ (another transport's, index analysis), or an
//   option given as its default on one rank only, do not;
// - a strategy whose set-up fails leaves the SF not set up: set-up and
//   operations fail again instead of running on the plain transport;
// and after each failure the SF, given alike options, works.
#include <cstdio>
#include <cstring>
#include <string>

#include "check.h"
#include "ring_case.h"

using namespace stft;

namespace {

int me = 0, nranks = 1;

bool set_up(stf_sf sf) {
  int node = 0;
  return stf_get_node_layout(sf, &node, nullptr, nullptr, nullptr) == STF_SUCCESS;
}

struct Differing {
  const char *base;   // every rank
  const char *odd;    // then the last rank only
  const char *alike;  // then every rank: the options agree again
  const char *named;  // what the message names
};

void differing_options(Checker &ck) {
  const Differing cases[] = {
      {"", "-stf_type window", "-stf_type basic", "-stf_type"},
      {"", "-stf_type auto", "-stf_type basic", "-stf_type"},
      {"", "-stf_twosided allreduce", "-stf_twosided nbx", "-stf_twosided"},
      {"", "-stf_debug 1", "-stf_debug 0", "-stf_debug"},
      {"", "-stf_log_view 1", "-stf_log_view 0", "-stf_log_view"},
      {"", "-stf_view", "-stf_view 0", "-stf_view"},  // bare: a yes
      {"", "-stf_ranks_per_node 1", "-stf_ranks_per_node 0", "-stf_ranks_per_node"},
      {"-stf_type putsignal", "-stf_putsignal_slots 8", "-stf_putsignal_slots 4", "-stf_putsignal_slots"},
      {"-stf_type 2step -stf_ranks_per_node 1", "-stf_net_transport neighbor", "-stf_net_transport basic",
       "-stf_net_transport"},
      {"-stf_type auto -stf_ranks_per_node 1", "-stf_split_bytes 64", "-stf_split_bytes 16384", "-stf_split_bytes"},
      {"-stf_type auto", "-stf_autotune 2", "-stf_autotune 0", "-stf_autotune"},
      // The agreement runs whatever -stf_validate says (it used to be skipped
      // where it was 0: MPI_ERR_TRUNCATE there, the others waiting).
      {"", "-stf_validate 0", "-stf_validate 1", "-stf_validate"},
      {"-stf_validate 0", "-stf_validate 1", "-stf_validate 0", "-stf_validate"},
      {"-stf_validate 0", "-stf_type neighbor", "-stf_type basic", "-stf_type"},
  };
  const bool odd_one = me == nranks - 1;
  for (const Differing &c : cases) {
    ck.context(std::string("options differing on the last rank: '") + c.base + "', then '" + c.odd + "' there");
    stf_sf sf = ring_sf(ck, 5, c.base);
    if (!sf) continue;
    if (odd_one) ck.code(stf_set_sf_options(sf, c.odd), STF_SUCCESS, c.odd);
    if (nranks == 1) {  // nothing differs
      ck.code(stf_setup(sf), STF_SUCCESS, "stf_setup on one rank");
      check_ring_works(ck, sf, 5);
      ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
      continue;
    }
    if (ck.code(stf_setup(sf), STF_ERR_OPTION, "stf_setup")) {
      ck.check(std::strstr(stf_last_error_message(), c.named) != nullptr, "the message does not name %s: %s",
               c.named, stf_last_error_message());
      ck.check(!set_up(sf), "a refused set-up left the SF set up");
      int x = 0, y = 0;
      ck.code(stf_bcast(sf, MPI_INT, &x, &y, MPI_REPLACE), STF_ERR_OPTION, "stf_bcast sets up, and is refused too");
    }
    ck.code(stf_set_sf_options(sf, c.alike), STF_SUCCESS, c.alike);
    ck.code(stf_setup(sf), STF_SUCCESS, "stf_setup with alike options");
    check_ring_works(ck, sf, 5);
    ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
  }
}

// Differences that change nothing the ranks do together.
void harmless_differences(Checker &ck) {
  const struct {
    const char *base, *odd;
  } cases[] = {
      {"", "-stf_putsignal_slots 8"},                       // not the transport in use
      {"", "-stf_pack_opt 0"},                              // this rank's index analysis
      {"-stf_type putsignal", "-stf_putsignal_slots 4"},    // the default, given on one rank only
      {"-stf_type putsignal", "-stf_putsignal_timeout 60"}, // how long one rank waits
      {"-stf_type window", "-stf_window_sync fence"},       // the same
      {"-stf_type auto", "-stf_window_sync lock"},          // not a candidate of auto's
      {"-stf_type putsignal", "-stf_putsignal_unit_bytes 016"},  // the default's value, written otherwise
  };
  for (const auto &c : cases) {
    ck.context(std::string("harmless difference: '") + c.base + "', then '" + c.odd + "' on the last rank");
    stf_sf sf = ring_sf(ck, 5, c.base);
    if (!sf) continue;
    if (me == nranks - 1) ck.code(stf_set_sf_options(sf, c.odd), STF_SUCCESS, c.odd);
    ck.code(stf_setup(sf), STF_SUCCESS, "stf_setup");
    check_ring_works(ck, sf, 5);
    ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
  }
}

// A 2step SF whose step between nodes cannot be made (no NVSHMEM here) used
// to come out of its failed set-up half set up: the next stf_setup said
// STF_SUCCESS and bcasts ran on the basic transport, not as asked.
void failed_strategy(Checker &ck) {
  ck.context("a strategy whose set-up fails (-stf_net_transport nvshmem)");
  stf_sf sf = ring_sf(ck, 5, "-stf_type 2step -stf_ranks_per_node 1 -stf_net_transport nvshmem");
  if (!sf) return;
  const int first = stf_setup(sf);
  int failed = first != STF_SUCCESS;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (failed == 0) {
    // One rank has no step between nodes; with NVSHMEM it may work.
    if (me == 0) std::printf("test_setup_agreed: the failing strategy was set up (%d ranks)\n", nranks);
    check_ring_works(ck, sf, 5);
    ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
    return;
  }
  if (!ck.check(failed == nranks, "set-up failed on %d ranks of %d", failed, nranks)) return;
  ck.has_message("stf_setup");
  ck.check(!set_up(sf), "a failed set-up left the SF set up");
  ck.check(stf_setup(sf) != STF_SUCCESS, "stf_setup again succeeded on a half set-up SF");
  int x = 0, y = 0;
  ck.check(stf_bcast(sf, MPI_INT, &x, &y, MPI_REPLACE) != STF_SUCCESS, "stf_bcast ran without its strategy");
  ck.code(stf_set_sf_options(sf, "-stf_net_transport basic"), STF_SUCCESS, "-stf_net_transport basic");
  ck.code(stf_setup(sf), STF_SUCCESS, "stf_setup with a step transport that exists");
  check_ring_works(ck, sf, 5);
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  int rc = 0;
  {
    Checker ck("test_setup_agreed", argc, argv, 1);
    differing_options(ck);
    harmless_differences(ck);
    failed_strategy(ck);
    rc = ck.finish();
  }
  MPI_Finalize();
  return rc;
}
