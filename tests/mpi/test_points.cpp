// Mesh redistribution: test point sets in the Seq, Chunks and Rand layouts
// are partitioned by RCB and migrated. Checked: every point arrives once with
// its coordinates, in (source rank, source index) order; RCB boxes are
// balanced and pairwise disjoint.
#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <vector>

#include "check.h"
#include "stf_apps.h"

namespace {

using Point = std::array<double, 4>;  // label, coordinates

// Every rank's points, concatenated in rank order (as the oracle sees them).
std::vector<Point> gather_points(const stf_points &p, std::vector<int> *counts) {
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<Point> mine(p.n);
  for (stf_int i = 0; i < p.n; i++) {
    mine[i] = {static_cast<double>(p.labels[i]), 0, 0, 0};
    for (int a = 0; a < p.dim; a++) mine[i][1 + a] = p.coords[i * p.dim + a];
  }
  int n = p.n * 4;
  std::vector<int> ns(size), displs(size, 0);
  MPI_Allgather(&n, 1, MPI_INT, ns.data(), 1, MPI_INT, MPI_COMM_WORLD);
  for (int r = 1; r < size; r++) displs[r] = displs[r - 1] + ns[r - 1];
  std::vector<Point> all((displs[size - 1] + ns[size - 1]) / 4);
  MPI_Allgatherv(mine.data(), n, MPI_DOUBLE, all.data(), ns.data(), displs.data(), MPI_DOUBLE, MPI_COMM_WORLD);
  if (counts) {
    counts->resize(size);
    for (int r = 0; r < size; r++) (*counts)[r] = ns[r] / 4;
  }
  return all;
}

void run(stft::Checker &ck, stf_point_dist dist, int dim, int64_t n) {
  ck.context(std::string(dist == STF_DIST_SEQ ? "Seq" : dist == STF_DIST_CHUNKS ? "Chunks" : "Rand") + " dim " +
             std::to_string(dim));
  int me, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  stf_points in{}, out{};
  if (!ck.code(stf_points_create_test(MPI_COMM_WORLD, n, dim, dist, 5, &in), STF_SUCCESS, "create_test")) return;
  std::vector<int> target(in.n + 1);
  ck.code(stf_rcb_partition(MPI_COMM_WORLD, &in, target.data()), STF_SUCCESS, "rcb");
  std::vector<int> before_counts;
  std::vector<Point> before = gather_points(in, &before_counts);
  std::vector<int> all_targets(before.size() + 1), displs(size, 0);
  for (int r = 1; r < size; r++) displs[r] = displs[r - 1] + before_counts[r - 1];
  MPI_Allgatherv(target.data(), in.n, MPI_INT, all_targets.data(), before_counts.data(), displs.data(), MPI_INT,
                 MPI_COMM_WORLD);
  stf_sf sf = nullptr;
  ck.code(stf_points_migrate(MPI_COMM_WORLD, &in, target.data(), &out, &sf), STF_SUCCESS, "migrate");

  // What this rank must hold: points with target me, in (source rank, index) order.
  std::vector<Point> expect;
  for (std::size_t k = 0; k < before.size(); k++)
    if (all_targets[k] == me) expect.push_back(before[k]);
  ck.check(out.n == static_cast<stf_int>(expect.size()), "expected %zu points, got %d", expect.size(), out.n);
  for (stf_int i = 0; i < out.n && i < static_cast<stf_int>(expect.size()); i++) {
    bool same = out.labels[i] == static_cast<int64_t>(expect[i][0]);
    for (int a = 0; a < dim; a++) same = same && out.coords[i * dim + a] == expect[i][1 + a];
    if (!ck.check(same, "point %d: expected label %g, got %lld", i, expect[i][0], (long long)out.labels[i])) break;
  }
  std::vector<Point> after = gather_points(out, nullptr);
  std::vector<double> labels;
  for (const Point &p : after) labels.push_back(p[0]);
  std::sort(labels.begin(), labels.end());
  bool permutation = static_cast<int64_t>(labels.size()) == n;
  for (std::size_t k = 0; permutation && k < labels.size(); k++) permutation = labels[k] == static_cast<double>(k);
  ck.check(permutation, "labels after migration are not 0..%lld once each", (long long)n - 1);

  // RCB: balanced, and the ranks' bounding boxes do not overlap.
  ck.check(std::abs(out.n - static_cast<double>(n) / size) <= 0.02 * n / size + 4, "unbalanced: %d points for %g",
           out.n, static_cast<double>(n) / size);
  std::vector<double> box(6, 0.0);
  for (int a = 0; a < dim; a++) {
    double lo = 2, hi = -1;
    for (stf_int i = 0; i < out.n; i++) lo = std::min(lo, out.coords[i * dim + a]), hi = std::max(hi, out.coords[i * dim + a]);
    box[2 * a] = lo, box[2 * a + 1] = hi;
  }
  std::vector<double> boxes(6 * size);
  MPI_Allgather(box.data(), 6, MPI_DOUBLE, boxes.data(), 6, MPI_DOUBLE, MPI_COMM_WORLD);
  for (int r = 0; r < size; r++)
    if (r != me && out.n > 0) {
      bool apart = false;
      for (int a = 0; a < dim; a++)
        apart = apart || box[2 * a + 1] <= boxes[6 * r + 2 * a] || boxes[6 * r + 2 * a + 1] <= box[2 * a];
      ck.check(apart, "the boxes of ranks %d and %d overlap", me, r);
    }
  stf_destroy(&sf);
  stf_points_free(&in);
  stf_points_free(&out);
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  stft::Checker ck("test_points", 0);
  for (stf_point_dist dist : {STF_DIST_SEQ, STF_DIST_CHUNKS, STF_DIST_RAND})
    for (int dim : {2, 3}) run(ck, dist, dim, 2000);
  int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
