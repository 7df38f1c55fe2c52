// Index analysis on and off (-stf_pack_opt 1 / 0) give bitwise identical
// results, on the standard graphs and on a structured 3D halo whose messages
// are faces, edges and corners of boxes; the view proves those messages were
// classified strided, and the statistics prove that contiguous messages and
// an in-place self part cost no copy; a self part of runs goes run by run;
// receives land in the root array only where no other edge touches the
// roots, and set-up memory follows the graph, not nroots.
//
// Options: --seed N (STF_TEST_SEED), --graphs N random graphs (STF_TEST_GRAPHS).
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "check.h"
#include "graphs.h"
#include "oracle.h"
#include "runner.h"
#include "units.h"

using namespace stft;

namespace {

// A non-periodic 3D decomposition with a ghost layer: each rank owns
// nx*ny*nz cells (its roots); its leaves are the slots of the padded
// (nx+2)*(ny+2)*(nz+2) array: the ghost faces, edges and corners facing each
// of up to 26 neighbours (from their boundary cells), and the interior,
// whose leaves are the rank's own cells (a self part that is a strided box).
// Each neighbour sits in one direction only, so every message is one box.
LocalGraph box3d_graph(int rank, int size, int nx, int ny, int nz) {
  int dims[3] = {0, 0, 0};
  MPI_Dims_create(size, 3, dims);
  const int c[3] = {rank % dims[0], rank / dims[0] % dims[1], rank / (dims[0] * dims[1])};
  const int n[3] = {nx, ny, nz};
  LocalGraph g;
  g.nroots = nx * ny * nz;
  g.contiguous = false;
  for (int oz = -1; oz <= 1; ++oz)
    for (int oy = -1; oy <= 1; ++oy)
      for (int ox = -1; ox <= 1; ++ox) {
        const int o[3] = {ox, oy, oz};
        int p[3];
        bool inside = true;
        for (int d = 0; d < 3; ++d) p[d] = c[d] + o[d], inside &= p[d] >= 0 && p[d] < dims[d];
        if (!inside) continue;
        const int owner = p[0] + dims[0] * (p[1] + dims[1] * p[2]);
        // Along each axis: the ghost slots and the owner's cells they mirror.
        int lo[3], hi[3], cell0[3];
        for (int d = 0; d < 3; ++d) {
          lo[d] = o[d] < 0 ? 0 : o[d] > 0 ? n[d] + 1 : 1;
          hi[d] = o[d] < 0 ? 0 : o[d] > 0 ? n[d] + 1 : n[d];
          cell0[d] = o[d] < 0 ? n[d] - 1 : 0;  // slot lo maps to this cell
        }
        for (int k = lo[2]; k <= hi[2]; ++k)
          for (int j = lo[1]; j <= hi[1]; ++j)
            for (int i = lo[0]; i <= hi[0]; ++i) {
              const int cell[3] = {cell0[0] + i - lo[0], cell0[1] + j - lo[1], cell0[2] + k - lo[2]};
              g.ilocal.push_back(i + (nx + 2) * (j + (ny + 2) * k));
              g.iremote.push_back({owner, cell[0] + nx * (cell[1] + ny * cell[2])});
            }
      }
  return g;
}

// Leaves 0..n-1 read roots 0..n-1 of the next rank: contiguous everywhere.
LocalGraph shift_graph(int rank, int size, stf_int n) {
  LocalGraph g;
  g.nroots = n;
  for (stf_int i = 0; i < n; ++i) g.iremote.push_back({(rank + 1) % size, i});
  return g;
}

// Leaf i reads root i of this rank: a self part that is the identity.
LocalGraph identity_graph(int rank, stf_int n) {
  LocalGraph g;
  g.nroots = n;
  for (stf_int i = 0; i < n; ++i) g.iremote.push_back({rank, i});
  return g;
}

enum class Op { bcast, reduce, fetch };
const char *name_of(Op o) { return o == Op::bcast ? "bcast" : o == Op::reduce ? "reduce" : "fetch_and_op"; }

// Buffers after one operation: bcast {leaf, root}, reduce {root, leaf},
// fetch {root, leafupdate, leaf}.
std::vector<Buffer> run(Checker &ck, stf_sf sf, const DataGen &d, int me, Op o) {
  std::vector<Buffer> b;
  int rc = STF_SUCCESS;
  switch (o) {
    case Op::bcast:
      b = {d.leaf_buffer(me), d.root_buffer(me)};
      rc = stf_bcast(sf, d.u->type, b[1].data(), b[0].data(), d.op);
      break;
    case Op::reduce:
      b = {d.root_buffer(me), d.leaf_buffer(me)};
      rc = stf_reduce(sf, d.u->type, b[1].data(), b[0].data(), d.op);
      break;
    case Op::fetch:
      b = {d.root_buffer(me), d.blank_leaf_buffer(me, 77), d.leaf_buffer(me)};
      rc = stf_fetch_and_op(sf, d.u->type, b[0].data(), b[2].data(), b[1].data(), d.op);
      break;
  }
  ck.code(rc, STF_SUCCESS, name_of(o));
  return b;
}

bool same_bytes(const UnitSpec &u, const Buffer &a, const Buffer &b) {
  const std::size_t bytes = (a.size() + 2 * Buffer::kGuard) * u.extent;
  return a.size() == b.size() && std::memcmp(a.unit(-Buffer::kGuard), b.unit(-Buffer::kGuard), bytes) == 0;
}

// The optimised result against the oracle (the unoptimised one equals it).
void check_oracle(Checker &ck, const DataGen &d, int me, Op o, const std::vector<Buffer> &got) {
  if (o == Op::bcast) {
    compare_buffers(ck, *d.u, "bcast leafdata", got[0], expect_bcast(d, me), leaf_mask(*d.g, me));
  } else if (o == Op::reduce) {
    Buffer want = expect_reduce(d, me);
    if (d.op == MPI_REPLACE) accept_any_leaf(d, me, got[0], &want);
    compare_buffers(ck, *d.u, "reduce rootdata", got[0], want, root_mask(*d.g, me));
  } else {
    Buffer root = got[0], update = got[1];
    expect_fetch(d, me, 77, &root, &update);
    compare_buffers(ck, *d.u, "fetch_and_op rootdata", got[0], root, root_mask(*d.g, me));
    compare_buffers(ck, *d.u, "fetch_and_op leafupdate", got[1], update, leaf_mask(*d.g, me));
  }
}

// Every op of every unit (core units only unless full) on the graph, with
// analysis on and off: identical bytes in every buffer, guards included.
void compare_on_off(Checker &ck, MPI_Comm comm, const NamedGraph &ng, const std::vector<UnitSpec> &units, bool full,
                    std::uint64_t key) {
  int me;
  MPI_Comm_rank(comm, &me);
  const GlobalGraph g = gather_graph(ng.local, comm);
  ck.context(ng.name + " setup");
  stf_sf on = make_sf(ck, ng.local, comm, "-stf_pack_opt 1", STF_COPY_VALUES);
  stf_sf off = make_sf(ck, ng.local, comm, "-stf_pack_opt 0", STF_COPY_VALUES);
  for (std::size_t ui = 0; ui < units.size() && on && off; ++ui) {
    const UnitSpec &u = units[ui];
    if (!full && !u.core) continue;
    for (std::size_t oi = 0; oi < u.ops.size(); ++oi) {
      const DataGen d{&g, &u, u.ops[oi], hash_key(key, ui, oi)};
      bool fetch = false;
      for (MPI_Op fo : u.fetch) fetch |= fo == d.op;
      for (Op o : {Op::bcast, Op::reduce, Op::fetch}) {
        if (o == Op::fetch && !fetch) continue;
        ck.context(ng.name + " " + u.name + " " + op_name(d.op) + " " + name_of(o));
        const std::vector<Buffer> a = run(ck, on, d, me, o), b = run(ck, off, d, me, o);
        for (std::size_t k = 0; k < a.size(); ++k)
          ck.check(same_bytes(u, a[k], b[k]), "buffer %zu differs between -stf_pack_opt 1 and 0", k);
        check_oracle(ck, d, me, o, a);
      }
    }
  }
  if (on) stf_destroy(&on);
  if (off) stf_destroy(&off);
}

// stf_view of sf as rank 0 sees it (empty elsewhere).
std::string view_text(Checker &ck, stf_sf sf) {
  return captured(ck, [&](std::FILE *f) { return stf_view(sf, f); }, "stf_view");
}
int count(const std::string &s, const char *word) {
  int n = 0;
  for (std::size_t p = s.find(word); p != std::string::npos; p = s.find(word, p + 1)) ++n;
  return n;
}

// The halo's messages and self part must be recognised as boxes with the
// analysis on, and all be index arrays with it off.
void check_box_view(Checker &ck, const LocalGraph &box, int me, int size) {
  ck.context("box3d view");
  stf_sf on = make_sf(ck, box, MPI_COMM_WORLD, "-stf_pack_opt 1", STF_COPY_VALUES);
  stf_sf off = make_sf(ck, box, MPI_COMM_WORLD, "-stf_pack_opt 0", STF_COPY_VALUES);
  if (!on || !off) return;
  const std::string von = view_text(ck, on), voff = view_text(ck, off);
  if (me == 0) {
    // Each rank: its interior self part (leaves strided) plus one box per
    // neighbour and direction, none of them an index array.
    ck.check(count(von, "indexed") == 0, "pack_opt 1: an index array in the 3D halo:\n%s", von.c_str());
    ck.check(count(von, "strided(") >= size, "pack_opt 1: fewer than %d strided lists:\n%s", size, von.c_str());
    if (size > 1)
      ck.check(count(von, "strided(dx=1,") > 0, "pack_opt 1: no x face (dx=1) recognised:\n%s", von.c_str());
    ck.check(count(voff, "strided(") == 0 && count(voff, "contiguous from") == 0,
             "pack_opt 0 still classified a list:\n%s", voff.c_str());
  }
  stf_destroy(&on);
  stf_destroy(&off);
}

// Rows that wrap, on each rank alone: leaf row j is root nx-1 of row j,
// the row's nx roots, then root 0 of it. The self part is runs (the rows)
// beside single units whose roots repeat (the view says so); a reduce onto
// the repeated roots keeps the leaf order, so inexact sums match
// -stf_pack_opt 0 and the loop over the leaves bit for bit.
void check_self_runs(Checker &ck) {
  const stf_int nx = 24, ny = 3;
  LocalGraph g;
  g.nroots = nx * ny;
  for (stf_int j = 0; j < ny; ++j)
    for (stf_int i = -1; i <= nx; ++i) g.iremote.push_back(stf_node{0, j * nx + (i + nx) % nx});
  const stf_int nleaves = static_cast<stf_int>(g.iremote.size());
  ck.context("self runs: rows that wrap");
  stf_sf on = make_sf(ck, g, MPI_COMM_SELF, "-stf_pack_opt 1", STF_COPY_VALUES);
  stf_sf off = make_sf(ck, g, MPI_COMM_SELF, "-stf_pack_opt 0", STF_COPY_VALUES);
  if (!on || !off) return;
  const std::string v = view_text(ck, on);
  ck.check(count(v, "3 run(s)") == 1, "pack_opt 1: the self part is not 3 runs:\n%s", v.c_str());
  // Sums whose order shows: (1e16 - 1e16) + 1 is 1, (1e16 + 1) - 1e16 is 0.
  std::vector<double> root(g.nroots, 1e16), leaf(nleaves, 1.0), want_leaf(nleaves), want_root = root;
  for (stf_int k = 0; k < nleaves; k += nx + 2) leaf[k] = -1e16;  // each row's first ghost
  for (stf_int k = 0; k < nleaves; ++k) {
    want_leaf[k] = root[g.iremote[k].index];
    want_root[g.iremote[k].index] += leaf[k];
  }
  for (stf_sf sf : {on, off}) {
    std::vector<double> l(nleaves, -1), r = root;
    ck.code(stf_bcast(sf, MPI_DOUBLE, root.data(), l.data(), MPI_REPLACE), STF_SUCCESS, "bcast");
    ck.check(l == want_leaf, "bcast: leaves differ from their roots (%s)", sf == on ? "pack_opt 1" : "pack_opt 0");
    ck.code(stf_reduce(sf, MPI_DOUBLE, leaf.data(), r.data(), MPI_SUM), STF_SUCCESS, "reduce");
    ck.check(std::memcmp(r.data(), want_root.data(), r.size() * sizeof(double)) == 0,
             "reduce: sums differ from the loop over the leaves (%s)", sf == on ? "pack_opt 1" : "pack_opt 0");
  }
  stf_destroy(&on);
  stf_destroy(&off);

  // One array for roots and leaves, leaf i reading root i-1 and leaf 0 the
  // last root: each unit written is the next one read, and the loop over
  // the leaves gives every unit the last root's value.
  const stf_int n = 20;
  LocalGraph shift;
  shift.nroots = n + 1;
  for (stf_int i = 0; i <= n; ++i) shift.iremote.push_back(stf_node{0, (i + n) % (n + 1)});
  stf_sf one = make_sf(ck, shift, MPI_COMM_SELF, "-stf_pack_opt 1", STF_COPY_VALUES);
  if (!one) return;
  std::vector<double> a(n + 1);
  for (stf_int i = 0; i <= n; ++i) a[i] = i;
  ck.code(stf_bcast(one, MPI_DOUBLE, a.data(), a.data(), MPI_REPLACE), STF_SUCCESS, "bcast on one array");
  ck.check(a == std::vector<double>(n + 1, n), "bcast on one array: not the loop over the leaves");
  stf_destroy(&one);
}

// Statistics: contiguous messages cost no pack or unpack (REPLACE), the
// identity self part on one array costs nothing; with the analysis off
// every message is packed. The window transport (STF_TYPE=window reruns)
// moves the same packed messages as basic, so the counts are the same.
void check_stats(Checker &ck, int me, int size) {
  const stf_int n = 1000;
  const int peers = size > 1 ? 1 : 0;
  const LocalGraph shift = shift_graph(me, size, n), ident = identity_graph(me, n);
  for (int opt = 1; opt >= 0; --opt) {
    std::vector<double> roots(n), leaves(n, -1.0);
    for (stf_int i = 0; i < n; ++i) roots[i] = me * 10000.0 + i;
    const std::string options = "-stf_pack_opt " + std::to_string(opt);
    ck.context("stats shift " + options);
    stf_sf sf = make_sf(ck, shift, MPI_COMM_WORLD, options.c_str(), STF_COPY_VALUES);
    if (!sf) return;
    stf_stats s = stf_stats_init();
    ck.code(stf_bcast(sf, MPI_DOUBLE, roots.data(), leaves.data(), MPI_REPLACE), STF_SUCCESS, "bcast");
    ck.code(stf_get_stats(sf, &s), STF_SUCCESS, "stf_get_stats");
    ck.check(leaves[n - 1] == ((me + 1) % size) * 10000.0 + n - 1, "bcast moved the wrong data");
    if (me == 0)
      std::printf("test_pack_opt: %d ranks, contiguous bcast of %d doubles, -stf_pack_opt %d: pack_calls %lld, "
                  "unpack_calls %lld, scatter_calls %lld, messages %lld\n",
                  size, n, opt, s.pack_calls, s.unpack_calls, s.scatter_calls, s.messages_sent);
    ck.check(s.messages_sent == peers && s.messages_received == peers, "messages %lld/%lld, expected %d",
             s.messages_sent, s.messages_received, peers);
    const int packed = opt ? 0 : peers;
    ck.check(s.pack_calls == packed && s.unpack_calls == packed, "pack_calls %lld, unpack_calls %lld", s.pack_calls,
             s.unpack_calls);
    ck.check(s.bytes_packed == s.pack_calls * n * 8, "bytes_packed %lld", s.bytes_packed);
    ck.check(s.scatter_calls == 1 - peers, "scatter_calls %lld (the self part is one memcpy)", s.scatter_calls);
    ck.code(stf_reset_stats(sf), STF_SUCCESS, "stf_reset_stats");
    ck.code(stf_reduce(sf, MPI_DOUBLE, leaves.data(), roots.data(), MPI_SUM), STF_SUCCESS, "reduce");
    ck.code(stf_get_stats(sf, &s), STF_SUCCESS, "stf_get_stats");
    ck.check(s.pack_calls == packed && s.unpack_calls == peers,
             "reduce SUM: pack_calls %lld, unpack_calls %lld (SUM must unpack)", s.pack_calls,
             s.unpack_calls);
    stf_destroy(&sf);

    ck.context("stats identity " + options);
    sf = make_sf(ck, ident, MPI_COMM_WORLD, options.c_str(), STF_COPY_VALUES);
    if (!sf) return;
    std::vector<double> one = roots;
    ck.code(stf_bcast(sf, MPI_DOUBLE, one.data(), one.data(), MPI_REPLACE), STF_SUCCESS, "bcast in place");
    ck.code(stf_get_stats(sf, &s), STF_SUCCESS, "stf_get_stats");
    ck.check(one == roots, "in-place identity bcast changed the data");
    ck.check(s.scatter_calls == (opt ? 0 : 1), "in-place identity: scatter_calls %lld", s.scatter_calls);
    ck.code(stf_bcast(sf, MPI_DOUBLE, roots.data(), leaves.data(), MPI_REPLACE), STF_SUCCESS, "bcast");
    ck.code(stf_get_stats(sf, &s), STF_SUCCESS, "stf_get_stats");
    ck.check(leaves == roots && s.scatter_calls == (opt ? 1 : 2), "identity into another array: scatter_calls %lld",
             s.scatter_calls);
    stf_destroy(&sf);
  }
  stf_stats s = stf_stats_init();
  ck.context("stats errors");
  ck.code(stf_get_stats(nullptr, &s), STF_ERR_NULL, "stf_get_stats(NULL)");
}

// A receive lands straight in the root array (reduce REPLACE, no unpack)
// only for a contiguous range of roots that no other edge touches. Every
// other rank reads a block of 10 of rank 0's roots: blocks apart, blocks
// overlapping by 5, and blocks apart with a leaf of rank 0's own on root 0
// (in rank 1's block). Rank 0 checks its roots and its unpack count.
void check_direct_ranges(Checker &ck, int me, int size) {
  if (size < 2) return;
  const char *names[] = {"apart", "overlapping", "apart, self leaf"};
  const int unpacks[] = {0, size > 2 ? size - 1 : 0, 1};
  for (int layout = 0; layout < 3; ++layout) {
    ck.context(std::string("direct ranges, ") + names[layout]);
    const stf_int step = layout == 1 ? 5 : 10, nroots = me == 0 ? step * (size - 2) + 10 : 0;
    LocalGraph g;
    g.nroots = nroots;
    for (stf_int i = 0; i < 10 && me > 0; ++i) g.iremote.push_back({0, step * (me - 1) + i});
    if (me == 0 && layout == 2) g.iremote.push_back({0, 0});
    stf_sf sf = make_sf(ck, g, MPI_COMM_WORLD, "-stf_pack_opt 1", STF_COPY_VALUES);
    if (!sf) return;
    std::vector<int> roots(nroots, -1), leaves(g.nleaves());
    for (stf_int i = 0; i < g.nleaves(); ++i) leaves[i] = 1000 * me + i;
    ck.code(stf_reduce(sf, MPI_INT, leaves.data(), roots.data(), MPI_REPLACE), STF_SUCCESS, "reduce");
    stf_stats st = stf_stats_init();
    ck.code(stf_get_stats(sf, &st), STF_SUCCESS, "stf_get_stats");
    for (stf_int r = 0; r < nroots; ++r) {
      bool ok = layout == 2 && r == 0 && roots[r] == 0;  // the self leaf's value
      for (int from = 1; from < size; ++from) {
        const stf_int i = r - step * (from - 1);
        ok |= i >= 0 && i < 10 && roots[r] == 1000 * from + i;
      }
      ck.check(ok, "root %d = %d, the value of none of its leaves", r, roots[r]);
    }
    if (me == 0)
      ck.check(st.unpack_calls == unpacks[layout], "unpack_calls %lld, expected %d", st.unpack_calls,
               unpacks[layout]);
    stf_destroy(&sf);
  }
}

// Set-up needs memory for the graph, not for nroots: one leaf on the last
// of INT_MAX roots, set up with the data segment limited to what the
// process uses now plus 256 MiB (a scratch array of nroots counters would
// be 8 GiB).
void check_huge_nroots(Checker &ck) {
  ck.context("nroots INT_MAX");
  long data_kb = -1;
  if (std::FILE *f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "VmData: %ld kB", &data_kb) == 1) break;
    std::fclose(f);
  }
  rlimit old{};
  if (data_kb < 0 || getrlimit(RLIMIT_DATA, &old) != 0) return;  // not Linux: nothing to limit with
  LocalGraph g;
  g.nroots = std::numeric_limits<stf_int>::max();
  g.iremote = {{0, g.nroots - 1}, {0, 0}};
  rlimit low = old;
  low.rlim_cur = std::min<rlim_t>(old.rlim_cur, (static_cast<rlim_t>(data_kb) << 10) + (rlim_t(256) << 20));
  setrlimit(RLIMIT_DATA, &low);
  stf_sf sf = make_sf(ck, g, MPI_COMM_SELF, nullptr, STF_COPY_VALUES);
  setrlimit(RLIMIT_DATA, &old);
  stf_destroy(&sf);
}

