// The API's small promises: the version query, the stats ABI rule (a struct
// of an older or newer size), one error channel without repeated code
// names (stf_set_error), failed begins that leave the request NULL, the
// peer lists of stf_get_root_ranks / stf_get_leaf_ranks against the oracle,
// STF_MPI_NODE, and the operand order of user-defined ops.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "check.h"
#include "graphs.h"
#include "runner.h"

using namespace stft;

namespace {

int me = 0, nranks = 1;

void version(Checker &ck) {
  ck.context("stf_get_version");
  int major = -1, minor = -1, patch = -1;
  ck.code(stf_get_version(&major, &minor, &patch), STF_SUCCESS, "stf_get_version");
  ck.check(major == STF_VERSION_MAJOR && minor == STF_VERSION_MINOR && patch == STF_VERSION_PATCH,
           "library %d.%d.%d, header %d.%d.%d", major, minor, patch, STF_VERSION_MAJOR, STF_VERSION_MINOR,
           STF_VERSION_PATCH);
  ck.code(stf_get_version(nullptr, nullptr, nullptr), STF_SUCCESS, "stf_get_version(NULL...)");
}

// A caller compiled against version 0.1 (the fields it knew), one compiled
// against a later version with a field appended, and a size that is too small.
void stats_abi(Checker &ck) {
  ck.context("stats ABI");
  struct Old {
    size_t size;
    long long counters[15];
    long long after;  // not part of the caller's struct: must stay untouched
  } old;
  struct Newer {
    stf_stats now;
    long long later;  // a field this library does not know
  } newer;
  static_assert(offsetof(Old, after) == offsetof(stf_stats, device_buffers_to_mpi) + sizeof(long long),
                "Old mirrors version 0.1 of stf_stats");
  LocalGraph g = ring_graph(me, nranks, 2);
  stf_sf sf = make_sf(ck, g, MPI_COMM_WORLD, nullptr, STF_COPY_VALUES);
  if (!sf) return;
  std::vector<double> roots(2, 1.0), leaves(4);  // leaves in slots 2 and 3
  ck.code(stf_bcast(sf, MPI_DOUBLE, roots.data(), leaves.data(), MPI_REPLACE), STF_SUCCESS, "bcast");
  stf_stats full = stf_stats_init();
  ck.code(stf_get_stats(sf, &full), STF_SUCCESS, "stf_get_stats");
  ck.check(full.size == sizeof(stf_stats), "size %zu after the call, want %zu", full.size, sizeof(stf_stats));
  ck.check(full.messages_sent == (nranks > 1 ? 2 - (nranks == 2) : 0), "messages_sent %lld", full.messages_sent);

  std::memset(&old, 0x5a, sizeof old);
  old.size = offsetof(Old, after);
  const long long sentinel = old.after;
  ck.code(stf_get_stats(sf, reinterpret_cast<stf_stats *>(&old)), STF_SUCCESS, "stf_get_stats, 0.1 struct");
  ck.check(old.size == offsetof(Old, after) && old.after == sentinel, "an old caller's struct was overrun");
  ck.check(old.counters[5] == full.messages_sent, "old struct: messages_sent %lld, want %lld", old.counters[5],
           full.messages_sent);

  std::memset(&newer, 0x5a, sizeof newer);
  newer.now.size = sizeof newer;
  const long long later = newer.later;
  ck.code(stf_get_stats(sf, &newer.now), STF_SUCCESS, "stf_get_stats, newer struct");
  ck.check(newer.now.size == sizeof(stf_stats) && newer.later == later,
           "a newer caller: size %zu (want %zu, the bytes filled), its unknown field %s", newer.now.size,
           sizeof(stf_stats), newer.later == later ? "kept" : "overwritten");

  stf_stats small = stf_stats_init();
  small.size = sizeof(long long);
  ck.code(stf_get_stats(sf, &small), STF_ERR_ARG, "stf_get_stats with size too small");
  ck.has_message("stf_get_stats with size too small");
  stf_destroy(&sf);
}

// stf_set_error writes the one channel; library messages never start with
// a code's name.
void errors(Checker &ck) {
  ck.context("error channel");
  ck.code(stf_set_error(STF_ERR_ARG, "layered library: %d widgets", 3), STF_ERR_ARG, "stf_set_error");
  ck.check(std::strcmp(stf_last_error_message(), "layered library: 3 widgets") == 0, "message \"%s\"",
           stf_last_error_message());
  stf_sf sf = nullptr;
  ck.code(stf_create(MPI_COMM_WORLD, nullptr), STF_ERR_NULL, "stf_create(NULL)");
  ck.check(std::strstr(stf_last_error_message(), "STF_ERR") == nullptr, "message repeats the name: %s",
           stf_last_error_message());
  ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "stf_create");
  ck.code(stf_set_sf_options(sf, "-stf_type carrier_pigeon"), STF_ERR_OPTION, "bad option");
  ck.check(std::strstr(stf_last_error_message(), "STF_ERR") == nullptr, "message repeats the name: %s",
           stf_last_error_message());
  stf_destroy(&sf);
}

