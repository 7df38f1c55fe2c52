// The node-aware strategies (2step, 3step, split) against the serial oracle
// on nodes of several shapes, and the structure of their messages from the
// statistics by locality:
//   3step sends exactly one message per pair of communicating nodes and
//   direction; 2step one per (origin rank, destination node); split
//   min(ceil(volume / cap), ranks of either node) per node pair; and, for every strategy, the bytes
//   crossing between nodes are the distinct roots each node needs times the
//   unit size (a root needed twice on a node crosses once).
// Graphs: the standard ones (structured and random), random graphs whose
// leaves share few roots, and SpMV ghost exchanges of real matrices.
//
// Options: --seed N, --graphs N random graphs, --rpn a,b,... ranks per
// emulated node (0: the real nodes; default 1,2,3,0 and the whole job on one
// node), --matrices a,b (names in the shared matrix folder, default two
// small ones; $STF_MATRIX_DIR overrides the folder).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "check.h"
#include "graphs.h"
#include "oracle.h"
#include "runner.h"
#include "stf_apps.h"
#include "units.h"

using namespace stft;

namespace {

const int kSplitBytes = 24;  // three doubles: split cuts even small volumes

// Leaves that share a few roots per rank, so that many leaves of one node
// need the same root (the case deduplication is for).
LocalGraph shared_roots_graph(std::uint64_t seed, int rank, int size) {
  Rng rng(hash_key(seed, rank));
  LocalGraph g;
  g.nroots = 6;
  const int n = static_cast<int>(rng.range(0, 40));
  for (int i = 0; i < n; i++)
    g.iremote.push_back({static_cast<int>(rng.below(size)), static_cast<stf_int>(rng.below(3))});
  return g;
}

// The ghost exchange of y = A x with rows split into equal shares of
// nonzeros: leaves are the columns of my rows owned by other ranks.
bool spmv_graph(const std::string &path, int rank, int size, LocalGraph *out) {
  stf_coo a;
  if (stf_mm_read(path.c_str(), &a) != STF_SUCCESS) return false;
  std::vector<long long> per_row(a.nrows + 1, 0);
  for (int64_t k = 0; k < a.nnz; k++) per_row[a.row[k] + 1]++;
  for (int64_t r = 0; r < a.nrows; r++) per_row[r + 1] += per_row[r];
  std::vector<int64_t> first(size + 1, a.nrows);  // first row of each rank
  for (int p = 0, r = 0; p <= size; p++) {
    while (r < a.nrows && per_row[r] * size < a.nnz * static_cast<long long>(p)) r++;
    first[p] = p == size ? a.nrows : r;
  }
  auto owner = [&](int64_t row) {
    return static_cast<int>(std::upper_bound(first.begin(), first.end(), row) - first.begin()) - 1;
  };
  std::set<int64_t> ghosts;
  for (int64_t k = 0; k < a.nnz; k++)
    if (owner(a.row[k]) == rank && owner(a.col[k]) != rank) ghosts.insert(a.col[k]);
  *out = LocalGraph();
  out->nroots = static_cast<stf_int>(first[rank + 1] - first[rank]);
  for (int64_t c : ghosts) {
    const int q = owner(c);
    out->iremote.push_back({q, static_cast<stf_int>(c - first[q])});
  }
  stf_coo_free(&a);
  return true;
}

// stf_view names the strategy, what falls back to the SF's transport, and
// the steps (only rank 0 prints).
void check_view(Checker &ck, stf_sf sf, const std::string &strategy, bool crosses) {
  const std::string text = captured(ck, [&](std::FILE *f) { return stf_view(sf, f); }, "stf_view");
  if (ck.rank() == 0) {
    for (const std::string &want : {"transport " + strategy, std::string("fetch-and-op, gather and scatter over basic")})
      ck.check(text.find(want) != std::string::npos, "stf_view lacks '%s':\n%s", want.c_str(), text.c_str());
    if (crosses)
      ck.check(text.find("G (between nodes)") != std::string::npos, "stf_view shows no step between nodes:\n%s",
               text.c_str());
  }
}

// Off-node messages and bytes of one bcast and one reduce of MPI_DOUBLE,
// summed over ranks, against what the strategy promises.
void check_structure(Checker &ck, stf_sf sf, const GlobalGraph &g, const std::string &strategy, MPI_Comm comm) {
  int node = 0;
  if (!ck.code(stf_get_node_layout(sf, &node, nullptr, nullptr, nullptr), STF_SUCCESS, "stf_get_node_layout"))
    return;
  std::vector<int> node_of(g.size);
  MPI_Allgather(&node, 1, MPI_INT, node_of.data(), 1, MPI_INT, comm);
  // Distinct roots each node needs from each other node, and the (origin
  // rank, destination node) pairs that carry any.
  std::set<std::pair<int, std::pair<int, stf_int>>> needed;  // (dest node, root)
  std::set<std::pair<int, int>> rank_to_node;
  for (int p = 0; p < g.size; p++)
    for (const stf_node &r : g.ranks[p].iremote)
      if (node_of[r.rank] != node_of[p]) {
        needed.insert({node_of[p], {r.rank, r.index}});
        rank_to_node.insert({r.rank, node_of[p]});
      }
  std::map<std::pair<int, int>, long long> volume;  // (source node, dest node) -> distinct roots
  for (const auto &n : needed) volume[{node_of[n.second.first], n.first}]++;
  // split: ceil(volume / cap) chunks per node pair, but no more than either
  // node has ranks; each chunk one message.
  std::map<int, long long> node_size;
  for (int n : node_of) node_size[n]++;
  long long split_messages = 0;
  for (const auto &v : volume)
    split_messages += std::min((v.second * 8 + kSplitBytes - 1) / kSplitBytes,
                               std::min(node_size[v.first.first], node_size[v.first.second]));
  const long long pairs = static_cast<long long>(volume.size());
  check_view(ck, sf, strategy, pairs > 0);

  int me = 0;
  MPI_Comm_rank(comm, &me);
  std::vector<double> roots(g.ranks[me].nroots + 1, 1.0), leaves;
  stf_int minleaf = 0, maxleaf = -1;
  g.ranks[me].leaf_range(&minleaf, &maxleaf);
  leaves.assign(maxleaf + 2, 0.0);
  for (int dir = 0; dir < 2; dir++) {
    const char *what = dir == 0 ? "bcast" : "reduce";
    ck.code(stf_reset_stats(sf), STF_SUCCESS, "stf_reset_stats");
    ck.code(dir == 0 ? stf_bcast(sf, MPI_DOUBLE, roots.data(), leaves.data(), MPI_REPLACE)
                     : stf_reduce(sf, MPI_DOUBLE, leaves.data(), roots.data(), MPI_SUM),
            STF_SUCCESS, what);
    stf_stats s = stf_stats_init();
    ck.code(stf_get_stats(sf, &s), STF_SUCCESS, "stf_get_stats");
    long long mine[2] = {s.messages_sent_off_node, s.bytes_sent_off_node}, all[2];
    MPI_Allreduce(mine, all, 2, MPI_LONG_LONG, MPI_SUM, comm);
    ck.check(all[1] == static_cast<long long>(needed.size()) * 8,
             "%s: %lld bytes crossed between nodes, want %zu distinct roots x 8", what, all[1], needed.size());
    if (strategy == "3step")
      ck.check(all[0] == pairs, "%s: %lld messages between nodes, want one per node pair (%lld)", what, all[0],
               pairs);
    else if (strategy == "2step")
      ck.check(all[0] == static_cast<long long>(rank_to_node.size()),
               "%s: %lld messages between nodes, want one per (origin rank, destination node) (%zu)", what, all[0],
               rank_to_node.size());
    else
      ck.check(all[0] == split_messages,
               "%s: %lld messages between nodes, want %lld (per node pair min(ceil(volume/cap), ranks of either "
               "node))",
               what, all[0], split_messages);
  }
}

// Bcast and reduce with the core units (every op of MPI_INT, MPI_DOUBLE)
// and, on the first graphs, every unit; forms alternate (blocking,
// begin/end, begin/stf_test).
void run_ops(Checker &ck, stf_sf sf, const GlobalGraph &g, int me, const std::string &name,
             const std::vector<UnitSpec> &units, bool full, std::uint64_t key) {
  unsigned combo = static_cast<unsigned>(key);
  for (std::size_t ui = 0; ui < units.size(); ++ui) {
    const UnitSpec &u = units[ui];
    if (!full && !u.core) continue;
    for (std::size_t oi = 0; oi < u.ops.size(); ++oi) {
      const DataGen d{&g, &u, u.ops[oi], hash_key(key, ui, oi)};
      const Form f = form_of(++combo);
      const std::string what = name + " " + u.name + " " + op_name(u.ops[oi]) + " ";
      ck.context(what + "bcast " + form_name(f));
      run_bcast(ck, sf, d, me, f);
      ck.context(what + "reduce " + form_name(f));
      run_reduce(ck, sf, d, me, f);
    }
  }
}

// One rank per node, each rank's leaves a contiguous run of the next
// rank's roots: G uses the user's arrays in place of the step buffers, so
// no rank copies anything itself (scatter_calls), but where the step
// combines with another op than MPI_REPLACE (a bcast's R, a reduce's S in
// 3step and split) and for the leaves of a bcast into the array of its
// roots (R copies). Values against the ring.
void check_in_place(Checker &ck, const char *strategy, int me, int size) {
  ck.context(std::string("in place, ") + strategy);
  const int n = 5;
  LocalGraph g;
  g.nroots = n;
  for (int i = 0; i < n; i++) g.iremote.push_back({(me + 1) % size, static_cast<stf_int>(i)});
  const std::string options = std::string("-stf_type ") + strategy + " -stf_ranks_per_node 1";
  stf_sf sf = make_sf(ck, g, MPI_COMM_WORLD, options.c_str(), STF_COPY_VALUES);
  if (!sf) return;
  const int next = (me + 1) % size, prev = (me + size - 1) % size;
  struct Case {
    bool bcast;
    MPI_Op op;
    long long copies;
    bool one_array;
  };
  const long long reduce_sum_copies = std::string(strategy) == "2step" ? 0 : 1;  // 2step's G combines
  for (const Case c : {Case{true, MPI_REPLACE, 0, false}, Case{true, MPI_SUM, 1, false},
                       Case{false, MPI_SUM, reduce_sum_copies, false}, Case{false, MPI_REPLACE, 0, false},
                       Case{true, MPI_REPLACE, 1, true}}) {
    std::vector<double> roots(n), own_leaves(n);
    std::vector<double> &leaves = c.one_array ? roots : own_leaves;
    for (int i = 0; i < n; i++) roots[i] = 10 * me + i, own_leaves[i] = 100 + i;
    ck.code(stf_reset_stats(sf), STF_SUCCESS, "stf_reset_stats");
    ck.code(c.bcast ? stf_bcast(sf, MPI_DOUBLE, roots.data(), leaves.data(), c.op)
                    : stf_reduce(sf, MPI_DOUBLE, leaves.data(), roots.data(), c.op),
            STF_SUCCESS, c.bcast ? "bcast" : "reduce");
    stf_stats st = stf_stats_init();
    ck.code(stf_get_stats(sf, &st), STF_SUCCESS, "stf_get_stats");
    ck.check(st.scatter_calls == c.copies, "%s %s%s: %lld copies on the rank, want %lld", c.bcast ? "bcast" : "reduce",
             c.op == MPI_SUM ? "sum" : "replace", c.one_array ? " (one array)" : "", st.scatter_calls, c.copies);
    for (int i = 0; i < n; i++) {
      const double want = c.bcast ? 10 * next + i + (c.op == MPI_SUM ? 100 + i : 0)
                                  : 100 + i + (c.op == MPI_SUM ? 10 * me + i : 0);
      const double got = c.bcast ? leaves[i] : roots[i];
      ck.check(got == want, "%s: unit %d is %g, want %g (from rank %d)", c.bcast ? "bcast" : "reduce", i, got, want,
               c.bcast ? next : prev);
    }
  }
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
}

// Rank 0's leaves read every other rank's roots, over a collective
// transport between nodes (one rank per node): the ranks with roots use
// them in place, rank 0 has none, and every rank's G must still be given
// the same op (a reduce with MPI_SUM once hung here).
void check_same_op(Checker &ck, const char *strategy, int me, int size) {
  ck.context(std::string("same op in G, ") + strategy);
  const int n = 3;
  LocalGraph g;
  g.nroots = me == 0 ? 0 : n;
  if (me == 0)
    for (int r = 1; r < size; r++)
      for (int i = 0; i < n; i++) g.iremote.push_back({r, static_cast<stf_int>(i)});
  const std::string options =
      std::string("-stf_type ") + strategy + " -stf_ranks_per_node 1 -stf_net_transport collective";
  stf_sf sf = make_sf(ck, g, MPI_COMM_WORLD, options.c_str(), STF_COPY_VALUES);
  if (!sf) return;
  std::vector<double> roots(n), leaves(me == 0 ? n * (size - 1) : 0);
  for (int i = 0; i < n; i++) roots[i] = 10 * me + i;
  for (std::size_t j = 0; j < leaves.size(); j++) leaves[j] = 100 + static_cast<double>(j);
  ck.code(stf_reduce(sf, MPI_DOUBLE, leaves.data(), roots.data(), MPI_SUM), STF_SUCCESS, "reduce");
  for (int i = 0; me > 0 && i < n; i++) {
    const double want = 10 * me + i + 100 + (me - 1) * n + i;
    ck.check(roots[i] == want, "reduce: root %d is %g, want %g", i, roots[i], want);
  }
  ck.code(stf_bcast(sf, MPI_DOUBLE, roots.data(), leaves.data(), MPI_REPLACE), STF_SUCCESS, "bcast");
  for (std::size_t j = 0; j < leaves.size(); j++) {
    const int r = 1 + static_cast<int>(j) / n, i = static_cast<int>(j) % n;
    const double want = 10 * r + i + 100 + (r - 1) * n + i;
    ck.check(leaves[j] == want, "bcast: leaf %zu is %g, want %g", j, leaves[j], want);
  }
  ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
}

std::vector<std::string> split_list(const std::string &s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::string arg_string(int argc, char **argv, const char *name, const char *dflt) {
  for (int i = 1; i + 1 < argc; i++)
    if (std::string(argv[i]) == name) return argv[i + 1];
  return dflt;
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Checker ck("test_nodeaware", argc, argv, 20261123);
  const std::uint64_t seed = ck.seed();
  const int nrandom = static_cast<int>(parse_long(argc, argv, "--graphs", "STF_TEST_GRAPHS", 3));
  std::vector<std::string> rpn = split_list(arg_string(argc, argv, "--rpn", "1,2,3,0"));
  rpn.push_back(std::to_string(size));  // the whole job on one node
  const char *dir = std::getenv("STF_MATRIX_DIR") ? std::getenv("STF_MATRIX_DIR") : STF_MATRIX_DIR;
  const std::vector<std::string> matrices = split_list(arg_string(argc, argv, "--matrices", "1138_bus,4elt"));
  std::vector<UnitSpec> units = make_units();

  std::vector<NamedGraph> graphs = standard_graphs(seed, nrandom, MPI_COMM_WORLD);
  for (int k = 0; k < 2; k++)
    graphs.push_back({"shared-roots#" + std::to_string(k), shared_roots_graph(hash_key(seed, 7, k), me, size)});
  int matrices_found = 0;
  for (const std::string &m : matrices) {
    LocalGraph g;
    if (spmv_graph(std::string(dir) + "/" + m + ".mtx.gz", me, size, &g)) {
      graphs.push_back({"spmv " + m, g});
      matrices_found++;
    }
  }
  if (me == 0 && matrices_found < static_cast<int>(matrices.size()))
    std::printf("test_nodeaware: %d of %zu matrices found in %s\n", matrices_found, matrices.size(),
                dir);

  for (const std::string &k : rpn)
    for (const char *strategy : {"2step", "3step", "split"}) {
      const std::string options = std::string("-stf_type ") + strategy + " -stf_ranks_per_node " + k +
                                  " -stf_split_bytes " + std::to_string(kSplitBytes);
      for (std::size_t gi = 0; gi < graphs.size(); ++gi) {
        const std::string name = graphs[gi].name + " " + strategy + " ranks/node " + k;
        ck.context(name + " setup");
        GlobalGraph g = gather_graph(graphs[gi].local, MPI_COMM_WORLD);
        stf_sf sf = make_sf(ck, graphs[gi].local, MPI_COMM_WORLD, options.c_str(), STF_COPY_VALUES);
        int ok = sf != nullptr, all_ok = 0;
        MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        if (!all_ok) {
          if (sf) stf_destroy(&sf);
          continue;
        }
        const bool full = gi % 5 == 0;  // every unit on some graphs
        run_ops(ck, sf, g, me, name, units, full, hash_key(seed, gi, k.size()));
        ck.context(name + " structure");
        check_structure(ck, sf, g, strategy, MPI_COMM_WORLD);
        ck.context(name + " destroy");
        ck.code(stf_destroy(&sf), STF_SUCCESS, "stf_destroy");
      }
    }
  if (size > 1)
    for (const char *strategy : {"2step", "3step", "split"}) {
      check_in_place(ck, strategy, me, size);
      check_same_op(ck, strategy, me, size);
    }
  free_units(units);
  const int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
