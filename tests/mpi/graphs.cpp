#include "graphs.h"

#include <algorithm>
#include <numeric>

namespace stft {

void LocalGraph::leaf_range(stf_int *minleaf, stf_int *maxleaf) const {
  *minleaf = 0;
  *maxleaf = -1;
  if (iremote.empty()) return;
  if (contiguous) {
    *maxleaf = nleaves() - 1;
    return;
  }
  *minleaf = *std::min_element(ilocal.begin(), ilocal.end());
  *maxleaf = *std::max_element(ilocal.begin(), ilocal.end());
}

namespace {

template <class T>
void shuffle(std::vector<T> &v, Rng &rng) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.below(i)]);
}

// Explicit leaf slots for n leaves: a random subset of [offset, offset+span)
// in random order, so there are holes between, below and above the leaves.
std::vector<stf_int> gappy_slots(stf_int n, Rng &rng) {
  stf_int offset = static_cast<stf_int>(rng.range(0, 4));
  stf_int span = n + static_cast<stf_int>(rng.range(0, n + 2));
  std::vector<stf_int> all(span);
  std::iota(all.begin(), all.end(), offset);
  shuffle(all, rng);
  all.resize(n);
  return all;
}

}  // namespace

LocalGraph random_graph(std::uint64_t seed, int index, int rank, int size) {
  // Parameters every rank must agree on.
  Rng g(hash_key(seed, 0x6a09e667u, static_cast<std::uint64_t>(index)));
  static const int kMaxLeaves[] = {3, 20, 80, 200, 1000};
  static const int kMaxRoots[] = {1, 5, 30, 150, 600};
  static const double kEmpty[] = {0.0, 0.25, 0.5};
  // The largest class is rare: it is there to get multi-kilobyte messages.
  const int max_leaves = kMaxLeaves[g.chance(0.1) ? 4 : g.below(4)];
  const int max_roots = kMaxRoots[g.chance(0.1) ? 4 : g.below(4)];
  const double p_empty = kEmpty[g.below(3)];
  const double p_hot = g.chance(0.3) ? 0.4 : 0.0;  // share of leaves on one hot root
  const double p_self = g.chance(0.3) ? 0.5 : 0.0; // extra share of self edges
  const int ilocal_style = static_cast<int>(g.below(3));  // 0 NULL, 1 gappy, 2 per rank
  std::vector<stf_int> nroots(size);
  std::vector<char> empty(size);
  std::vector<int> owners;  // ranks with at least one root
  for (int p = 0; p < size; ++p) {
    empty[p] = g.chance(p_empty);
    nroots[p] = empty[p] ? 0 : static_cast<stf_int>(g.range(0, max_roots));
    if (nroots[p] > 0) owners.push_back(p);
  }
  int hot_rank = owners.empty() ? -1 : owners[g.below(owners.size())];
  stf_int hot_index = hot_rank < 0 ? 0 : static_cast<stf_int>(g.below(nroots[hot_rank]));

  // This rank's leaves.
  Rng r(hash_key(seed, 0xbb67ae85u, static_cast<std::uint64_t>(index),
                 static_cast<std::uint64_t>(rank)));
  LocalGraph lg;
  lg.nroots = nroots[rank];
  if (empty[rank] || owners.empty()) return lg;
  stf_int n = static_cast<stf_int>(r.range(0, max_leaves));
  for (stf_int i = 0; i < n; ++i) {
    stf_node node;
    if (r.chance(p_hot)) {
      node = {hot_rank, hot_index};
    } else if (nroots[rank] > 0 && r.chance(p_self)) {
      node = {rank, static_cast<stf_int>(r.below(nroots[rank]))};
    } else {
      int p = owners[r.below(owners.size())];
      node = {p, static_cast<stf_int>(r.below(nroots[p]))};
    }
    lg.iremote.push_back(node);
  }
  lg.contiguous = ilocal_style == 0 || (ilocal_style == 2 && r.chance(0.5));
  if (!lg.contiguous) lg.ilocal = gappy_slots(n, r);
  return lg;
}

