// Graph algebra built from existing SFs: compose, compose-inverse, inverse,
// concatenate (three root modes), merge, strided and embedded SFs. On every
// standard graph each result is compared edge by edge with a sequential
// oracle, then checked for its defining property by moving data.
#include <algorithm>
#include <string>

#include "check.h"
#include "graphs.h"
#include "runner.h"
#include "test_algebra_util.h"

using namespace stft;

namespace {

int me = 0, nranks = 1;

// A test case: graph A (one of the standard graphs) on every rank.
struct Case {
  GlobalGraph g;
  std::vector<Edges> edges;  // per rank
  std::vector<stf_int> nroots, space;
  std::uint64_t seed;
};

stf_sf sf_of(Checker &ck, const LocalGraph &lg) { return make_sf(ck, lg, MPI_COMM_WORLD, nullptr, STF_COPY_VALUES); }

std::vector<stf_int> nroots_of(const std::vector<LocalGraph> &g) {
  std::vector<stf_int> n;
  for (const LocalGraph &lg : g) n.push_back(lg.nroots);
  return n;
}
std::vector<stf_int> space_of(const std::vector<LocalGraph> &g) {
  std::vector<stf_int> n;
  for (const LocalGraph &lg : g) n.push_back(leaf_space(lg));
  return n;
}

void compose(Checker &ck, const Case &c, stf_sf a) {
  ck.context(ck.context() + " compose");
  std::vector<stf_int> nroots_b(c.space), span(nranks, 12);
  for (int p = 0; p < nranks; ++p) nroots_b[p] += p % 2;
  std::vector<LocalGraph> bg = whole_graph(hash_key(c.seed, 1), nroots_b, span, false);
  Edges want;
  want.nroots = c.g.ranks[me].nroots;
  for (stf_int i = 0; i < bg[me].nleaves(); ++i) {
    const stf_node r = bg[me].iremote[i];
    auto it = c.edges[r.rank].leaf.find(r.index);  // A's leaf at B's root
    if (it != c.edges[r.rank].leaf.end()) want.leaf[bg[me].slot(i)] = it->second;
  }
  stf_sf b = sf_of(ck, bg[me]), comp = nullptr;
  if (ck.code(stf_compose(a, b, &comp), STF_SUCCESS, "stf_compose")) {
    compare_edges(ck, comp, want, "compose");
    std::vector<int> x(c.nroots[me]);
    for (stf_int r = 0; r < c.nroots[me]; ++r) x[r] = value(c.seed, me, r);
    std::vector<int> two = bcast_ints(b, bcast_ints(a, x, nroots_b[me]), leaf_space(bg[me]));
    ck.check(two == bcast_ints(comp, x, leaf_space(bg[me])), "bcast through A then B differs from the composition");
    stf_destroy(&comp);
  }
  stf_destroy(&b);
}

// compose-inverse and inverse share B: a graph whose roots have degree <= 1,
// with leaves in A's leaf space.
void inverses(Checker &ck, const Case &c, stf_sf a) {
  const std::string base = ck.context();
  std::vector<stf_int> nroots_b(nranks), span(c.space);
  for (int p = 0; p < nranks; ++p) nroots_b[p] = static_cast<stf_int>(hash_key(c.seed, 2, p) % 9);
  std::vector<LocalGraph> bg = whole_graph(hash_key(c.seed, 3), nroots_b, span, true);
  const stf_int space_b = leaf_space(bg[me]);
  Edges want_ci, want_inv;
  want_ci.nroots = c.nroots[me];
  want_inv.nroots = space_b;
  for (int p = 0; p < nranks; ++p)
    for (stf_int i = 0; i < bg[p].nleaves(); ++i) {
      if (bg[p].iremote[i].rank != me) continue;
      const stf_int r = bg[p].iremote[i].index, s = bg[p].slot(i);
      want_inv.leaf[r] = {p, s};
      auto it = c.edges[p].leaf.find(s);
      if (it != c.edges[p].leaf.end()) want_ci.leaf[r] = it->second;
    }
  stf_sf b = sf_of(ck, bg[me]), ci = nullptr, inv = nullptr;
  ck.context(base + " compose_inverse");
  if (ck.code(stf_compose_inverse(a, b, &ci), STF_SUCCESS, "stf_compose_inverse")) {
    compare_edges(ck, ci, want_ci, "compose_inverse");
    std::vector<int> x(c.nroots[me]), z(nroots_b[me], -1);
    for (stf_int r = 0; r < c.nroots[me]; ++r) x[r] = value(c.seed, me, r);
    std::vector<int> y = bcast_ints(a, x, std::max(c.space[me], space_b));
    stf_reduce(b, MPI_INT, y.data(), z.data(), MPI_REPLACE);
    ck.check(z == bcast_ints(ci, x, nroots_b[me]), "bcast A then reduce B differs from compose_inverse");
    stf_destroy(&ci);
  }
  ck.context(base + " inverse");
  if (ck.code(stf_create_inverse(b, &inv), STF_SUCCESS, "stf_create_inverse")) {
    compare_edges(ck, inv, want_inv, "inverse");
    std::vector<int> x(space_b), z(nroots_b[me], -1);
    for (stf_int s = 0; s < space_b; ++s) x[s] = value(c.seed + 1, me, s);
    stf_reduce(b, MPI_INT, x.data(), z.data(), MPI_REPLACE);
    ck.check(z == bcast_ints(inv, x, nroots_b[me]), "bcast on the inverse differs from reduce(REPLACE)");
    stf_destroy(&inv);
  }
  // A itself: invertible exactly when no root has two leaves.
  bool multiple = false;
  for (int p = 0; p < nranks; ++p)
    for (stf_int r = 0; r < c.g.ranks[p].nroots; ++r) multiple |= c.g.degree(p, r) > 1;
  int rc = stf_create_inverse(a, &inv);
  if (ck.code(rc, multiple ? STF_ERR_ARG : STF_SUCCESS, "stf_create_inverse(A)") && multiple) ck.has_message("inverse");
  stf_destroy(&inv);
  stf_destroy(&b);
  ck.context(base);
}

// Inputs: A, B (roots of A's leaf space) and M (on A's roots) as pieces.
void concatenate(Checker &ck, const Case &c, stf_sf a) {
  const std::string base = ck.context();
  std::vector<stf_int> nroots_b(nranks), span(nranks, 6);
  for (int p = 0; p < nranks; ++p) nroots_b[p] = static_cast<stf_int>(hash_key(c.seed, 4, p) % 7);
  std::vector<std::vector<LocalGraph>> pieces = {c.g.ranks, whole_graph(hash_key(c.seed, 5), nroots_b, span, false),
                                                 whole_graph(hash_key(c.seed, 6), c.nroots, span, false)};
  const int n = 3;
  stf_sf sfs[3] = {a, sf_of(ck, pieces[1][me]), sf_of(ck, pieces[2][me])};
  // Global stacking: my root space in the result and each piece's global start.
  std::vector<long long> before(n + 1, 0);
  std::vector<stf_int> result_roots(nranks, 0);
  for (int i = 0; i < n; ++i)
    for (int p = 0; p < nranks; ++p) {
      before[i + 1] += pieces[i][p].nroots;
      result_roots[p] += pieces[i][p].nroots;
    }
  for (int i = 0; i < n; ++i) before[i + 1] += before[i];
  const stf_concat_roots modes[] = {STF_CONCAT_ROOTS_LOCAL, STF_CONCAT_ROOTS_GLOBAL, STF_CONCAT_ROOTS_SHARED};
  const char *mode_names[] = {"local", "global", "shared"};
  for (int m = 0; m < 3; ++m)
    for (int custom = 0; custom < 2; ++custom) {
      ck.context(base + " concatenate " + mode_names[m] + (custom ? " offsets" : " stacked"));
      const bool shared = modes[m] == STF_CONCAT_ROOTS_SHARED;  // pieces 0 and 2 share roots
      const std::vector<int> use = shared ? std::vector<int>{0, 2} : std::vector<int>{0, 1, 2};
      std::vector<stf_sf> in;
      std::vector<stf_int> offsets;
      stf_int stacked = 0;
      Edges want;
      want.nroots = 0;
      for (int i : use) want.nroots += pieces[i][me].nroots;
      if (shared) want.nroots = c.nroots[me];
      for (std::size_t u = 0; u < use.size(); ++u) {
        const int i = use[u];
        in.push_back(sfs[i]);
        // Custom offsets: reversed order with a gap of 3 after each piece.
        stf_int off = stacked;
        if (custom) {
          off = 0;
          for (std::size_t v = u + 1; v < use.size(); ++v) off += leaf_space(pieces[use[v]][me]) + 3;
        }
        offsets.push_back(off);
        stacked += leaf_space(pieces[i][me]);
        for (stf_int l = 0; l < pieces[i][me].nleaves(); ++l) {
          stf_node r = pieces[i][me].iremote[l];
          if (modes[m] == STF_CONCAT_ROOTS_LOCAL) {
            for (std::size_t v = 0; v < u; ++v) r.index += pieces[use[v]][r.rank].nroots;
          } else if (modes[m] == STF_CONCAT_ROOTS_GLOBAL) {
            long long gi = before[i] + r.index;
            for (int q = 0; q < r.rank; ++q) gi += pieces[i][q].nroots;
            int q = 0;
            while (gi >= result_roots[q]) gi -= result_roots[q++];
            r = {q, static_cast<stf_int>(gi)};
          }
          want.leaf[off + pieces[i][me].slot(l)] = r;
        }
      }
      stf_sf out = nullptr;
      if (ck.code(stf_concatenate(static_cast<int>(in.size()), in.data(), custom ? offsets.data() : nullptr, modes[m],
                                  &out),
                  STF_SUCCESS, "stf_concatenate"))
        compare_edges(ck, out, want, "concatenate");
      stf_destroy(&out);
    }
  // merge(A, M): same roots, M's edges win.
  ck.context(base + " merge");
  Edges want = c.edges[me];
  for (stf_int l = 0; l < pieces[2][me].nleaves(); ++l) want.leaf[pieces[2][me].slot(l)] = pieces[2][me].iremote[l];
  stf_sf merged = nullptr;
  if (ck.code(stf_merge(a, sfs[2], &merged), STF_SUCCESS, "stf_merge")) compare_edges(ck, merged, want, "merge");
  stf_destroy(&merged);
  stf_destroy(&sfs[1]);
  stf_destroy(&sfs[2]);
  ck.context(base);
}

void strided(Checker &ck, const Case &c, stf_sf a, int variant) {
  const std::string base = ck.context();
  ck.context(base + " strided");
  const stf_int bs = 1 + variant % 3;
  auto ldr_of = [&](int p) { return c.nroots[p] + p % 2; };
  const stf_int ldl = variant % 2 ? -1 : c.space[me] + 2, ldl_used = ldl < 0 ? c.space[me] : ldl;
  Edges want;
  want.nroots = bs * ldr_of(me);
  for (stf_int k = 0; k < bs; ++k)
    for (const auto &kv : c.edges[me].leaf)
      want.leaf[k * ldl_used + kv.first] = {kv.second.rank, k * ldr_of(kv.second.rank) + kv.second.index};
  stf_sf out = nullptr;
  if (ck.code(stf_create_strided(a, bs, ldr_of(me), ldl, &out), STF_SUCCESS, "stf_create_strided"))
    compare_edges(ck, out, want, "strided");
  stf_destroy(&out);
  ck.context(base);
}

// Selections are random per (rank, root or slot) and known to every rank.
void embedded(Checker &ck, const Case &c, stf_sf a) {
  const std::string base = ck.context();
  auto root_kept = [&](int p, stf_int r) { return hash_key(c.seed, 7, p, r) % 2 == 0; };
  auto leaf_kept = [&](stf_int s) { return hash_key(c.seed, 8, me, s) % 3 != 0; };
  for (int by_leaf = 0; by_leaf < 2; ++by_leaf) {
    ck.context(base + (by_leaf ? " embedded leaves" : " embedded roots"));
    std::vector<stf_int> sel;
    const stf_int space = by_leaf ? c.space[me] : c.nroots[me];
    for (stf_int k = space - 1; k >= 0; --k)  // descending, with duplicates
      if (by_leaf ? leaf_kept(k) : root_kept(me, k)) {
        sel.push_back(k);
        if (k % 4 == 0) sel.push_back(k);
      }
    Edges want;
    want.nroots = c.nroots[me];
    for (const auto &kv : c.edges[me].leaf)
      if (by_leaf ? leaf_kept(kv.first) : root_kept(kv.second.rank, kv.second.index)) want.leaf.insert(kv);
    stf_sf sub = nullptr;
    int rc = by_leaf ? stf_create_embedded_leaves(a, static_cast<stf_int>(sel.size()), sel.data(), &sub)
                     : stf_create_embedded_roots(a, static_cast<stf_int>(sel.size()), sel.data(), &sub);
    if (!ck.code(rc, STF_SUCCESS, "stf_create_embedded")) continue;
    compare_edges(ck, sub, want, "embedded");
    stf_sf ref = sf_of(ck, graph_of(want));
    same_ops(ck, sub, ref, hash_key(c.seed, 9, by_leaf), "embedded");
    stf_destroy(&ref);
    stf_destroy(&sub);
  }
  ck.context(base);
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  Checker ck("test_algebra", argc, argv, 20240907);
  const std::uint64_t seed = ck.seed();
  const int nrandom = static_cast<int>(parse_long(argc, argv, "--graphs", "STF_TEST_GRAPHS", 16));
  const std::vector<NamedGraph> graphs = standard_graphs(seed, nrandom, MPI_COMM_WORLD);
  for (std::size_t gi = 0; gi < graphs.size(); ++gi) {
    Case c{gather_graph(graphs[gi].local, MPI_COMM_WORLD), {}, {}, {}, hash_key(seed, gi)};
    c.nroots = nroots_of(c.g.ranks);
    c.space = space_of(c.g.ranks);
    for (const LocalGraph &lg : c.g.ranks) c.edges.push_back(edges_of(lg));
    ck.context(graphs[gi].name);
    stf_sf a = sf_of(ck, graphs[gi].local);
    if (!a) continue;
    compose(ck, c, a);
    inverses(ck, c, a);
    concatenate(ck, c, a);
    strided(ck, c, a, static_cast<int>(gi));
    embedded(ck, c, a);
    stf_destroy(&a);
  }
  int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
