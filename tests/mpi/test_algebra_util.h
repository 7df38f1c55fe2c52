// Helpers of the graph algebra tests: graphs as edge maps (what the oracle
// predicts and what an SF holds), generators of whole graphs computed
// identically on every rank, and comparisons of data movement between SFs.
#pragma once

#include <map>
#include <vector>

#include "check.h"
#include "graphs.h"

namespace stft {

// One rank's part of an SF as an edge map: leaf slot -> root.
struct Edges {
  stf_int nroots = 0;
  std::map<stf_int, stf_node> leaf;
};

inline Edges edges_of(const LocalGraph &g) {
  Edges e;
  e.nroots = g.nroots;
  for (stf_int i = 0; i < g.nleaves(); ++i) e.leaf[g.slot(i)] = g.iremote[i];
  return e;
}

inline Edges edges_of(stf_sf sf) {
  Edges e;
  stf_int nleaves = 0;
  const stf_int *ilocal = nullptr;
  const stf_node *iremote = nullptr;
  if (stf_get_graph(sf, &e.nroots, &nleaves, &ilocal, &iremote) != STF_SUCCESS) return e;
  for (stf_int i = 0; i < nleaves; ++i) e.leaf[ilocal ? ilocal[i] : i] = iremote[i];
  return e;
}

inline LocalGraph graph_of(const Edges &e) {
  LocalGraph g;
  g.nroots = e.nroots;
  g.contiguous = false;
  for (const auto &kv : e.leaf) {
    g.ilocal.push_back(kv.first);
    g.iremote.push_back(kv.second);
  }
  return g;
}

// Leaf buffer length for a graph (maxleaf + 1).
inline stf_int leaf_space(const LocalGraph &g) {
  stf_int lo, hi;
  g.leaf_range(&lo, &hi);
  return hi + 1;
}

// The SF's graph on this rank must be want (nroots and every edge).
void compare_edges(Checker &ck, stf_sf sf, const Edges &want, const char *what);

// A whole graph, the same on every rank: rank p owns nroots[p] roots and
// gets leaves in slots below about span[p] (more if needed). injective: each
// root has at most one leaf. Leaves are listed in a shuffled order; ilocal is
// always explicit.
std::vector<LocalGraph> whole_graph(std::uint64_t seed, const std::vector<stf_int> &nroots,
                                    const std::vector<stf_int> &span, bool injective);

// Int data: value(rank, index) for roots (tag selects a stream).
inline int value(std::uint64_t tag, int rank, stf_int i) {
  return static_cast<int>(hash_key(tag, static_cast<std::uint64_t>(rank), static_cast<std::uint64_t>(i)) % 1000);
}

// bcast/reduce/fetch-and-op (MPI_SUM on ints) and gather over got and over
// ref, an SF built from the same graph through stf_set_graph: every buffer
// must come out identical. Checks plans built without discovery.
void same_ops(Checker &ck, stf_sf got, stf_sf ref, std::uint64_t tag, const char *what);

// bcast with MPI_REPLACE of root values into a leaf buffer of n slots that
// starts at -1 everywhere.
std::vector<int> bcast_ints(stf_sf sf, const std::vector<int> &roots, stf_int n);

}  // namespace stft
