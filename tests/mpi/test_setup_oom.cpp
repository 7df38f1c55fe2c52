// Set-up when one rank runs out of memory, at any of its allocations. This
// program replaces operator new (the library's C++ allocations come here)
// and makes the N-th allocation of one rank's stf_setup fail, for N = 0, 1,
// ... until set-up makes fewer than N, with each rank in turn as the one
// short of memory; once (a transient shortage) and from the N-th on (memory
// stays short until stf_setup returns). With -stf_validate (the default)
// every rank must come back, all with the same outcome: STF_ERR_MEMORY
// everywhere (the rank short of memory says so, the others name it), or
// success everywhere. None may hang (the watchdog ends a hang), crash or
// leave the SF half set up: with memory again the SF sets up and its bcast
// gives the oracle's values.
//
// Also where the tags of a communicator run out, for 2step and 3step (each
// SF on a duplicate of its own, MPI_TAG_UB reported small).
// Covered: every transport and strategy, -stf_type auto's choice, NBX and
// allreduce discovery, -stf_autotune's trial up to its first operation, and
// stf_create of the first SF of a communicator (the communicator's
// duplicate); a strategy's steps on windows (collective to destroy) and
// with -stf_log_view in the environment (collective summaries). The
// trial's operations are not covered (no operation is: a rank whose begin
// runs out of memory can leave the others waiting; the header says so):
// the shortage ends at the trial's first MPI_Barrier, which this program
// intercepts (the MPI profiling interface).
// Then a bcast's begin short of memory on one rank (once), which that rank
// begins again, the others beginning theirs after the failure
// (begin_short_of_memory).
// --hosts-as-nodes (the cluster suite) runs the set-ups that take their
// nodes from the hosts: putsignal, auto's choice and the node-aware
// strategies.
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "check.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define STF_OWN_NEW 0  // the sanitizer's runtime replaces operator new itself
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define STF_OWN_NEW 0
#endif
#endif
#ifndef STF_OWN_NEW
#define STF_OWN_NEW 1
#endif

namespace {

// The shortage: allocations left before the first failing one (-1: none
// fails), and whether the ones after it fail too.
long allocations_left = -1;
bool stays_short = false;
bool failed_one = false;

}  // namespace

// -stf_autotune's trial times its operations after an MPI_Barrier, the only
// one in set-up: from there on memory does not run short.
extern "C" int MPI_Barrier(MPI_Comm comm) {
  allocations_left = -1;
  return PMPI_Barrier(comm);
}

// Reported as MPI_TAG_UB while not 0: every duplicate the library makes
// then holds one SF's tags, so a strategy's steps go to duplicates of their
// own, made during its set-up (the tags of a communicator ran out).
int small_tag_ub = 0;
extern "C" int MPI_Comm_get_attr(MPI_Comm comm, int keyval, void *value, int *flag) {
  const int rc = PMPI_Comm_get_attr(comm, keyval, value, flag);
  if (rc == MPI_SUCCESS && keyval == MPI_TAG_UB && *flag && small_tag_ub) *static_cast<int **>(value) = &small_tag_ub;
  return rc;
}