// Every begin that fails, whatever the reason, leaves *req NULL.
void failed_begins(Checker &ck) {
  ck.context("failed begins");
  int garbage = 0;
  const stf_request stale = reinterpret_cast<stf_request>(&garbage);
  int buf[8] = {0};
  struct Case {
    const char *what;
    int want;
    int (*call)(stf_sf, int *, stf_request *);
  };
  const Case cases[] = {
      {"bcast_begin, NULL sf", STF_ERR_NULL,
       [](stf_sf, int *b, stf_request *r) { return stf_bcast_begin(nullptr, MPI_INT, b, b + 4, MPI_REPLACE, r); }},
      {"reduce_begin, NULL sf", STF_ERR_NULL,
       [](stf_sf, int *b, stf_request *r) { return stf_reduce_begin(nullptr, MPI_INT, b + 4, b, MPI_SUM, r); }},
      {"fetch_and_op_begin, NULL sf", STF_ERR_NULL,
       [](stf_sf, int *b, stf_request *r) {
         return stf_fetch_and_op_begin(nullptr, MPI_INT, b, b + 4, b + 6, MPI_SUM, r);
       }},
      {"gather_begin, NULL sf", STF_ERR_NULL,
       [](stf_sf, int *b, stf_request *r) { return stf_gather_begin(nullptr, MPI_INT, b + 4, b, r); }},
      {"scatter_begin, NULL sf", STF_ERR_NULL,
       [](stf_sf, int *b, stf_request *r) { return stf_scatter_begin(nullptr, MPI_INT, b, b + 4, r); }},
      {"compute_degree_begin, NULL sf", STF_ERR_NULL,
       [](stf_sf, int *, stf_request *r) { return stf_compute_degree_begin(nullptr, r); }},
      {"bcast_begin_mem, bad memtype", STF_ERR_ARG,
       [](stf_sf sf, int *b, stf_request *r) {
         return stf_bcast_begin_mem(sf, MPI_INT, static_cast<stf_memtype>(7), b, STF_MEMTYPE_HOST, b + 4,
                                    MPI_REPLACE, r);
       }},
      {"reduce_begin_mem, bad memtype", STF_ERR_ARG,
       [](stf_sf sf, int *b, stf_request *r) {
         return stf_reduce_begin_mem(sf, MPI_INT, STF_MEMTYPE_HOST, b + 4, static_cast<stf_memtype>(-3), b, MPI_SUM,
                                     r);
       }},
      {"bcast_begin, no graph", STF_ERR_STATE,
       [](stf_sf sf, int *b, stf_request *r) { return stf_bcast_begin(sf, MPI_INT, b, b + 4, MPI_REPLACE, r); }},
  };
  stf_sf sf = nullptr;
  ck.code(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS, "stf_create");
  for (const Case &c : cases) {
    stf_request req = stale;
    ck.code(c.call(sf, buf, &req), c.want, c.what);
    ck.check(req == nullptr, "%s left the request non-NULL", c.what);
  }
  stf_destroy(&sf);
}

// Peer lists against the graph of every rank.
void peers(Checker &ck, const NamedGraph &ng) {
  ck.context(ng.name + " peer ranks");
  const GlobalGraph g = gather_graph(ng.local, MPI_COMM_WORLD);
  stf_sf sf = make_sf(ck, ng.local, MPI_COMM_WORLD, nullptr, STF_COPY_VALUES, false);
  if (!sf) return;
  // Expected: root peers as (rank -> (leaf slot, root) sorted), leaf peers as
  // (rank -> roots in that rank's leaf slot order).
  std::map<int, std::vector<std::pair<stf_int, stf_int>>> want_root;
  const LocalGraph &mine = g.ranks[me];
  for (stf_int i = 0; i < mine.nleaves(); ++i)
    want_root[mine.iremote[i].rank].push_back({mine.slot(i), mine.iremote[i].index});
  for (auto &w : want_root) std::sort(w.second.begin(), w.second.end());
  std::map<int, std::vector<std::pair<stf_int, stf_int>>> want_leaf;  // (slot there, root here)
  for (int p = 0; p < nranks; ++p)
    for (stf_int i = 0; i < g.ranks[p].nleaves(); ++i)
      if (g.ranks[p].iremote[i].rank == me) want_leaf[p].push_back({g.ranks[p].slot(i), g.ranks[p].iremote[i].index});
  for (auto &w : want_leaf) std::sort(w.second.begin(), w.second.end());

  int n = -1;
  const int *ranks = nullptr;
  const stf_int *offset = nullptr, *leaves = nullptr, *roots = nullptr;
  if (ck.code(stf_get_root_ranks(sf, &n, &ranks, &offset, &leaves, &roots), STF_SUCCESS, "stf_get_root_ranks")) {
    bool same = n == static_cast<int>(want_root.size()) && offset[0] == 0;
    int k = 0;
    for (const auto &w : want_root) {
      if (!same) break;
      same = ranks[k] == w.first && offset[k + 1] - offset[k] == static_cast<stf_int>(w.second.size());
      for (stf_int e = 0; same && e < offset[k + 1] - offset[k]; ++e)
        same = leaves[offset[k] + e] == w.second[e].first && roots[offset[k] + e] == w.second[e].second;
      k++;
    }
    ck.check(same, "stf_get_root_ranks: %d peers, want %zu, or other edges", n, want_root.size());
  }
  ck.code(stf_get_root_ranks(sf, nullptr, nullptr, nullptr, nullptr, nullptr), STF_SUCCESS, "NULL outputs");
  if (ck.code(stf_get_leaf_ranks(sf, &n, &ranks, &offset, &roots), STF_SUCCESS, "stf_get_leaf_ranks")) {
    bool same = n == static_cast<int>(want_leaf.size()) && offset[0] == 0;
    int k = 0;
    for (const auto &w : want_leaf) {
      if (!same) break;
      same = ranks[k] == w.first && offset[k + 1] - offset[k] == static_cast<stf_int>(w.second.size());
      for (stf_int e = 0; same && e < offset[k + 1] - offset[k]; ++e) same = roots[offset[k] + e] == w.second[e].second;
      k++;
    }
    ck.check(same, "stf_get_leaf_ranks: %d peers, want %zu, or other roots", n, want_leaf.size());
  }
  // Valid until reset: afterwards the calls need a graph again.
  ck.code(stf_reset(sf), STF_SUCCESS, "stf_reset");
  ck.code(stf_get_root_ranks(sf, &n, nullptr, nullptr, nullptr, nullptr), STF_ERR_STATE, "root ranks after reset");
  stf_destroy(&sf);
}