// A REPLACE bcast and reduce whose only message is contiguous at both ends
// goes from user memory to user memory: no pack or receive buffer may be
// allocated for it. Rank 1's 4 Mi leaves read rank 0's 4 Mi roots; the
// first operations run with the data segment limited to what the process
// uses after set-up plus 8 MiB (a 16 MiB buffer would not fit).
void check_no_unused_buffers(Checker &ck, int me, int size) {
  if (size != 2) return;
  ck.context("no buffers for in-place messages");
  const stf_int n = 4 << 20;
  LocalGraph g;
  g.nroots = me == 0 ? n : 0;
  for (stf_int i = 0; i < n && me == 1; ++i) g.iremote.push_back({0, i});
  stf_sf sf = make_sf(ck, g, MPI_COMM_WORLD, "-stf_pack_opt 1", STF_COPY_VALUES);
  if (!sf) return;
  const stf_int nleaves = g.nleaves();
  g.iremote.clear();
  g.iremote.shrink_to_fit();
  std::vector<int> roots(g.nroots), leaves(nleaves, -1);
  for (stf_int i = 0; i < g.nroots; ++i) roots[i] = i;
  ck.code(stf_setup(sf), STF_SUCCESS, "stf_setup");
  long data_kb = -1;
  if (std::FILE *f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "VmData: %ld kB", &data_kb) == 1) break;
    std::fclose(f);
  }
  rlimit old{};