#if STF_OWN_NEW
void *operator new(std::size_t n) {
  if (allocations_left == 0) {
    failed_one = true;
    if (!stays_short) allocations_left = -1;
    throw std::bad_alloc();
  }
  if (allocations_left > 0) allocations_left--;
  if (void *p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void *operator new[](std::size_t n) { return operator new(n); }
void operator delete(void *p) noexcept { std::free(p); }
void operator delete[](void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t) noexcept { std::free(p); }
#endif

using namespace stft;

namespace {

int me = 0, nranks = 1;
// The node of each rank: emulated nodes of 2 (-stf_ranks_per_node 2), or,
// with --hosts-as-nodes (the cluster), the hosts.
std::vector<int> node_of;

// Leaf i of every rank reads a root chosen by a generator all ranks share
// (self edges included, leaves in a permuted order).
struct Case {
  stf_int nroots = 10, nleaves = 12;
  std::vector<stf_int> ilocal;
  std::vector<stf_node> remote;
};

Case make_case(std::uint64_t seed) {
  Case c;
  std::uint64_t x = seed * 6364136223846793005ull + static_cast<std::uint64_t>(me) + 1;
  auto next = [&x](std::uint64_t m) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<stf_int>((x >> 33) % m);
  };
  for (stf_int i = 0; i < c.nleaves; i++) {
    c.ilocal.push_back(c.nleaves - 1 - i);
    c.remote.push_back({next(nranks), next(c.nroots)});
  }
  return c;
}

stf_sf make_sf(Checker &ck, const Case &c, const char *options, MPI_Comm comm = MPI_COMM_WORLD) {
  stf_sf sf = nullptr;
  ck.code(stf_create(comm, &sf), STF_SUCCESS, "stf_create");
  ck.code(stf_set_sf_options(sf, options), STF_SUCCESS, options);
  ck.code(stf_set_graph(sf, c.nroots, c.nleaves, c.ilocal.data(), STF_COPY_VALUES, c.remote.data(), STF_COPY_VALUES),
          STF_SUCCESS, "stf_set_graph");
  return sf;
}

// Root r of rank p holds 1000 p + r, which a bcast brings to its leaves.
std::vector<double> roots_of(const Case &c) {
  std::vector<double> roots(c.nroots);
  for (stf_int r = 0; r < c.nroots; r++) roots[r] = 1000.0 * me + r;
  return roots;
}

void check_leaves(Checker &ck, const Case &c, const std::vector<double> &leaves) {
  int wrong = 0;
  for (stf_int i = 0; i < c.nleaves; i++)
    wrong += leaves[c.ilocal[i]] != 1000.0 * c.remote[i].rank + c.remote[i].index;
  ck.check(wrong == 0, "%d leaves wrong after the bcast", wrong);
}

void check_bcast(Checker &ck, stf_sf sf, const Case &c) {
  std::vector<double> roots = roots_of(c), leaves(c.nleaves, -1);
  if (!ck.code(stf_bcast(sf, MPI_DOUBLE, roots.data(), leaves.data(), MPI_REPLACE), STF_SUCCESS, "stf_bcast")) return;
  check_leaves(ck, c, leaves);
}

// One rank short of memory from its n-th allocation in stf_setup. Returns
// whether any allocation failed (false: set-up makes fewer than n).
bool setup_short_of_memory(Checker &ck, const Case &c, const char *options, int victim, long n, bool persistent,
                           MPI_Comm comm = MPI_COMM_WORLD) {
  stf_sf sf = make_sf(ck, c, options, comm);
  if (!sf) return false;
  MPI_Barrier(MPI_COMM_WORLD);
  // A strategy's step SFs take their defaults from the environment: one
  // with -stf_log_view destroyed where set-up failed would start its
  // summary's reductions on the failing ranks alone, unless the strategy
  // turns the option off on every rank, whatever failed.
  const bool steps = std::strstr(options, "step") || std::strstr(options, "split");
  if (steps) setenv("STF_LOG_VIEW", "1", 1);
  failed_one = false;
  if (me == victim) {
    stays_short = persistent;
    allocations_left = n;
  }
  const int rc = stf_setup(sf);
  allocations_left = -1;
  if (steps) unsetenv("STF_LOG_VIEW");
  const std::string message = stf_last_error_message();
  int mine[2] = {failed_one ? 1 : 0, rc}, most[2] = {0, 0}, least[2] = {0, 0};
  MPI_Allreduce(mine, most, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(mine, least, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  const bool fired = most[0] != 0;
  ck.check(least[1] == most[1], "ranks came back with different codes (%d to %d)", least[1], most[1]);
  if (rc != STF_SUCCESS) {
    ck.check(rc == STF_ERR_MEMORY, "stf_setup: %s (%s), not STF_ERR_MEMORY", stf_error_name(rc), message.c_str());
    ck.check(!message.empty(), "stf_setup failed without a message");
    // The others name the rank that failed, or, where a node's ranks
    // learnt it first (the node-aware strategies, also as auto's pick or
    // in its trial), one of its node, whose message names it.
    if (me != victim) {
      const std::size_t at = message.find("rank ");
      const int named = at == std::string::npos ? -1 : std::atoi(message.c_str() + at + 5);
      const bool echoes = steps || std::strstr(options, "auto");
      const bool same_node = named >= 0 && named < nranks && node_of[named] == node_of[victim];
      ck.check(named == victim || (echoes && same_node), "the message does not name rank %d: %s", victim,
               message.c_str());
    }
  }
  if (!fired) ck.code(rc, STF_SUCCESS, "stf_setup, no allocation failed");
  ck.code(stf_setup(sf), STF_SUCCESS, "stf_setup with memory again");
  check_bcast(ck, sf, c);
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
  return fired;
}

// stf_create of the first SF of a communicator (a new one: the library makes
// its duplicate) with one rank short of memory from its n-th allocation.
// Every rank comes back. A failure of that rank while the duplicate is made
// fails every rank (the others name it); after it (the SF object), it is
// that rank's own. So the others fail only all together, and only with it.
// Then, with memory again, SFs on the communicator work on every rank: the
// ranks still agree on its duplicate and tags.
bool create_short_of_memory(Checker &ck, const Case &c, int victim, long n, bool persistent) {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  failed_one = false;
  if (me == victim) {
    stays_short = persistent;
    allocations_left = n;
  }
  stf_sf sf = nullptr;
  const int rc = stf_create(comm, &sf);
  allocations_left = -1;
  const std::string message = stf_last_error_message();
  // Whether an allocation failed, the victim's code, the largest and the
  // (negated) smallest of the others' codes.
  const bool victim_here = me == victim;
  int mine[4] = {failed_one ? 1 : 0, victim_here ? rc : 0, victim_here ? INT_MIN : rc, victim_here ? INT_MIN : -rc};
  int all[4] = {0, 0, 0, 0};
  MPI_Allreduce(mine, all, 4, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  const bool fired = all[0] != 0;
  if (nranks > 1) {
    ck.check(all[2] == -all[3], "the other ranks came back with different codes (%d to %d)", -all[3], all[2]);
    ck.check(all[2] == STF_SUCCESS || all[1] != STF_SUCCESS, "the others failed (%s) where the rank short of memory did not",
             stf_error_name(all[2]));
  }
  if (rc != STF_SUCCESS) {
    ck.check(rc == STF_ERR_MEMORY, "stf_create: %s (%s), not STF_ERR_MEMORY", stf_error_name(rc), message.c_str());
    ck.check(sf == nullptr, "a failed stf_create left its handle set");
    if (me != victim) {
      const std::size_t at = message.find("rank ");
      ck.check(at != std::string::npos && std::atoi(message.c_str() + at + 5) == victim,
               "the message does not name rank %d: %s", victim, message.c_str());
    }
  }
  if (!fired) ck.code(rc, STF_SUCCESS, "stf_create, no allocation failed");
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
  for (const char *type : {"-stf_type basic", "-stf_type neighbor"}) {
    stf_sf again = make_sf(ck, c, type, comm);
    check_bcast(ck, again, c);
    ck.code(stf_destroy(&again), STF_SUCCESS, "stf_destroy");
  }
  MPI_Comm_free(&comm);
  return fired;
}

// A bcast whose begin runs short of memory on one rank at its n-th
// allocation (once), and which that rank begins again: the second begin
// pairs with the peers' bcast, and every rank gets the oracle's values,
// then and in a next bcast. Returns whether an allocation failed.
bool begin_short_of_memory(Checker &ck, const Case &c, const char *options, int victim, long n) {
  stf_sf sf = make_sf(ck, c, options);
  if (!sf) return false;
  ck.code(stf_setup(sf), STF_SUCCESS, "stf_setup");
  MPI_Barrier(MPI_COMM_WORLD);
  failed_one = false;
  std::vector<double> roots = roots_of(c), leaves(c.nleaves, -1);
  if (me == victim) {
    stays_short = false;
    allocations_left = n;
  }
  // The others begin once the first begin has failed: its receives, then
  // cancelled, cannot have taken their messages (that race is not covered).
  stf_request req = nullptr;
  int rc = STF_SUCCESS;
  if (me == victim) rc = stf_bcast_begin(sf, MPI_DOUBLE, roots.data(), leaves.data(), MPI_REPLACE, &req);
  allocations_left = -1;
  MPI_Barrier(MPI_COMM_WORLD);
  if (me != victim) rc = stf_bcast_begin(sf, MPI_DOUBLE, roots.data(), leaves.data(), MPI_REPLACE, &req);
  if (rc != STF_SUCCESS) {
    ck.check(me == victim && rc == STF_ERR_MEMORY, "stf_bcast_begin: %s (%s)", stf_error_name(rc),
             stf_last_error_message());
    rc = stf_bcast_begin(sf, MPI_DOUBLE, roots.data(), leaves.data(), MPI_REPLACE, &req);
    ck.code(rc, STF_SUCCESS, "stf_bcast_begin again");
  }
  if (req) rc = stf_bcast_end(sf, &req);
  // A node-aware strategy's begin keeps the failure of a step's begin for
  // its end (alone on its communicator, nobody waits for it).
  if (!(rc == STF_ERR_MEMORY && nranks == 1 && std::strstr(options, "step"))) {
    ck.code(rc, STF_SUCCESS, "stf_bcast_end");
    check_leaves(ck, c, leaves);
  }
  check_bcast(ck, sf, c);
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
  int fired = failed_one ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &fired, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return fired != 0;
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  Checker ck("test_setup_oom", argc, argv, 17);
#if STF_OWN_NEW
  const Case c = make_case(ck.seed());
  bool hosts = false;
  for (int i = 1; i < argc; i++) hosts |= std::strcmp(argv[i], "--hosts-as-nodes") == 0;
  node_of.resize(nranks);
  for (int r = 0; r < nranks; r++) node_of[r] = r / 2;
  if (hosts) {  // a host's lowest rank names its node
    MPI_Comm host;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &host);
    int lowest = me;
    MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, host);
    MPI_Allgather(&lowest, 1, MPI_INT, node_of.data(), 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Comm_free(&host);
  }
  // Emulated nodes of 2 ranks (or the hosts, --hosts-as-nodes): putsignal's
  // window between nodes, the strategies' steps in and between nodes.
  const char *const types[] = {"-stf_type basic",
                               "-stf_type neighbor",
                               "-stf_type window",
                               "-stf_type collective",
                               "-stf_type putsignal -stf_ranks_per_node 2",
                               "-stf_type auto -stf_ranks_per_node 2",
                               "-stf_type 2step -stf_ranks_per_node 2",
                               // windows: steps collective to destroy
                               "-stf_type 2step -stf_ranks_per_node 2 -stf_node_transport window "
                               "-stf_net_transport window",
                               "-stf_type 3step -stf_ranks_per_node 2",
                               // a step collective to make: an agreement after the planning
                               "-stf_type 3step -stf_ranks_per_node 2 -stf_net_transport window",
                               "-stf_type split -stf_ranks_per_node 2 -stf_split_bytes 16",
                               "-stf_type basic -stf_twosided allreduce",
                               "-stf_type auto -stf_autotune 1 -stf_ranks_per_node 2"};
  for (const char *given : types) {
    std::string with = given;
    const std::string emulated = " -stf_ranks_per_node 2";
    // Across hosts, only what takes its nodes from the hosts, less the
    // autotuned trial (three quarters of the time, and emulated nodes cover
    // it) and window steps: the single-host runs cover the rest. Each
    // set-up here is many round trips over TCP, and a busy machine slows
    // those tenfold.
    if (hosts && (with.find(emulated) == std::string::npos || with.find("autotune") != std::string::npos ||
                  with.find("window") != std::string::npos))
      continue;
    if (hosts) with.erase(with.find(emulated), emulated.size());
    const char *options = with.c_str();
    // The autotuned trial sets up four candidates (putsignal's windows among
    // them) at every allocation: one sweep, by the rank count (the suite runs
    // 2, 3 and 4 ranks): the first rank short once, or the last from then on.
    const bool trial = with.find("autotune") != std::string::npos;
    const bool trial_persistent = nranks % 2 == 1;
    const int trial_victim = trial_persistent ? nranks - 1 : 0;
    for (int victim = 0; victim < nranks; victim++) {
      // Every rank with basic, the first and the last with the others.
      if (victim > 0 && victim < nranks - 1 && std::strcmp(given, types[0]) != 0) continue;
      for (bool persistent : {false, true}) {
        if (trial && (victim != trial_victim || persistent != trial_persistent)) continue;
        long n = 0;
        for (;; n++) {
          ck.context(std::string(options) + ": rank " + std::to_string(victim) + " short of memory from allocation " +
                     std::to_string(n) + " of stf_setup" + (persistent ? " on" : " only"));
          if (!setup_short_of_memory(ck, c, options, victim, n, persistent)) break;
        }
        // Set-up allocates something on every rank: the sweep tried that.
        ck.check(n > 0, "stf_setup allocated nothing on rank %d", victim);
      }
    }
  }
  // Tags run out (above): each SF on a new communicator, so that the step
  // SFs' duplicates are made during set-up and their topologies when their
  // transports are.
  for (const char *options : {"-stf_type 2step -stf_ranks_per_node 2", "-stf_type 3step -stf_ranks_per_node 2"})
    for (int victim : {0, nranks - 1}) {
      if (hosts) break;
      long n = 0;
      for (bool fired = true; fired; n++) {
        ck.context(std::string(options) + ", each SF on a duplicate of its own: rank " + std::to_string(victim) +
                   " short of memory at allocation " + std::to_string(n) + " of stf_setup");
        MPI_Comm comm = MPI_COMM_NULL;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        small_tag_ub = 1;
        fired = setup_short_of_memory(ck, c, options, victim, n, false, comm);
        small_tag_ub = 0;
        MPI_Comm_free(&comm);
      }
      ck.check(n > 1, "stf_setup allocated nothing on rank %d", victim);
    }
  for (int victim = 0; victim < nranks && !hosts; victim++)
    for (bool persistent : {false, true}) {
      long n = 0;
      for (;; n++) {
        ck.context("the first SF of a communicator: rank " + std::to_string(victim) +
                   " short of memory from allocation " + std::to_string(n) + " of stf_create" +
                   (persistent ? " on" : " only"));
        if (!create_short_of_memory(ck, c, victim, n, persistent)) break;
      }
      ck.check(n > 0, "stf_create allocated nothing on rank %d", victim);
    }
  // Begins that fail on one rank and are begun again: the transports whose
  // begin is local (not window's fences and epochs); putsignal through its
  // regions and, with units larger than a region, by MPI with a mark (a peer
  // that never comes is a timeout); 2step on one rank.
  const char *const begin_types[] = {
      "-stf_type basic",
      "-stf_type neighbor",
      "-stf_type collective",
      "-stf_type putsignal -stf_ranks_per_node 2 -stf_putsignal_timeout 5",
      "-stf_type putsignal -stf_ranks_per_node 2 -stf_putsignal_timeout 5 -stf_putsignal_unit_bytes 1",
      "-stf_type 2step -stf_ranks_per_node 2"};
  for (const char *options : begin_types)
    for (int victim = 0; victim < nranks && !hosts; victim++) {
      if (victim > 0 && victim < nranks - 1) continue;
      if (std::strstr(options, "step") && nranks > 1) continue;
      for (long n = 0;; n++) {
        ck.context(std::string(options) + ": rank " + std::to_string(victim) + " short of memory at allocation " +
                   std::to_string(n) + " of a bcast's begin, which it begins again");
        if (!begin_short_of_memory(ck, c, options, victim, n)) break;
      }
    }
#else
  if (me == 0) std::printf("test_setup_oom: skipped under a sanitizer, whose runtime replaces operator new\n");
#endif
  const int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
