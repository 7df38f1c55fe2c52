#include "plan/index_analysis.h"

#include <algorithm>
#include <vector>

namespace stf {
namespace {

bool has_duplicates(const stf_int *idx, stf_int n) {
  std::vector<stf_int> sorted(idx, idx + n);
  std::sort(sorted.begin(), sorted.end());
  return std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end();
}

// idx[0..n) as start + X*Y*k + X*j + i, or false. The shape is forced, so a
// greedy reading finds it: dx is the first run of consecutive units (X > dx
// ends it), dy the rows that follow at stride X (a plane stride Y > dy ends
// it), dz what remains; then every index is checked against the formula.
// Needs n >= 2 and idx not contiguous.
bool find_box(const stf_int *idx, stf_int n, IndexList *out) {
  using Wide = long long;  // differences of two stf_int
  const Wide start = idx[0];
  stf_int dx = 1;
  while (dx < n && idx[dx] == start + dx) ++dx;
  const Wide X = idx[dx] - start;
  if (X <= dx) return false;  // the next row starts inside this one, or before it
  stf_int dy = 1;
  while (static_cast<Wide>(dy) * dx < n && idx[dy * dx] == start + X * dy) ++dy;
  const stf_int plane = dx * dy;  // <= n
  if (n % plane != 0) return false;
  const stf_int dz = n / plane;
  Wide Y = dy;
  if (dz > 1) {
    const Wide XY = idx[plane] - start;
    if (XY % X != 0) return false;  // planes not aligned to rows: not a box in an array
    Y = XY / X;
    if (Y <= dy) return false;      // planes overlap (Y == dy would have extended dy)
  }
  stf_int pos = 0;
  for (stf_int k = 0; k < dz; ++k)
    for (stf_int j = 0; j < dy; ++j) {
      const Wide row = start + X * Y * k + X * j;
      for (stf_int i = 0; i < dx; ++i, ++pos)
        if (idx[pos] != row + i) return false;
    }
  *out = IndexList::box(idx[0], dx, dy, dz, static_cast<stf_int>(X), static_cast<stf_int>(Y));
  return true;
}

}  // namespace

IndexList analyze_indices(const stf_int *idx, stf_int n, bool optimise) {
  if (!optimise) return IndexList::array(idx, n, has_duplicates(idx, n));
  if (n <= 0) return IndexList::range(0, 0);
  stf_int run = 1;
  while (run < n && idx[run] == idx[0] + run) ++run;
  if (run == n) return IndexList::range(idx[0], n);
  IndexList box;
  if (find_box(idx, n, &box)) return box;
  return IndexList::array(idx, n, has_duplicates(idx, n));
}

}  // namespace stf
