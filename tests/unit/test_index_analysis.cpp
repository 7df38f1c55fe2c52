// Index analysis: each detector on crafted lists, structured-grid halos,
// near-misses that must stay indexed, and random lists checked against the
// defining formula.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "plan/index_analysis.h"

namespace stf {
namespace {

using Idx = std::vector<stf_int>;

IndexList analyze(const Idx &v, bool optimise = true) {
  return analyze_indices(v.data(), static_cast<stf_int>(v.size()), optimise);
}

// Whatever the analysis says, it must name exactly the input units, in order.
void expect_describes(const IndexList &l, const Idx &v) {
  ASSERT_EQ(l.n, static_cast<stf_int>(v.size()));
  for (stf_int i = 0; i < l.n; ++i) ASSERT_EQ(l.at(i), v[i]) << "position " << i;
}

// Units of the box start + X*Y*k + X*j + i, i fastest.
Idx box(stf_int start, stf_int dx, stf_int dy, stf_int dz, stf_int X, stf_int Y) {
  Idx v;
  for (stf_int k = 0; k < dz; ++k)
    for (stf_int j = 0; j < dy; ++j)
      for (stf_int i = 0; i < dx; ++i) v.push_back(start + X * Y * k + X * j + i);
  return v;
}

void expect_box(const Idx &v, stf_int start, stf_int dx, stf_int dy, stf_int dz, stf_int X, stf_int Y) {
  const IndexList l = analyze(v);
  ASSERT_EQ(l.kind, IndexKind::strided);
  EXPECT_EQ(l.start, start);
  EXPECT_EQ(l.dx, dx);
  EXPECT_EQ(l.dy, dy);
  EXPECT_EQ(l.dz, dz);
  EXPECT_EQ(l.X, X);
  EXPECT_EQ(l.Y, Y);
  EXPECT_EQ(l.idx, nullptr);
  EXPECT_FALSE(l.has_duplicates);
  expect_describes(l, v);
}

void expect_indexed(const Idx &v, bool dups = false) {
  const IndexList l = analyze(v);
  EXPECT_EQ(l.kind, IndexKind::indexed);
  EXPECT_EQ(l.idx, v.data());
  EXPECT_EQ(l.has_duplicates, dups);
  expect_describes(l, v);
}

TEST(IndexAnalysis, Contiguous) {
  for (const Idx &v : {Idx{}, Idx{7}, Idx{0, 1, 2, 3}, Idx{5, 6, 7, 8, 9, 10, 11}}) {
    const IndexList l = analyze(v);
    EXPECT_EQ(l.kind, IndexKind::contiguous);
    EXPECT_EQ(l.idx, nullptr);
    if (!v.empty()) {
      EXPECT_EQ(l.start, v[0]);
    }
    expect_describes(l, v);
  }
}

TEST(IndexAnalysis, CraftedBoxes) {
  expect_box({0, 1, 2, 4, 5, 6}, 0, 3, 2, 1, 4, 2);          // 2D: two rows of 3, stride 4
  expect_box({3, 10, 17, 24}, 3, 1, 4, 1, 7, 4);             // one column (dx == 1)
  expect_box({0, 2}, 0, 1, 2, 1, 2, 2);                      // two units with a gap
  expect_box(box(5, 2, 3, 4, 6, 5), 5, 2, 3, 4, 6, 5);       // 3D
  expect_box(box(0, 1, 2, 3, 4, 5), 0, 1, 2, 3, 4, 5);       // 3D column stack
  expect_box(box(9, 3, 1, 4, 8, 2), 9, 3, 4, 1, 16, 4);      // one row per plane reads as 2D
  expect_box(box(0, 2, 3, 2, 5, 3), 0, 2, 6, 1, 5, 6);       // Y == dy: planes abut, 2D
}

// Faces, edges, corners and the interior of a ghosted nx*ny*nz box, as slots
// of the (nx+2)*(ny+2)*(nz+2) array and as offsets of the owned nx*ny*nz cells.
TEST(IndexAnalysis, StructuredGridHalos) {
  const stf_int nx = 5, ny = 4, nz = 3, X = nx + 2, Y = ny + 2;
  auto slot = [&](stf_int i, stf_int j, stf_int k) { return i + X * (j + Y * k); };
  auto cell = [&](stf_int i, stf_int j, stf_int k) { return i + nx * (j + ny * k); };
  Idx west, south, bottom, interior, edge_z, edge_y, owned_x, owned_y, owned_z;
  for (stf_int k = 1; k <= nz; ++k)
    for (stf_int j = 1; j <= ny; ++j) west.push_back(slot(0, j, k));
  for (stf_int k = 1; k <= nz; ++k)
    for (stf_int i = 1; i <= nx; ++i) south.push_back(slot(i, 0, k));
  for (stf_int j = 1; j <= ny; ++j)
    for (stf_int i = 1; i <= nx; ++i) bottom.push_back(slot(i, j, 0));
  for (stf_int k = 1; k <= nz; ++k)
    for (stf_int j = 1; j <= ny; ++j)
      for (stf_int i = 1; i <= nx; ++i) interior.push_back(slot(i, j, k));
  for (stf_int k = 1; k <= nz; ++k) edge_z.push_back(slot(0, 0, k));
  for (stf_int j = 1; j <= ny; ++j) edge_y.push_back(slot(0, j, 0));
  for (stf_int k = 0; k < nz; ++k)
    for (stf_int j = 0; j < ny; ++j) owned_x.push_back(cell(nx - 1, j, k));
  for (stf_int k = 0; k < nz; ++k)
    for (stf_int i = 0; i < nx; ++i) owned_y.push_back(cell(i, 0, k));
  for (stf_int j = 0; j < ny; ++j)
    for (stf_int i = 0; i < nx; ++i) owned_z.push_back(cell(i, j, nz - 1));

  expect_box(west, slot(0, 1, 1), 1, ny, nz, X, Y);
  expect_box(south, slot(1, 0, 1), nx, nz, 1, X * Y, nz);
  expect_box(bottom, slot(1, 1, 0), nx, ny, 1, X, ny);
  expect_box(interior, slot(1, 1, 1), nx, ny, nz, X, Y);
  expect_box(edge_z, slot(0, 0, 1), 1, nz, 1, X * Y, nz);
  expect_box(edge_y, slot(0, 1, 0), 1, ny, 1, X, ny);
  expect_box(owned_x, nx - 1, 1, ny * nz, 1, nx, ny * nz);  // planes abut: one column
  expect_box(owned_y, 0, nx, nz, 1, nx * ny, nz);
  const IndexList top = analyze(owned_z);  // a whole plane of the owned cells
  EXPECT_EQ(top.kind, IndexKind::contiguous);
  expect_describes(top, owned_z);
  const IndexList corner = analyze(Idx{slot(nx + 1, ny + 1, nz + 1)});
  EXPECT_EQ(corner.kind, IndexKind::contiguous);
}

TEST(IndexAnalysis, NearMissesStayIndexed) {
  expect_indexed({0, 1, 2, 3, 5, 6, 7});                 // a gap of one: rows of 4 then 3
  expect_indexed({0, 1, 2, 4, 5, 6, 8, 9});              // last row short
  expect_indexed({0, 2, 4, 7});                          // the stride changes
  expect_indexed({0, 1, 4, 5, 9, 10});                   // row stride 4, then 5
  expect_indexed({0, 1, 2, 2, 3, 4}, true);              // a row that wraps back onto the last one
  expect_indexed({4, 5, 6, 0, 1, 2});                    // rows going backwards
  expect_indexed({3, 2, 1, 0});                          // descending
  expect_indexed({0, 1, 5, 6, 2, 3, 7, 8});              // planes interleaved with rows
  Idx planes = box(0, 2, 2, 3, 4, 3);
  planes.back() += 1;                                    // last unit off by one
  expect_indexed(planes);
  Idx skew = box(0, 2, 2, 2, 5, 3);
  for (std::size_t i = 4; i < skew.size(); ++i) skew[i] += 1;  // plane stride not a multiple of X
  expect_indexed(skew);
  expect_indexed(box(0, 2, 3, 2, 4, 2), true);           // Y < dy: planes overlap
  expect_indexed({5, 5}, true);                          // the same unit twice
  expect_indexed({0, 1, 2, 1}, true);
  expect_indexed({9, 3, 7, 3, 9}, true);
}

TEST(IndexAnalysis, OptimisationOffKeepsArrays) {
  for (const Idx &v : {Idx{0, 1, 2, 3}, box(0, 2, 3, 2, 4, 5), Idx{1, 1}, Idx{}}) {
    const IndexList l = analyze(v, false);
    EXPECT_EQ(l.kind, IndexKind::indexed);
    EXPECT_EQ(l.idx, v.data());
    EXPECT_EQ(l.has_duplicates, v.size() == 2);
    expect_describes(l, v);
  }
}

// Random boxes (found exactly), random permutations and random lists with
// repeats (never mistaken for a pattern), each described exactly.
TEST(IndexAnalysis, Random) {
  std::mt19937 rng(4242);
  auto below = [&](stf_int n) { return static_cast<stf_int>(rng() % static_cast<unsigned>(n)); };
  for (int t = 0; t < 500; ++t) {
    const stf_int dx = 1 + below(6), dy = 1 + below(5), dz = 1 + below(4);
    const stf_int X = dx + 1 + below(4), Y = dy + 1 + below(3), start = below(50);
    const Idx v = box(start, dx, dy, dz, X, Y);
    const IndexList l = analyze(v);
    expect_describes(l, v);
    if (dy * dz == 1) {  // a single row
      EXPECT_EQ(l.kind, IndexKind::contiguous);
    } else {
      EXPECT_EQ(l.kind, IndexKind::strided) << "dx " << dx << " dy " << dy << " dz " << dz;
      EXPECT_EQ(l.idx, nullptr);
    }

    Idx perm(2 + below(60));
    std::iota(perm.begin(), perm.end(), below(10));
    std::shuffle(perm.begin(), perm.end(), rng);
    const IndexList p = analyze(perm);
    expect_describes(p, perm);
    EXPECT_FALSE(p.has_duplicates);
    if (p.kind != IndexKind::indexed) {  // a shuffle may come out sorted; then it must be a range
      EXPECT_TRUE(std::is_sorted(perm.begin(), perm.end()));
      EXPECT_EQ(p.kind, IndexKind::contiguous);
    }

    Idx dups(2 + below(40));
    for (stf_int &x : dups) x = below(30);
    dups[below(static_cast<stf_int>(dups.size()))] = dups[0];
    dups[1] = dups[0];
    const IndexList d = analyze(dups);
    EXPECT_EQ(d.kind, IndexKind::indexed);
    EXPECT_TRUE(d.has_duplicates);
    expect_describes(d, dups);
  }
}

}  // namespace
}  // namespace stf