LocalGraph empty_graph() { return LocalGraph(); }

LocalGraph roots_only_graph(int rank) {
  LocalGraph lg;
  lg.nroots = 3 + rank % 2;
  return lg;
}

LocalGraph all_to_one_graph(std::uint64_t seed, int rank) {
  Rng r(hash_key(seed, 0x3c6ef372u, static_cast<std::uint64_t>(rank)));
  LocalGraph lg;
  lg.nroots = rank == 0 ? 1 : 0;
  stf_int n = 25 + static_cast<stf_int>(r.below(10));
  lg.iremote.assign(n, stf_node{0, 0});
  lg.contiguous = rank % 2 == 0;
  if (!lg.contiguous) lg.ilocal = gappy_slots(n, r);
  return lg;
}

LocalGraph ring_graph(int rank, int size, int n) {
  LocalGraph lg;
  lg.nroots = n;
  lg.contiguous = false;
  lg.ilocal = {n, n + 1};
  lg.iremote = {{(rank + size - 1) % size, n - 1}, {(rank + 1) % size, 0}};
  return lg;
}

LocalGraph grid2d_graph(std::uint64_t seed, int rank, int size, int nx, int ny) {
  int dims[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  const int px = rank % dims[0], py = rank / dims[0];
  auto rank_of = [&](int x, int y) {
    return (x + dims[0]) % dims[0] + ((y + dims[1]) % dims[1]) * dims[0];
  };
  auto slot = [&](int a, int b) { return static_cast<stf_int>(a + b * (nx + 2)); };
  auto cell = [&](int i, int j) { return static_cast<stf_int>(i + j * nx); };
  LocalGraph lg;
  lg.nroots = nx * ny;
  lg.contiguous = false;
  for (int j = 0; j < ny; ++j) {
    lg.ilocal.push_back(slot(0, j + 1));  // west ghost <- west neighbour's east column
    lg.iremote.push_back({rank_of(px - 1, py), cell(nx - 1, j)});
    lg.ilocal.push_back(slot(nx + 1, j + 1));  // east ghost
    lg.iremote.push_back({rank_of(px + 1, py), cell(0, j)});
  }
  for (int i = 0; i < nx; ++i) {
    lg.ilocal.push_back(slot(i + 1, 0));  // south ghost
    lg.iremote.push_back({rank_of(px, py - 1), cell(i, ny - 1)});
    lg.ilocal.push_back(slot(i + 1, ny + 1));  // north ghost
    lg.iremote.push_back({rank_of(px, py + 1), cell(i, 0)});
  }
  // Shuffle leaf order (slot order must not matter to the library).
  Rng r(hash_key(seed, 0xa54ff53au, static_cast<std::uint64_t>(rank)));
  std::vector<int> perm(lg.ilocal.size());
  std::iota(perm.begin(), perm.end(), 0);
  shuffle(perm, r);
  LocalGraph out = lg;
  for (std::size_t k = 0; k < perm.size(); ++k) {
    out.ilocal[k] = lg.ilocal[perm[k]];
    out.iremote[k] = lg.iremote[perm[k]];
  }
  return out;
}

LocalGraph self_only_graph(std::uint64_t seed, int rank) {
  Rng r(hash_key(seed, 0x510e527fu, static_cast<std::uint64_t>(rank)));
  LocalGraph lg;
  lg.nroots = 1 + static_cast<stf_int>(r.below(8));
  stf_int n = static_cast<stf_int>(r.below(20));
  for (stf_int i = 0; i < n; ++i) lg.iremote.push_back({rank, static_cast<stf_int>(r.below(lg.nroots))});
  lg.contiguous = rank % 2 == 1;
  if (!lg.contiguous) lg.ilocal = gappy_slots(n, r);
  return lg;
}

LocalGraph pair_only_graph(int rank, int size) {
  LocalGraph lg;
  lg.nroots = 2;
  if (rank > 1) return lg;
  int other = size > 1 ? 1 - rank : 0;
  lg.iremote = {{other, 0}, {other, 1}, {other, 1}};
  return lg;
}

std::vector<NamedGraph> standard_graphs(std::uint64_t seed, int nrandom, MPI_Comm comm) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::vector<NamedGraph> v;
  v.push_back({"empty", empty_graph()});
  v.push_back({"roots_only", roots_only_graph(rank)});
  v.push_back({"ring", ring_graph(rank, size, 4)});
  v.push_back({"grid2d", grid2d_graph(seed, rank, size, 3, 2)});
  v.push_back({"all_to_one", all_to_one_graph(seed, rank)});
  v.push_back({"self_only", self_only_graph(seed, rank)});
  v.push_back({"pair_only", pair_only_graph(rank, size)});
  for (int i = 0; i < nrandom; ++i)
    v.push_back({"random#" + std::to_string(i), random_graph(seed, i, rank, size)});
  return v;
}