#if defined(__SANITIZE_ADDRESS__)
  const bool limited = false;  // the sanitizer's allocator maps memory of its own as it goes
#else
  const bool limited = data_kb >= 0 && getrlimit(RLIMIT_DATA, &old) == 0;
#endif
  if (limited) {
    rlimit low = old;
    low.rlim_cur = std::min<rlim_t>(old.rlim_cur, (static_cast<rlim_t>(data_kb) << 10) + (rlim_t(8) << 20));
    setrlimit(RLIMIT_DATA, &low);
  }
  for (stf_int i = 0; i < g.nroots; ++i) roots[i] = 3 * i;
  const int bc = stf_bcast(sf, MPI_INT, roots.data(), leaves.data(), MPI_REPLACE);
  int wrong = 0;
  for (stf_int i = 0; i < nleaves; ++i) wrong += leaves[i] != 3 * i;
  for (stf_int i = 0; i < nleaves; ++i) leaves[i] = 5 * i;
  const int rd = stf_reduce(sf, MPI_INT, leaves.data(), roots.data(), MPI_REPLACE);
  if (limited) setrlimit(RLIMIT_DATA, &old);
  ck.code(bc, STF_SUCCESS, "bcast under the limit");
  ck.code(rd, STF_SUCCESS, "reduce under the limit");
  for (stf_int i = 0; i < nleaves; ++i) wrong += leaves[i] != 5 * i;
  for (stf_int i = 0; i < g.nroots; ++i) wrong += roots[i] != 5 * i;
  ck.check(wrong == 0, "%d wrong values", wrong);
  stf_destroy(&sf);
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Checker ck("test_pack_opt", argc, argv, 20240707);
  const std::uint64_t seed = ck.seed();
  const int nrandom = static_cast<int>(parse_long(argc, argv, "--graphs", "STF_TEST_GRAPHS", 16));
  std::vector<UnitSpec> units = make_units();

  const LocalGraph box = box3d_graph(me, size, 4, 3, 2);
  check_box_view(ck, box, me, size);
  check_stats(ck, me, size);
  check_direct_ranges(ck, me, size);
  check_huge_nroots(ck);
  check_no_unused_buffers(ck, me, size);
  check_self_runs(ck);

  std::vector<NamedGraph> graphs = standard_graphs(seed, nrandom, MPI_COMM_WORLD);
  graphs.insert(graphs.begin(), NamedGraph{"box3d", box});
  graphs.insert(graphs.begin(), NamedGraph{"shift", shift_graph(me, size, 37)});
  for (std::size_t gi = 0; gi < graphs.size(); ++gi) {
    const bool full = gi < 3 || graphs[gi].name == "grid2d";  // the matrix of units where it matters most
    compare_on_off(ck, MPI_COMM_WORLD, graphs[gi], units, full, hash_key(seed, gi));
  }

  free_units(units);
  int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
