// Graph algebra built from descriptions: collective patterns, layouts and
// global indices, sections, migration; and the error cases of every
// construction (each rank must get the code and a message).
#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "check.h"
#include "graphs.h"
#include "runner.h"
#include "test_algebra_util.h"

using namespace stft;

namespace {

int me = 0, nranks = 1;

stf_sf sf_of(Checker &ck, const LocalGraph &lg) { return make_sf(ck, lg, MPI_COMM_WORLD, nullptr, STF_COPY_VALUES); }

// First global index of every rank and the total, for counts n[p].
std::vector<stf_int> starts(const std::vector<stf_int> &n) {
  std::vector<stf_int> s(n.size() + 1, 0);
  for (std::size_t p = 0; p < n.size(); ++p) s[p + 1] = s[p] + n[p];
  return s;
}

void patterns(Checker &ck, std::uint64_t seed) {
  for (int variant = 0; variant < 4; ++variant) {
    std::vector<stf_int> n(nranks);  // some ranks own nothing
    for (int p = 0; p < nranks; ++p) n[p] = static_cast<stf_int>(hash_key(seed, variant, p) % 5) * (p % 3 != 1);
    const stf_int b = variant % 3;  // alltoall block, also 0
    const std::vector<stf_int> start = starts(n);
    const stf_pattern kinds[] = {STF_PATTERN_ALLGATHER, STF_PATTERN_GATHER, STF_PATTERN_ALLTOALL};
    const char *names[] = {"allgather", "gather", "alltoall"};
    for (int k = 0; k < 3; ++k) {
      ck.context(std::string("pattern ") + names[k] + " #" + std::to_string(variant));
      Edges want;
      if (kinds[k] == STF_PATTERN_ALLTOALL) {
        want.nroots = b * nranks;
        for (int p = 0; p < nranks; ++p)
          for (stf_int j = 0; j < b; ++j) want.leaf[p * b + j] = {p, me * b + j};
      } else {
        want.nroots = n[me];
        if (kinds[k] == STF_PATTERN_ALLGATHER || me == 0)
          for (int p = 0; p < nranks; ++p)
            for (stf_int j = 0; j < n[p]; ++j) want.leaf[start[p] + j] = {p, j};
      }
      stf_sf sf = nullptr;
      if (!ck.code(stf_create_from_pattern(MPI_COMM_WORLD, kinds[k], kinds[k] == STF_PATTERN_ALLTOALL ? b : n[me], &sf),
                   STF_SUCCESS, "stf_create_from_pattern"))
        continue;
      compare_edges(ck, sf, want, names[k]);
      stf_sf ref = sf_of(ck, graph_of(want));
      same_ops(ck, sf, ref, hash_key(seed, 20, variant, k), names[k]);
      stf_destroy(&ref);
      stf_destroy(&sf);
    }
  }
}

// Global indices needed by every rank: random, with repeats, any order.
void layouts(Checker &ck, std::uint64_t seed) {
  for (int variant = 0; variant < 4; ++variant) {
    ck.context("layout #" + std::to_string(variant));
    std::vector<stf_int> n(nranks);
    for (int p = 0; p < nranks; ++p) n[p] = static_cast<stf_int>(hash_key(seed, 30, variant, p) % 40) * (p != 1);
    const std::vector<stf_int> start = starts(n);
    const stf_int total = start.back();
    Rng rng(hash_key(seed, 31, variant, me));
    std::vector<stf_gint> global(total ? rng.below(60) : 0);
    for (stf_gint &gi : global) gi = static_cast<stf_gint>(rng.below(total));
    const stf_int nneeded = static_cast<stf_int>(global.size());
    std::vector<stf_node> owners(nneeded, stf_node{-1, -1});
    if (ck.code(stf_layout_find_owners(MPI_COMM_WORLD, n[me], nneeded, global.data(), owners.data()), STF_SUCCESS,
                "stf_layout_find_owners"))
      for (stf_int i = 0; i < nneeded; ++i) {
        const int p = owners[i].rank;
        if (!ck.check(p >= 0 && p < nranks && start[p] + owners[i].index == global[i] && owners[i].index >= 0 &&
                          owners[i].index < n[p],
                      "global index %lld: owner (%d, %d)", static_cast<long long>(global[i]), p, owners[i].index))
          break;
      }
    // The SF brings each needed entry: roots hold their global index.
    stf_sf sf = nullptr;
    if (!ck.code(stf_create_from_global_indices(MPI_COMM_WORLD, n[me], nneeded, global.data(), &sf), STF_SUCCESS,
                 "stf_create_from_global_indices"))
      continue;
    std::vector<int> roots(n[me]);
    for (stf_int k = 0; k < n[me]; ++k) roots[k] = start[me] + k;
    ck.check(bcast_ints(sf, roots, nneeded) == std::vector<int>(global.begin(), global.end()),
             "bcast does not bring the needed global entries");
    stf_destroy(&sf);
  }
}

void refused(Checker &ck, int rc, int want, const char *what);

// Global ids past INT_MAX: each rank owns about 2^30 entries (counts only;
// nothing that size is allocated but a lazily mapped root array), so from 3
// ranks on the layout holds more than 2^31 ids. Ids are drawn over the whole
// layout, and near the rank boundaries; the SF brings each one's value.
void large_layout(Checker &ck, std::uint64_t seed) {
  ck.context("layout of 2^30 entries per rank");
  const stf_int base = stf_int(1) << 30;
  std::vector<stf_gint> start(nranks + 1, 0);
  for (int p = 0; p < nranks; ++p) start[p + 1] = start[p] + base + 7 * p;
  const stf_gint total = start.back();
  Rng rng(hash_key(seed, 35, 0, me));
  std::vector<stf_gint> global;
  for (int i = 0; i < 40; ++i) global.push_back(static_cast<stf_gint>(rng.below(total)));
  for (int p = 0; p < nranks; ++p)
    for (stf_gint g : {start[p], start[p + 1] - 1}) global.push_back(g);
  if (nranks > 2) global.push_back(total - 1);  // above 2^31
  const stf_int nneeded = static_cast<stf_int>(global.size());
  std::vector<stf_node> owners(nneeded, stf_node{-1, -1});
  const stf_int nowned = base + 7 * me;
  if (ck.code(stf_layout_find_owners(MPI_COMM_WORLD, nowned, nneeded, global.data(), owners.data()), STF_SUCCESS,
              "stf_layout_find_owners"))
    for (stf_int i = 0; i < nneeded; ++i) {
      const int p = owners[i].rank;
      if (!ck.check(p >= 0 && p < nranks && start[p] + owners[i].index == global[i], "global index %lld: owner (%d, %d)",
                    static_cast<long long>(global[i]), p, owners[i].index))
        break;
    }
  const stf_gint past = total;
  stf_node owner;
  refused(ck, stf_layout_find_owners(MPI_COMM_WORLD, nowned, me == 0 ? 1 : 0, &past, &owner), STF_ERR_ARG,
          "an index one past the layout");
  if (me == 0)
    ck.check(std::strstr(stf_last_error_message(), std::to_string(total).c_str()) != nullptr,
             "the message does not name the layout's %lld entries: %s", static_cast<long long>(total),
             stf_last_error_message());

  stf_sf sf = nullptr;
  if (!ck.code(stf_create_from_global_indices(MPI_COMM_WORLD, nowned, nneeded, global.data(), &sf), STF_SUCCESS,
               "stf_create_from_global_indices"))
    return;
  // The roots every rank needs hold their global id (low and high words).
  std::vector<int> counts(nranks), displs(nranks, 0);
  MPI_Allgather(&nneeded, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  for (int p = 1; p < nranks; ++p) displs[p] = displs[p - 1] + counts[p - 1];
  std::vector<stf_gint> all(displs.back() + counts.back());
  MPI_Allgatherv(global.data(), nneeded, MPI_INT64_T, all.data(), counts.data(), displs.data(), MPI_INT64_T,
                 MPI_COMM_WORLD);
  const std::size_t bytes = static_cast<std::size_t>(nowned) * sizeof(stf_gint);
  void *mapped = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (!ck.check(mapped != MAP_FAILED, "mmap of %zu bytes", bytes)) return;
  auto *roots = static_cast<stf_gint *>(mapped);
  for (stf_gint g : all)
    if (g >= start[me] && g < start[me + 1]) roots[g - start[me]] = g;
  std::vector<stf_gint> leaves(nneeded, -1);
  ck.code(stf_bcast(sf, MPI_INT64_T, roots, leaves.data(), MPI_REPLACE), STF_SUCCESS, "stf_bcast");
  ck.check(leaves == global, "bcast does not bring the needed global ids");
  munmap(mapped, bytes);
  stf_destroy(&sf);

  // Concatenation with global roots of two SFs of 2^29 + p roots on rank p:
  // the stacked numbering passes 2^31 from 3 ranks on. Each rank's two
  // leaves per input read near the ends of its neighbours' root ranges.
  ck.context("concatenation of global roots past 2^31");
  const stf_int half = stf_int(1) << 29;
  auto nroots_of = [&](int p) { return half + p; };
  std::vector<stf_gint> in_start(nranks + 1, 0);
  for (int p = 0; p < nranks; ++p) in_start[p + 1] = in_start[p] + nroots_of(p);
  const int next = (me + 1) % nranks, prev = (me + nranks - 1) % nranks;
  stf_sf parts[2] = {nullptr, nullptr};
  std::vector<stf_node> remote[2];
  for (int i = 0; i < 2; ++i) {
    remote[i] = {{next, nroots_of(next) - 1 - i}, {prev, i}};
    ck.code(stf_create(MPI_COMM_WORLD, &parts[i]), STF_SUCCESS, "stf_create");
    ck.code(stf_set_graph(parts[i], nroots_of(me), 2, nullptr, STF_COPY_VALUES, remote[i].data(), STF_COPY_VALUES),
            STF_SUCCESS, "stf_set_graph");
  }
  stf_sf cat = nullptr;
  if (ck.code(stf_concatenate(2, parts, nullptr, STF_CONCAT_ROOTS_GLOBAL, &cat), STF_SUCCESS, "stf_concatenate")) {
    // The result's layout: 2 (2^29 + p) roots on rank p.
    std::vector<stf_gint> out_start(nranks + 1, 0);
    for (int p = 0; p < nranks; ++p) out_start[p + 1] = out_start[p] + 2 * stf_gint(nroots_of(p));
    stf_int nroots = 0, nleaves = 0;
    const stf_int *ilocal = nullptr;
    const stf_node *iremote = nullptr;
    ck.code(stf_get_graph(cat, &nroots, &nleaves, &ilocal, &iremote), STF_SUCCESS, "stf_get_graph");
    ck.check(nroots == 2 * nroots_of(me) && nleaves == 4, "%d roots, %d leaves", nroots, nleaves);
    for (int i = 0; i < 2 && nleaves == 4; ++i)
      for (int l = 0; l < 2; ++l) {
        const stf_node r = remote[i][l];
        const stf_gint g = i * in_start.back() + in_start[r.rank] + r.index;
        const int p = static_cast<int>(std::upper_bound(out_start.begin(), out_start.end(), g) - out_start.begin()) - 1;
        const stf_int slot = ilocal ? ilocal[2 * i + l] : 2 * i + l;
        ck.check(slot == 2 * i + l && iremote[2 * i + l].rank == p && iremote[2 * i + l].index == g - out_start[p],
                 "input %d leaf %d (global root %lld): got (%d, %d), want (%d, %lld)", i, l, static_cast<long long>(g),
                 iremote[2 * i + l].rank, iremote[2 * i + l].index, p, static_cast<long long>(g - out_start[p]));
      }
  }
  stf_destroy(&cat);
  for (stf_sf &p : parts) stf_destroy(&p);
}

// Per root: 0..3 entries at offsets laid out backwards with gaps.
void sections(Checker &ck, std::uint64_t seed, const NamedGraph &ng) {
  ck.context(ng.name + " section");
  GlobalGraph g = gather_graph(ng.local, MPI_COMM_WORLD);
  auto count_of = [&](int p, stf_int r) { return static_cast<stf_int>(hash_key(seed, 40, p, r) % 4); };
  auto offset_of = [&](int p, stf_int r) {
    stf_int off = 1;
    for (stf_int q = g.ranks[p].nroots - 1; q > r; --q) off += count_of(p, q) + 1;
    return off;
  };
  const LocalGraph &lg = ng.local;
  std::vector<stf_int> rc(lg.nroots), ro(lg.nroots);
  for (stf_int r = 0; r < lg.nroots; ++r) rc[r] = count_of(me, r), ro[r] = offset_of(me, r);
  const stf_int space = leaf_space(lg);
  std::vector<stf_int> lc(space, -5), lo(space, -5);
  stf_int nleafdata = -1;
  stf_sf a = sf_of(ck, lg), data = nullptr;
  if (!a) return;
  if (ck.code(stf_distribute_section(a, rc.data(), ro.data(), lc.data(), lo.data(), &nleafdata, &data), STF_SUCCESS,
              "stf_distribute_section")) {
    // Expected: counts of the roots, offsets packed in slot order.
    Edges e = edges_of(lg);
    stf_int next = 0;
    bool ok = true;
    for (stf_int s = 0; s < space && ok; ++s) {
      auto it = e.leaf.find(s);
      stf_int c = it == e.leaf.end() ? 0 : count_of(it->second.rank, it->second.index);
      ok = ck.check(lc[s] == c && lo[s] == (it == e.leaf.end() ? 0 : next), "slot %d: count %d offset %d, expected %d %d",
                    s, lc[s], lo[s], c, next);
      next += c;
    }
    ck.check(nleafdata == next, "nleafdata %d, expected %d", nleafdata, next);
    // The entries themselves: root entry j of root r holds value(p, offset + j).
    stf_int ndata = 0;
    for (stf_int r = 0; r < lg.nroots; ++r) ndata = std::max(ndata, ro[r] + rc[r]);
    std::vector<int> rootdata(ndata, -3);
    for (stf_int r = 0; r < lg.nroots; ++r)
      for (stf_int j = 0; j < rc[r]; ++j) rootdata[ro[r] + j] = value(seed, me, ro[r] + j);
    std::vector<int> got = bcast_ints(data, rootdata, nleafdata);
    for (stf_int s = 0; s < space && ok; ++s) {
      auto it = e.leaf.find(s);
      if (it == e.leaf.end()) continue;
      for (stf_int j = 0; j < lc[s] && ok; ++j) {
        int want = value(seed, it->second.rank, offset_of(it->second.rank, it->second.index) + j);
        ok = ck.check(got[lo[s] + j] == want, "slot %d entry %d: %d, expected %d", s, j, got[lo[s] + j], want);
      }
    }
    stf_destroy(&data);
  }
  stf_destroy(&a);
}

// Targets are a function of (variant, rank, point), known to every rank.
void migration(Checker &ck, std::uint64_t seed) {
  for (int variant = 0; variant < 4; ++variant) {
    ck.context("migration #" + std::to_string(variant));
    auto npoints = [&](int p) { return static_cast<stf_int>(hash_key(seed, 50, variant, p) % 30) * (p != 2); };
    auto target = [&](int p, stf_int i) {
      return variant == 0 ? p : static_cast<int>(hash_key(seed, 51 + variant, p, i) % (variant == 1 ? 1 : nranks));
    };
    std::vector<int> mine(npoints(me));
    for (stf_int i = 0; i < npoints(me); ++i) mine[i] = target(me, i);
    // Arrivals in (source rank, source index) order.
    std::vector<stf_node> want;
    for (int p = 0; p < nranks; ++p)
      for (stf_int i = 0; i < npoints(p); ++i)
        if (target(p, i) == me) want.push_back({p, i});
    stf_sf sf = nullptr;
    stf_int nnew = -1;
    if (!ck.code(stf_create_migration(MPI_COMM_WORLD, npoints(me), mine.data(), &sf, &nnew), STF_SUCCESS,
                 "stf_create_migration"))
      continue;
    ck.check(nnew == static_cast<stf_int>(want.size()), "nnew %d, expected %zu", nnew, want.size());
    std::vector<stf_node> ids(npoints(me)), got(want.size(), stf_node{-1, -1});
    for (stf_int i = 0; i < npoints(me); ++i) ids[i] = {me, i};
    ck.code(stf_bcast(sf, MPI_2INT, ids.data(), got.data(), MPI_REPLACE), STF_SUCCESS, "bcast over the migration SF");
    bool same = got.size() == want.size();
    for (std::size_t j = 0; same && j < got.size(); ++j) same = got[j].rank == want[j].rank && got[j].index == want[j].index;
    ck.check(same, "the points arriving are not the expected ones in (source rank, index) order");
    stf_destroy(&sf);
  }
}

// Expect `rc == want` with a message, on every rank.
void refused(Checker &ck, int rc, int want, const char *what) {
  if (ck.code(rc, want, what)) ck.has_message(what);
}

void errors(Checker &ck, std::uint64_t seed) {
  ck.context("errors");
  const LocalGraph one = ring_graph(me, nranks, 2), fan = all_to_one_graph(seed, me);
  stf_sf a = sf_of(ck, one), multi = sf_of(ck, fan), out = nullptr;
  // Degree > 1 where at most one is required; rank 0 names the root.
  refused(ck, stf_create_inverse(multi, &out), STF_ERR_ARG, "inverse of a root with many leaves");
  if (me == 0)
    ck.check(std::strstr(stf_last_error_message(), "root 0") != nullptr, "message does not name the root: %s",
             stf_last_error_message());
  refused(ck, stf_compose_inverse(a, multi, &out), STF_ERR_ARG, "compose_inverse with B of degree > 1");
  // Spaces that do not fit.
  LocalGraph small;  // ring leaves use slots 2 and 3: B needs 4 roots
  small.nroots = me == nranks - 1 ? 3 : 4;
  stf_sf b = sf_of(ck, small);
  refused(ck, stf_compose(a, b, &out), STF_ERR_ARG, "compose: A's leaves exceed B's roots");
  refused(ck, stf_merge(a, multi, &out), STF_ERR_ARG, "merge with different root spaces");
  stf_sf pair[2] = {a, multi};
  refused(ck, stf_concatenate(2, pair, nullptr, STF_CONCAT_ROOTS_SHARED, &out), STF_ERR_ARG,
          "concatenate shared with different root spaces");
  refused(ck, stf_concatenate(0, pair, nullptr, STF_CONCAT_ROOTS_LOCAL, &out), STF_ERR_ARG, "concatenate n = 0");
  const stf_int overlap[2] = {0, 1};
  refused(ck, stf_concatenate(2, pair, overlap, STF_CONCAT_ROOTS_LOCAL, &out), STF_ERR_DUPLICATE,
          "concatenate with overlapping leaves");
  refused(ck, stf_create_strided(a, 2, me == 0 ? 1 : -1, -1, &out), STF_ERR_ARG, "strided ldr < nroots on rank 0");
  refused(ck, stf_create_strided(a, 0, -1, -1, &out), STF_ERR_ARG, "strided bs = 0");
  const stf_int bad_root = me == 0 ? 2 : 0;
  refused(ck, stf_create_embedded_roots(a, 1, &bad_root, &out), STF_ERR_ARG, "embedded root out of range");
  refused(ck, stf_create_embedded_leaves(a, -1, nullptr, &out), STF_ERR_ARG, "embedded nselected < 0");
  const stf_gint bad_index = me == 0 ? 2 * nranks : 0;
  stf_node owner;
  refused(ck, stf_layout_find_owners(MPI_COMM_WORLD, 2, 1, &bad_index, &owner), STF_ERR_ARG, "index past the layout");
  refused(ck, stf_create_from_global_indices(MPI_COMM_WORLD, 2, 1, &bad_index, &out), STF_ERR_ARG,
          "global indices past the layout");
  refused(ck, stf_create_from_pattern(MPI_COMM_WORLD, STF_PATTERN_ALLTOALL, me == 0 && nranks > 1 ? 2 : 1, &out),
          nranks > 1 ? STF_ERR_ARG : STF_SUCCESS, "alltoall with different block sizes");
  stf_destroy(&out);
  const int bad_target = me == 0 ? nranks : 0;
  refused(ck, stf_create_migration(MPI_COMM_WORLD, 1, &bad_target, &out, nullptr), STF_ERR_ARG,
          "migration to a rank outside the communicator");
  const stf_int neg[2] = {-1, -1}, zero[2] = {0, 0};
  stf_int lc[4], lo[4];
  refused(ck, stf_distribute_section(a, me == 0 ? neg : zero, zero, lc, lo, nullptr, &out), STF_ERR_ARG,
          "section with a negative count");
  refused(ck, stf_compose(a, nullptr, &out), STF_ERR_NULL, "compose with a NULL SF");
  refused(ck, stf_create_inverse(a, nullptr), STF_ERR_NULL, "inverse with a NULL output");
  // SFs on different communicators: the same group in another order.
  if (nranks > 1) {
    MPI_Comm reversed;
    MPI_Comm_split(MPI_COMM_WORLD, 0, nranks - me, &reversed);
    stf_sf other = make_sf(ck, roots_only_graph(me), reversed, nullptr, STF_COPY_VALUES);
    refused(ck, stf_merge(a, other, &out), STF_ERR_ARG, "merge across communicators");
    refused(ck, stf_compose(a, other, &out), STF_ERR_ARG, "compose across communicators");
    stf_destroy(&other);
    MPI_Comm_free(&reversed);
  }
  // A congruent communicator (a duplicate) is accepted.
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  stf_sf twin = make_sf(ck, one, dup, nullptr, STF_COPY_VALUES);
  ck.code(stf_merge(a, twin, &out), STF_SUCCESS, "merge on a duplicated communicator");
  stf_destroy(&out);
  stf_destroy(&twin);
  MPI_Comm_free(&dup);
  stf_destroy(&b);
  stf_destroy(&multi);
  stf_destroy(&a);
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  Checker ck("test_algebra_build", argc, argv, 20240908);
  const std::uint64_t seed = ck.seed();
  const int nrandom = static_cast<int>(parse_long(argc, argv, "--graphs", "STF_TEST_GRAPHS", 16));
  patterns(ck, seed);
  layouts(ck, seed);
  large_layout(ck, seed);
  for (const NamedGraph &ng : standard_graphs(seed, nrandom, MPI_COMM_WORLD)) sections(ck, seed, ng);
  migration(ck, seed);
  errors(ck, seed);
  int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