GlobalGraph gather_graph(const LocalGraph &local, MPI_Comm comm) {
  GlobalGraph g;
  g.comm = comm;
  MPI_Comm_size(comm, &g.size);
  const int size = g.size;
  // Per rank: nroots, nleaves, contiguous flag.
  int mine[3] = {local.nroots, local.nleaves(), local.contiguous ? 1 : 0};
  std::vector<int> head(3 * size);
  MPI_Allgather(mine, 3, MPI_INT, head.data(), 3, MPI_INT, comm);
  // Per leaf: slot, root rank, root index (always explicit slots on the wire).
  std::vector<int> sendbuf;
  for (stf_int i = 0; i < local.nleaves(); ++i) {
    sendbuf.push_back(local.slot(i));
    sendbuf.push_back(local.iremote[i].rank);
    sendbuf.push_back(local.iremote[i].index);
  }
  std::vector<int> counts(size), displs(size);
  int total = 0;
  for (int p = 0; p < size; ++p) {
    counts[p] = 3 * head[3 * p + 1];
    displs[p] = total;
    total += counts[p];
  }
  std::vector<int> all(total + 1);
  MPI_Allgatherv(sendbuf.data(), static_cast<int>(sendbuf.size()), MPI_INT, all.data(),
                 counts.data(), displs.data(), MPI_INT, comm);

  g.ranks.resize(size);
  for (int p = 0; p < size; ++p) {
    LocalGraph &lg = g.ranks[p];
    lg.nroots = head[3 * p];
    lg.contiguous = head[3 * p + 2] != 0;
    const int *d = all.data() + displs[p];
    for (int i = 0; i < head[3 * p + 1]; ++i) {
      if (!lg.contiguous) lg.ilocal.push_back(d[3 * i]);
      lg.iremote.push_back({d[3 * i + 1], d[3 * i + 2]});
    }
  }

  // Inverse graph: visit ranks in order and each rank's leaves by slot, so
  // every root's list comes out sorted by (rank, slot).
  g.leaves_of.resize(size);
  g.position.resize(size);
  g.multi_offset.resize(size);
  for (int p = 0; p < size; ++p) g.leaves_of[p].resize(g.ranks[p].nroots);
  for (int p = 0; p < size; ++p) {
    const LocalGraph &lg = g.ranks[p];
    std::vector<stf_int> order(lg.nleaves());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(),
              [&](stf_int a, stf_int b) { return lg.slot(a) < lg.slot(b); });
    g.position[p].assign(lg.nleaves(), 0);
    for (stf_int i : order) {
      auto &list = g.leaves_of[lg.iremote[i].rank][lg.iremote[i].index];
      g.position[p][i] = static_cast<stf_int>(list.size());
      list.push_back({p, lg.slot(i), i});
    }
  }
  for (int p = 0; p < size; ++p) {
    auto &off = g.multi_offset[p];
    off.assign(g.ranks[p].nroots + 1, 0);
    for (stf_int r = 0; r < g.ranks[p].nroots; ++r) off[r + 1] = off[r] + g.degree(p, r);
  }
  return g;
}

}  // namespace stft
