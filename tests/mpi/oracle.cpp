#include "oracle.h"

#include <cstring>

namespace stft {

namespace {
// Key spaces of the different arrays, so no two arrays share values.
enum : std::uint64_t { kRoot = 1, kLeaf = 2, kMulti = 3, kSentinel = 4 };
constexpr stf_int kBigFactors = 3;  // leaves per root that may hold |factor| > 1
}  // namespace

void Buffer::overwrite(const Buffer &from) { std::memcpy(bytes_.data(), from.bytes_.data(), bytes_.size()); }

Buffer::Buffer(const UnitSpec &u, stf_int n, std::uint64_t tag)
    : extent_(u.extent), n_(n), bytes_((n + 2 * kGuard) * u.extent) {
  std::uint64_t word = 0;
  for (std::size_t i = 0; i < bytes_.size(); ++i) {
    if (i % 8 == 0) word = hash_key(tag, kSentinel, i / 8);
    bytes_[i] = static_cast<unsigned char>(word >> (8 * (i % 8)));
  }
}

void DataGen::root(int p, stf_int r, void *dst) const {
  gen_unit(*u, op, hash_key(key, kRoot, static_cast<std::uint64_t>(p), r), true, dst);
}

void DataGen::leaf(int p, stf_int i, void *dst) const {
  const bool big = g->position[p][i] < kBigFactors;
  gen_unit(*u, op, hash_key(key, kLeaf, static_cast<std::uint64_t>(p), g->ranks[p].slot(i)), big,
           dst);
}

void DataGen::multi(int p, stf_int m, void *dst) const {
  gen_unit(*u, op, hash_key(key, kMulti, static_cast<std::uint64_t>(p), m), true, dst);
}

stf_int DataGen::leaf_slots(int p) const {
  stf_int lo, hi;
  g->ranks[p].leaf_range(&lo, &hi);
  return hi + 1;
}

// Sentinel tags differ per array kind and rank so copies between buffers show.
Buffer DataGen::blank_root_buffer(int p, std::uint64_t tag) const {
  return Buffer(*u, g->ranks[p].nroots, hash_key(key, tag, kRoot, p));
}
Buffer DataGen::blank_leaf_buffer(int p, std::uint64_t tag) const {
  return Buffer(*u, leaf_slots(p), hash_key(key, tag, kLeaf, p));
}
Buffer DataGen::blank_multi_buffer(int p, std::uint64_t tag) const {
  return Buffer(*u, g->nmulti(p), hash_key(key, tag, kMulti, p));
}

Buffer DataGen::root_buffer(int p) const {
  Buffer b = blank_root_buffer(p, 0);
  for (stf_int r = 0; r < g->ranks[p].nroots; ++r) root(p, r, b.unit(r));
  return b;
}

Buffer DataGen::leaf_buffer(int p) const {
  Buffer b = blank_leaf_buffer(p, 0);
  const LocalGraph &lg = g->ranks[p];
  for (stf_int i = 0; i < lg.nleaves(); ++i) leaf(p, i, b.unit(lg.slot(i)));
  return b;
}

Buffer DataGen::multi_buffer(int p) const {
  Buffer b = blank_multi_buffer(p, 0);
  for (stf_int m = 0; m < g->nmulti(p); ++m) multi(p, m, b.unit(m));
  return b;
}

Buffer expect_bcast(const DataGen &d, int me) {
  Buffer want = d.leaf_buffer(me);
  const LocalGraph &lg = d.g->ranks[me];
  std::vector<unsigned char> tmp(d.u->extent);
  for (stf_int i = 0; i < lg.nleaves(); ++i) {
    d.root(lg.iremote[i].rank, lg.iremote[i].index, tmp.data());
    apply_op(*d.u, d.op, want.unit(lg.slot(i)), tmp.data());
  }
  return want;
}

Buffer expect_reduce(const DataGen &d, int me) {
  Buffer want = d.root_buffer(me);
  std::vector<unsigned char> tmp(d.u->extent);
  for (stf_int r = 0; r < d.g->ranks[me].nroots; ++r)
    for (const LeafRef &l : d.g->leaves_of[me][r]) {
      d.leaf(l.rank, l.index, tmp.data());
      apply_op(*d.u, d.op, want.unit(r), tmp.data());
    }
  return want;
}

void accept_any_leaf(const DataGen &d, int me, const Buffer &got, Buffer *want) {
  std::vector<unsigned char> leafval(d.u->extent), candidate(d.u->extent);
  for (stf_int r = 0; r < d.g->ranks[me].nroots; ++r) {
    if (d.g->degree(me, r) < 2) continue;
    for (const LeafRef &l : d.g->leaves_of[me][r]) {
      // The root unit as it would be with this leaf's value (gaps unchanged).
      d.leaf(l.rank, l.index, leafval.data());
      std::memcpy(candidate.data(), want->unit(r), d.u->extent);
      copy_unit(*d.u, candidate.data(), leafval.data());
      if (unit_equal(*d.u, candidate.data(), got.unit(r))) {
        std::memcpy(want->unit(r), candidate.data(), d.u->extent);
        break;
      }
    }
  }
}

void expect_fetch(const DataGen &d, int me, std::uint64_t update_tag, Buffer *root,
                  Buffer *update) {
  // Replay every root's contributions in (rank, slot) order; keep what
  // concerns me: the final values of my roots and the values my leaves fetch.
  *root = d.root_buffer(me);
  *update = d.blank_leaf_buffer(me, update_tag);
  std::vector<unsigned char> cur(d.u->extent), tmp(d.u->extent);
  for (int p = 0; p < d.g->size; ++p)
    for (stf_int r = 0; r < d.g->ranks[p].nroots; ++r) {
      const auto &list = d.g->leaves_of[p][r];
      if (list.empty()) continue;
      d.root(p, r, cur.data());
      for (const LeafRef &l : list) {
        if (l.rank == me) copy_unit(*d.u, update->unit(l.slot), cur.data());
        d.leaf(l.rank, l.index, tmp.data());
        apply_op(*d.u, d.op, cur.data(), tmp.data());
      }
      if (p == me) copy_unit(*d.u, root->unit(r), cur.data());
    }
}

Buffer expect_gather(const DataGen &d, int me, std::uint64_t blank_tag) {
  Buffer want = d.blank_multi_buffer(me, blank_tag);
  std::vector<unsigned char> tmp(d.u->extent);
  for (stf_int r = 0; r < d.g->ranks[me].nroots; ++r) {
    stf_int m = d.g->multi_offset[me][r];
    for (const LeafRef &l : d.g->leaves_of[me][r]) {
      d.leaf(l.rank, l.index, tmp.data());
      copy_unit(*d.u, want.unit(m++), tmp.data());
    }
  }
  return want;
}

Buffer expect_scatter(const DataGen &d, int me) {
  Buffer want = d.leaf_buffer(me);
  const LocalGraph &lg = d.g->ranks[me];
  std::vector<unsigned char> tmp(d.u->extent);
  for (stf_int i = 0; i < lg.nleaves(); ++i) {
    const stf_node &n = lg.iremote[i];
    d.multi(n.rank, d.g->multi_offset[n.rank][n.index] + d.g->position[me][i], tmp.data());
    copy_unit(*d.u, want.unit(lg.slot(i)), tmp.data());
  }
  return want;
}

std::vector<char> leaf_mask(const GlobalGraph &g, int me) {
  const LocalGraph &lg = g.ranks[me];
  stf_int lo, hi;
  lg.leaf_range(&lo, &hi);
  std::vector<char> m(hi + 1, 0);
  for (stf_int i = 0; i < lg.nleaves(); ++i) m[lg.slot(i)] = 1;
  return m;
}

std::vector<char> all_mask(stf_int n) { return std::vector<char>(n, 1); }

std::vector<char> root_mask(const GlobalGraph &g, int me) {
  std::vector<char> m(g.ranks[me].nroots);
  for (stf_int r = 0; r < g.ranks[me].nroots; ++r) m[r] = g.degree(me, r) > 0;
  return m;
}

void compare_buffers(Checker &ck, const UnitSpec &u, const char *what, const Buffer &got,
                     const Buffer &want, const std::vector<char> &mask) {
  int reported = 0;
  bool ok = true;
  for (stf_int i = -Buffer::kGuard; i < got.size() + Buffer::kGuard; ++i) {
    const bool inside = i >= 0 && i < got.size();
    const bool masked = inside && mask[i];
    const bool same = masked ? unit_equal(u, got.unit(i), want.unit(i))
                             : std::memcmp(got.unit(i), want.unit(i), u.extent) == 0;
    if (same) continue;
    ok = false;
    if (reported++ < 3)
      ck.check(false, "%s unit %d (%s): expected %s got %s", what, i,
               !inside ? "guard outside the buffer" : masked ? "written slot" : "must be untouched",
               format_unit(u, want.unit(i)).c_str(), format_unit(u, got.unit(i)).c_str());
  }
  if (ok) ck.pass();
}

}  // namespace stft