// Nodes move over an SF as STF_MPI_NODE: each leaf receives its own root's node.
void mpi_node(Checker &ck) {
  ck.context("STF_MPI_NODE");
  LocalGraph g = ring_graph(me, nranks, 3);
  stf_sf sf = make_sf(ck, g, MPI_COMM_WORLD, nullptr, STF_COPY_VALUES);
  if (!sf) return;
  std::vector<stf_node> roots(g.nroots), leaves(g.nroots + 2, stf_node{-1, -1});
  for (stf_int r = 0; r < g.nroots; ++r) roots[r] = {me, r};
  ck.code(stf_bcast(sf, STF_MPI_NODE, roots.data(), leaves.data(), MPI_REPLACE), STF_SUCCESS, "bcast of nodes");
  bool same = true;
  for (stf_int i = 0; i < g.nleaves(); ++i) {
    const stf_node got = leaves[g.slot(i)], want = g.iremote[i];
    same = same && got.rank == want.rank && got.index == want.index;
  }
  ck.check(same, "a leaf did not receive its root's (rank, index)");
  stf_destroy(&sf);
}

// Not commutative (x op y with MPI_Reduce_local(x, y) gives 2y + x), so the
// operand order the header states is checked: the target is MPI's inout.
void twice_plus(void *in, void *inout, int *len, MPI_Datatype *) {
  const double *x = static_cast<const double *>(in);
  double *y = static_cast<double *>(inout);
  for (int i = 0; i < *len; ++i) y[i] = 2 * y[i] + x[i];
}

// One leaf per rank on root 0 of the next rank: bcast, reduce and
// fetch-and-op with a user-defined op that does not commute.
void operand_order(Checker &ck) {
  ck.context("operand order of user-defined ops");
  MPI_Op op;
  MPI_Op_create(twice_plus, 0, &op);
  LocalGraph g;
  g.nroots = 1;
  g.iremote = {{(me + 1) % nranks, 0}};
  stf_sf sf = make_sf(ck, g, MPI_COMM_WORLD, nullptr, STF_COPY_VALUES);
  if (sf) {
    const double mine = 10.0 * me + 1, next = 10.0 * ((me + 1) % nranks) + 1;
    double root = mine, leaf = 1000 + me;
    ck.code(stf_bcast(sf, MPI_DOUBLE, &root, &leaf, op), STF_SUCCESS, "bcast");
    ck.check(leaf == 2 * (1000 + me) + next, "bcast: leaf %g, want 2 leaf + root = %g", leaf, 2 * (1000 + me) + next);
    leaf = 1000 + me;
    ck.code(stf_reduce(sf, MPI_DOUBLE, &leaf, &root, op), STF_SUCCESS, "reduce");
    const double from = 1000 + (me + nranks - 1) % nranks;  // the leaf on my root
    ck.check(root == 2 * mine + from, "reduce: root %g, want 2 root + leaf = %g", root, 2 * mine + from);
    root = mine;
    double old = -1;
    ck.code(stf_fetch_and_op(sf, MPI_DOUBLE, &root, &leaf, &old, op), STF_SUCCESS, "fetch_and_op");
    ck.check(root == 2 * mine + from && old == next, "fetch_and_op: root %g (want %g), old %g (want %g)", root,
             2 * mine + from, old, next);
    stf_destroy(&sf);
  }
  MPI_Op_free(&op);
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  Checker ck("test_api", argc, argv, 20251123);
  version(ck);
  stats_abi(ck);
  errors(ck);
  failed_begins(ck);
  for (const NamedGraph &ng : standard_graphs(ck.seed(), 12, MPI_COMM_WORLD)) peers(ck, ng);
  mpi_node(ck);
  operand_order(ck);
  int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
