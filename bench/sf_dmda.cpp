// sf_dmda: structured-grid ghost exchanges, starforest against hand-written MPI.
//
// The grid is apps' stf_grid (periodic by default, near-square process grid
// from MPI_Dims_create): global-to-local (owned box -> ghosted box,
// REPLACE) and local-to-global (ghosted box -> owned box, SUM), the
// operations a PETSc DMDA user calls every time step. Cases: 2D 5-point star,
// 3D 7-point star and 3D 27-point box stencils; global sizes n^d from --min-n
// up to --max-n2 / --max-n3, doubling.
//
// Baselines, measured in the same run on the same vectors:
//   mpi_isend     per-neighbour index lists, pack, MPI_Isend/MPI_Irecv,
//                 wait, unpack (the interior and periodic self-images are
//                 local copies, row by row);
//   mpi_neighbor  the same lists with one blocking MPI_Neighbor_alltoallv on
//                 a distributed-graph communicator per direction.
// The baselines learn the decomposition from the grid's owned boxes only
// (gathered from every rank) and find owners themselves. Before timing, the
// three implementations' local vectors (and global vectors after
// local-to-global) are compared value by value, and every ghost value is
// compared with its owner's value; any mismatch aborts the run.
#include <starforest.h>
#include <stf_apps.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench_common.h"
#include "check.h"

namespace {

constexpr int kTag = 23;

struct Case {
  const char *name;
  int dim;
  stf_stencil stencil;
};
const Case kCases[] = {{"2d5", 2, STF_STENCIL_STAR}, {"3d7", 3, STF_STENCIL_STAR}, {"3d27", 3, STF_STENCIL_BOX}};

const char *const kImpls[] = {"starforest", "mpi_isend", "mpi_neighbor"};
constexpr int kNumImpls = 3;
const char *const kOps[] = {"global_to_local", "local_to_global"};

struct Options {
  std::string cases = "2d5,3d7,3d27";
  int64_t min_n = 4, max_n2 = 4096, max_n3 = 128;
  int dof = 1, width = 1, rounds = 5;
  double min_ms = 10;  // length of one timed round of one implementation
  bool periodic = true;
  std::string transport = "basic";
  std::string json;
};

void usage(const char *prog) {
  std::printf(
      "usage: mpiexec -n N %s [options]\n"
      "  Structured-grid global-to-local and local-to-global (apps' stf_grid) against\n"
      "  hand-written MPI_Isend/Irecv and MPI_Neighbor_alltoallv exchanges.\n"
      "  --cases LIST     comma-separated from 2d5,3d7,3d27 (default all)\n"
      "  --min-n N        smallest global points per direction (default 4)\n"
      "  --max-n2 N       largest for 2D (default 4096)   --max-n3 N  for 3D (default 128)\n"
      "  --dof D          doubles per point (default 1)  --width W  ghost width (default 1)\n"
      "  --nonperiodic    non-periodic domain (default periodic)\n"
      "  --rounds R       interleaved rounds per implementation (default 5)\n"
      "  --min-ms T       length of one round in ms (default 10)\n"
      "  --transport T    starforest transport (a stf_set_type name; default basic)\n"
      "  --quick          tiny sizes, one short round: a check that it runs (CI)\n"
      "  --json FILE      also write the results as a JSON array\n",
      prog);
}

// Returns 0 to run, 1 to exit successfully (--help), 2 on a bad argument.
int parse(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    bool v = i + 1 < argc;
    if (a == "--help" || a == "-h") return 1;
    if (a == "--cases" && v) o.cases = argv[++i];
    else if (a == "--min-n" && v) o.min_n = std::atol(argv[++i]);
    else if (a == "--max-n2" && v) o.max_n2 = std::atol(argv[++i]);
    else if (a == "--max-n3" && v) o.max_n3 = std::atol(argv[++i]);
    else if (a == "--dof" && v) o.dof = std::atoi(argv[++i]);
    else if (a == "--width" && v) o.width = std::atoi(argv[++i]);
    else if (a == "--nonperiodic") o.periodic = false;
    else if (a == "--rounds" && v) o.rounds = std::atoi(argv[++i]);
    else if (a == "--min-ms" && v) o.min_ms = std::atof(argv[++i]);
    else if (a == "--transport" && v) o.transport = argv[++i];
    else if (a == "--json" && v) o.json = argv[++i];
    else if (a == "--quick") o.max_n2 = 8, o.max_n3 = 8, o.rounds = 1, o.min_ms = 0;
    else {
      std::fprintf(stderr, "sf_dmda: bad argument '%s' (try --help)\n", a.c_str());
      return 2;
    }
  }
  if (o.min_n < 1 || o.dof < 1 || o.width < 1 || o.rounds < 1 || o.min_ms < 0) {
    std::fprintf(stderr, "sf_dmda: need --min-n, --dof, --width, --rounds >= 1 and --min-ms >= 0\n");
    return 2;
  }
  for (size_t p = 0; p <= o.cases.size();) {
    size_t q = std::min(o.cases.find(',', p), o.cases.size());
    std::string c = o.cases.substr(p, q - p);
    if (std::none_of(std::begin(kCases), std::end(kCases), [&](const Case &k) { return c == k.name; })) {
      std::fprintf(stderr, "sf_dmda: unknown case '%s' (2d5, 3d7, 3d27)\n", c.c_str());
      return 2;
    }
    p = q + 1;
  }
  return 0;
}

bool case_selected(const Options &o, const char *name) {
  std::string list = "," + o.cases + ",";
  return list.find("," + std::string(name) + ",") != std::string::npos;
}

// The decomposition as the baselines see it: every rank's owned box.
struct Layout {
  int dim;
  std::array<int64_t, 3> n;
  std::array<int64_t, 3> own_start, own_size, ghost_start, ghost_size;  // this rank's
  std::vector<std::array<int64_t, 6>> boxes;                            // every rank's start, size
  std::array<std::vector<int64_t>, 3> cuts;  // distinct owned starts per axis, sorted
  std::vector<int> rank_at;                  // process-grid coordinate -> rank

  int coord(int a, int64_t x) const {
    return static_cast<int>(std::upper_bound(cuts[a].begin(), cuts[a].end(), x) - cuts[a].begin()) - 1;
  }
  // Owner rank and its local point of global point x (already wrapped).
  stf_node owner(const std::array<int64_t, 3> &x) const {
    int c0 = coord(0, x[0]), c1 = coord(1, x[1]), c2 = coord(2, x[2]);
    int r = rank_at[(c2 * cuts[1].size() + c1) * cuts[0].size() + c0];
    const auto &b = boxes[r];
    int64_t off = ((x[2] - b[2]) * b[4] + (x[1] - b[1])) * b[3] + (x[0] - b[0]);
    return stf_node{r, static_cast<stf_int>(off)};
  }
  int64_t owned_points() const { return own_size[0] * own_size[1] * own_size[2]; }
  int64_t ghosted_points() const { return ghost_size[0] * ghost_size[1] * ghost_size[2]; }
};

Layout make_layout(stf_grid grid, int dim, int64_t n, MPI_Comm comm) {
  Layout L;
  L.dim = dim;
  L.n = {n, n, dim == 3 ? n : 1};
  int64_t os[3], oz[3], gs[3], gz[3];
  CHECK_STF(stf_grid_get_boxes(grid, os, oz, gs, gz));
  for (int a = 0; a < 3; a++) L.own_start[a] = os[a], L.own_size[a] = oz[a], L.ghost_start[a] = gs[a], L.ghost_size[a] = gz[a];
  int size;
  MPI_Comm_size(comm, &size);
  std::array<int64_t, 6> mine{os[0], os[1], os[2], oz[0], oz[1], oz[2]};
  L.boxes.resize(size);
  MPI_Allgather(mine.data(), 6, MPI_INT64_T, L.boxes.data(), 6, MPI_INT64_T, comm);
  for (int a = 0; a < 3; a++) {
    for (const auto &b : L.boxes) L.cuts[a].push_back(b[a]);
    std::sort(L.cuts[a].begin(), L.cuts[a].end());
    L.cuts[a].erase(std::unique(L.cuts[a].begin(), L.cuts[a].end()), L.cuts[a].end());
  }
  L.rank_at.assign(L.cuts[0].size() * L.cuts[1].size() * L.cuts[2].size(), -1);
  for (int r = 0; r < size; r++) {
    const auto &b = L.boxes[r];
    L.rank_at[(L.coord(2, b[2]) * L.cuts[1].size() + L.coord(1, b[1])) * L.cuts[0].size() + L.coord(0, b[0])] = r;
  }
  return L;
}

// Calls f(local point, wrapped global point) for every point of the ghosted
// box that the stencil reaches (owned points included).
template <class F>
void for_each_reached(const Layout &L, stf_stencil stencil, F &&f) {
  const auto &gs = L.ghost_start, &gz = L.ghost_size;
  for (int64_t k = 0; k < gz[2]; k++)
    for (int64_t j = 0; j < gz[1]; j++)
      for (int64_t i = 0; i < gz[0]; i++) {
        std::array<int64_t, 3> x{gs[0] + i, gs[1] + j, gs[2] + k};
        int outside = 0;
        for (int a = 0; a < 3; a++) {
          outside += x[a] < L.own_start[a] || x[a] >= L.own_start[a] + L.own_size[a];
          x[a] = ((x[a] % L.n[a]) + L.n[a]) % L.n[a];
        }
        if (stencil == STF_STENCIL_STAR && outside > 1) continue;
        f(static_cast<stf_int>((k * gz[1] + j) * gz[0] + i), x);
      }
}

// Per-peer index lists of the exchange (in points; dof doubles each). recv_*:
// ghosted-box points filled from each owner; send_*: owned points each peer
// needs, in the peer's order; self_*: owned point -> ghosted point copies.
struct Lists {
  std::vector<int> recv_peers, recv_off{0}, send_peers, send_off{0};
  std::vector<stf_int> recv_idx, send_idx, self_from, self_to;
  std::vector<size_t> self_runs;  // starts of runs in self_*, then self_from.size()
};

Lists make_lists(const Layout &L, stf_stencil stencil, MPI_Comm comm) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::vector<std::vector<std::pair<stf_int, stf_int>>> by_owner(size);  // (local, owner's point)
  Lists s;
  for_each_reached(L, stencil, [&](stf_int local, const std::array<int64_t, 3> &x) {
    stf_node o = L.owner(x);
    if (o.rank == rank) {
      s.self_from.push_back(o.index);
      s.self_to.push_back(local);
    } else {
      by_owner[o.rank].push_back({local, o.index});
    }
  });
  for (size_t i = 0; i < s.self_from.size(); i++)
    if (i == 0 || s.self_from[i] != s.self_from[i - 1] + 1 || s.self_to[i] != s.self_to[i - 1] + 1)
      s.self_runs.push_back(i);
  s.self_runs.push_back(s.self_from.size());
  // Tell each owner which of its points I need, in my order.
  std::vector<int> want(size), give(size), wdispl(size + 1, 0), gdispl(size + 1, 0);
  std::vector<stf_int> wanted;
  for (int p = 0; p < size; p++) {
    want[p] = static_cast<int>(by_owner[p].size());
    wdispl[p + 1] = wdispl[p] + want[p];
    if (want[p]) s.recv_peers.push_back(p), s.recv_off.push_back(wdispl[p + 1]);
    for (auto &e : by_owner[p]) s.recv_idx.push_back(e.first), wanted.push_back(e.second);
  }
  MPI_Alltoall(want.data(), 1, MPI_INT, give.data(), 1, MPI_INT, comm);
  for (int p = 0; p < size; p++) {
    gdispl[p + 1] = gdispl[p] + give[p];
    if (give[p]) s.send_peers.push_back(p), s.send_off.push_back(gdispl[p + 1]);
  }
  s.send_idx.resize(gdispl[size]);
  MPI_Alltoallv(wanted.data(), want.data(), wdispl.data(), MPI_INT, s.send_idx.data(), give.data(), gdispl.data(),
                MPI_INT, comm);
  return s;
}

void pack(const std::vector<stf_int> &idx, int dof, const double *from, double *buf) {
  for (size_t i = 0; i < idx.size(); i++)
    for (int d = 0; d < dof; d++) buf[i * dof + d] = from[static_cast<size_t>(idx[i]) * dof + d];
}

template <bool Add>
void unpack(const std::vector<stf_int> &idx, int dof, const double *buf, double *to) {
  for (size_t i = 0; i < idx.size(); i++)
    for (int d = 0; d < dof; d++) {
      double &t = to[static_cast<size_t>(idx[i]) * dof + d];
      t = Add ? t + buf[i * dof + d] : buf[i * dof + d];
    }
}

// The local part (owned box -> its place in the ghosted box, and periodic
// self-images) as a hand-written code does it: row by row. Runs are maximal
// stretches where both sides advance by one point.
template <bool Add>
void self_copy(const Lists &s, int dof, const double *from, double *to, bool forward) {
  const auto &src = forward ? s.self_from : s.self_to;
  const auto &dst = forward ? s.self_to : s.self_from;
  for (size_t r = 0; r + 1 < s.self_runs.size(); r++) {
    size_t first = s.self_runs[r], len = (s.self_runs[r + 1] - first) * dof;
    const double *f = from + static_cast<size_t>(src[first]) * dof;
    double *t = to + static_cast<size_t>(dst[first]) * dof;
    if (Add)
      for (size_t i = 0; i < len; i++) t[i] += f[i];
    else
      std::memcpy(t, f, len * sizeof(double));
  }
}

// The exchange with MPI_Irecv / pack + MPI_Isend / wait + unpack.
class IsendExchange {
 public:
  IsendExchange(const Lists &s, int dof, MPI_Comm comm)
      : s_(s), dof_(dof), comm_(comm), rbuf_(s.recv_idx.size() * dof), sbuf_(s.send_idx.size() * dof),
        reqs_(s.recv_peers.size() + s.send_peers.size()) {}

  void global_to_local(const double *global, double *local) {
    exchange(s_.send_peers, s_.send_off, s_.send_idx, sbuf_, s_.recv_peers, s_.recv_off, rbuf_, global);
    self_copy<false>(s_, dof_, global, local, true);
    finish<false>(s_.recv_peers.size(), s_.recv_idx, rbuf_, local);
  }
  void local_to_global(const double *local, double *global) {
    exchange(s_.recv_peers, s_.recv_off, s_.recv_idx, rbuf_, s_.send_peers, s_.send_off, sbuf_, local);
    self_copy<true>(s_, dof_, local, global, false);
    finish<true>(s_.send_peers.size(), s_.send_idx, sbuf_, global);
  }

 private:
  // Posts receives into `in`, packs `from` into `out` per peer and sends it.
  void exchange(const std::vector<int> &to, const std::vector<int> &to_off, const std::vector<stf_int> &idx,
                std::vector<double> &out, const std::vector<int> &from_peers, const std::vector<int> &from_off,
                std::vector<double> &in, const double *from) {
    size_t r = 0;
    for (size_t p = 0; p < from_peers.size(); p++, r++)
      MPI_Irecv(in.data() + from_off[p] * dof_, (from_off[p + 1] - from_off[p]) * dof_, MPI_DOUBLE, from_peers[p],
                kTag, comm_, &reqs_[r]);
    for (size_t p = 0; p < to.size(); p++, r++) {
      for (int i = to_off[p]; i < to_off[p + 1]; i++)
        for (int d = 0; d < dof_; d++) out[static_cast<size_t>(i) * dof_ + d] = from[static_cast<size_t>(idx[i]) * dof_ + d];
      MPI_Isend(out.data() + to_off[p] * dof_, (to_off[p + 1] - to_off[p]) * dof_, MPI_DOUBLE, to[p], kTag, comm_,
                &reqs_[r]);
    }
  }
  template <bool Add>
  void finish(size_t nrecv, const std::vector<stf_int> &idx, const std::vector<double> &in, double *to) {
    MPI_Waitall(static_cast<int>(nrecv), reqs_.data(), MPI_STATUSES_IGNORE);
    unpack<Add>(idx, dof_, in.data(), to);
    MPI_Waitall(static_cast<int>(reqs_.size() - nrecv), reqs_.data() + nrecv, MPI_STATUSES_IGNORE);
  }

  const Lists &s_;
  int dof_;
  MPI_Comm comm_;
  std::vector<double> rbuf_, sbuf_;
  std::vector<MPI_Request> reqs_;
};

// The exchange with one MPI_Neighbor_alltoallv per call.
class NeighborExchange {
 public:
  NeighborExchange(const Lists &s, int dof, MPI_Comm comm)
      : s_(s), dof_(dof), rbuf_(s.recv_idx.size() * dof), sbuf_(s.send_idx.size() * dof) {
    // Forward: sources = owners I receive from, destinations = ranks I send to.
    auto graph = [&](const std::vector<int> &in, const std::vector<int> &out, MPI_Comm *c) {
      MPI_Dist_graph_create_adjacent(comm, static_cast<int>(in.size()), in.data(), MPI_UNWEIGHTED,
                                     static_cast<int>(out.size()), out.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, c);
    };
    graph(s.recv_peers, s.send_peers, &fwd_);
    graph(s.send_peers, s.recv_peers, &bwd_);
    counts(s.recv_off, rcount_, rdispl_);
    counts(s.send_off, scount_, sdispl_);
  }
  ~NeighborExchange() {
    MPI_Comm_free(&fwd_);
    MPI_Comm_free(&bwd_);
  }
  NeighborExchange(const NeighborExchange &) = delete;
  NeighborExchange &operator=(const NeighborExchange &) = delete;

  void global_to_local(const double *global, double *local) {
    pack(s_.send_idx, dof_, global, sbuf_.data());
    self_copy<false>(s_, dof_, global, local, true);
    MPI_Neighbor_alltoallv(sbuf_.data(), scount_.data(), sdispl_.data(), MPI_DOUBLE, rbuf_.data(), rcount_.data(),
                           rdispl_.data(), MPI_DOUBLE, fwd_);
    unpack<false>(s_.recv_idx, dof_, rbuf_.data(), local);
  }
  void local_to_global(const double *local, double *global) {
    pack(s_.recv_idx, dof_, local, rbuf_.data());
    self_copy<true>(s_, dof_, local, global, false);
    MPI_Neighbor_alltoallv(rbuf_.data(), rcount_.data(), rdispl_.data(), MPI_DOUBLE, sbuf_.data(), scount_.data(),
                           sdispl_.data(), MPI_DOUBLE, bwd_);
    unpack<true>(s_.send_idx, dof_, sbuf_.data(), global);
  }

 private:
  void counts(const std::vector<int> &off, std::vector<int> &count, std::vector<int> &displ) const {
    for (size_t p = 0; p + 1 < off.size(); p++) {
      count.push_back((off[p + 1] - off[p]) * dof_);
      displ.push_back(off[p] * dof_);
    }
  }

  const Lists &s_;
  int dof_;
  std::vector<double> rbuf_, sbuf_;
  std::vector<int> rcount_, rdispl_, scount_, sdispl_;
  MPI_Comm fwd_ = MPI_COMM_NULL, bwd_ = MPI_COMM_NULL;
};

// Everything one (case, n) needs: the grid, the baselines and the vectors.
struct Setup {
  stf_grid grid = nullptr;
  Layout L;
  Lists lists;
  int dof;
  std::vector<double> global, local;

  void run(int impl, int op, IsendExchange &isend, NeighborExchange &nbr) {
    double *g = global.data(), *l = local.data();
    if (impl == 0) CHECK_STF(op == 0 ? stf_grid_global_to_local(grid, g, l) : stf_grid_local_to_global(grid, l, g));
    else if (impl == 1) op == 0 ? isend.global_to_local(g, l) : isend.local_to_global(l, g);
    else op == 0 ? nbr.global_to_local(g, l) : nbr.local_to_global(l, g);
  }
};

// Value of dof d of global point x: unique, and an integer so that sums are exact.
double point_value(const Layout &L, const std::array<int64_t, 3> &x, int dof, int d) {
  return static_cast<double>(((x[2] * L.n[1] + x[1]) * L.n[0] + x[0]) * dof + d + 1);
}

void fill_global(Setup &s) {
  const Layout &L = s.L;
  size_t p = 0;
  for (int64_t k = 0; k < L.own_size[2]; k++)
    for (int64_t j = 0; j < L.own_size[1]; j++)
      for (int64_t i = 0; i < L.own_size[0]; i++, p++)
        for (int d = 0; d < s.dof; d++)
          s.global[p * s.dof + d] =
              point_value(L, {L.own_start[0] + i, L.own_start[1] + j, L.own_start[2] + k}, s.dof, d);
}

// Counts differences between two vectors; reports the first one.
long compare(const std::vector<double> &a, const std::vector<double> &b, const char *what, const char *impl, int rank) {
  long bad = 0;
  for (size_t i = 0; i < a.size(); i++)
    if (a[i] != b[i] && bad++ == 0)
      std::fprintf(stderr, "sf_dmda: rank %d: %s: %s differs from starforest at entry %zu: %g, expected %g\n", rank,
                   what, impl, i, b[i], a[i]);
  return bad;
}

// Runs each implementation once on the same input and compares the results.
void verify(Setup &s, const Case &c, IsendExchange &isend, NeighborExchange &nbr, int rank) {
  long bad = 0;
  std::vector<double> g2l[kNumImpls], l2g[kNumImpls];
  std::vector<double> local_in(s.local.size());
  for (size_t i = 0; i < local_in.size(); i++) local_in[i] = static_cast<double>(i % 7 + 1);
  for (int impl = 0; impl < kNumImpls; impl++) {
    fill_global(s);
    std::fill(s.local.begin(), s.local.end(), -1.0);
    s.run(impl, 0, isend, nbr);
    g2l[impl] = s.local;
    s.local = local_in;
    s.run(impl, 1, isend, nbr);
    l2g[impl] = s.global;
  }
  // Every point the stencil reaches holds its owner's value.
  for_each_reached(s.L, c.stencil, [&](stf_int local, const std::array<int64_t, 3> &x) {
    for (int d = 0; d < s.dof; d++) {
      double want = point_value(s.L, x, s.dof, d), got = g2l[0][static_cast<size_t>(local) * s.dof + d];
      if (got != want && bad++ == 0)
        std::fprintf(stderr, "sf_dmda: rank %d: %s: local point %d dof %d (global %lld,%lld,%lld) is %g, expected %g\n",
                     rank, c.name, local, d, (long long)x[0], (long long)x[1], (long long)x[2], got, want);
    }
  });
  for (int impl = 1; impl < kNumImpls; impl++) {
    bad += compare(g2l[0], g2l[impl], "global_to_local", kImpls[impl], rank);
    bad += compare(l2g[0], l2g[impl], "local_to_global", kImpls[impl], rank);
  }
  long total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (total) {
    if (rank == 0) std::fprintf(stderr, "sf_dmda: %s: %ld wrong values\n", c.name, total);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Options opt;
  int p = parse(argc, argv, opt);
  if (p == 1 && rank == 0) usage(argv[0]);
  if (p) {
    MPI_Finalize();
    return p == 1 ? 0 : 2;
  }
  CHECK_STF(stf_set_options(("-stf_type " + opt.transport).c_str()));

  bench::JsonLog log;
  if (rank == 0) {
    std::printf("# sf_dmda: %d ranks, dof %d, width %d, %s, starforest transport %s\n", size, opt.dof, opt.width,
                opt.periodic ? "periodic" : "non-periodic", opt.transport.c_str());
    std::printf("# us per call on the slowest rank, median of %d interleaved rounds; ratio = starforest / baseline\n",
                opt.rounds);
    std::printf("%-5s %6s %-16s %10s %10s %10s %9s %9s\n", "case", "n", "op", "sf us", "isend us", "nbr us",
                "sf/isend", "sf/nbr");
  }
  for (const Case &c : kCases) {
    if (!case_selected(opt, c.name)) continue;
    const int64_t max_n = c.dim == 2 ? opt.max_n2 : opt.max_n3;
    for (int64_t n = opt.min_n; n <= max_n; n *= 2) {
      stf_grid_desc desc{};
      desc.dim = c.dim;
      desc.n[0] = desc.n[1] = desc.n[2] = n;
      for (int a = 0; a < 3; a++) desc.periodic[a] = opt.periodic;
      desc.stencil = c.stencil;
      desc.width = opt.width;
      desc.dof = opt.dof;
      Setup s;
      s.dof = opt.dof;
      int rc = stf_grid_create(MPI_COMM_WORLD, &desc, &s.grid);
      if (rc) {  // e.g. fewer points than ranks in a direction: skip this size
        if (rank == 0) std::printf("%-5s %6lld skipped: %s\n", c.name, (long long)n, stf_last_error_message());
        continue;
      }
      s.L = make_layout(s.grid, c.dim, n, MPI_COMM_WORLD);
      s.lists = make_lists(s.L, c.stencil, MPI_COMM_WORLD);
      s.global.assign(s.L.owned_points() * s.dof, 0.0);
      s.local.assign(s.L.ghosted_points() * s.dof, 0.0);
      IsendExchange isend(s.lists, s.dof, MPI_COMM_WORLD);
      NeighborExchange nbr(s.lists, s.dof, MPI_COMM_WORLD);
      verify(s, c, isend, nbr, rank);

      for (int op = 0; op < 2; op++) {
        // Calls per round: enough for --min-ms on the slowest implementation.
        long iters = 1;
        for (int impl = 0; impl < kNumImpls; impl++) {
          double us = 1e6 * bench::time_per_call(MPI_COMM_WORLD, 3, [&] { s.run(impl, op, isend, nbr); });
          iters = std::max(iters, static_cast<long>(opt.min_ms * 1e3 / std::max(us, 1e-3)));
        }
        iters = std::min(iters, 100000L);
        std::vector<std::function<void()>> calls;
        for (int impl = 0; impl < kNumImpls; impl++) calls.push_back([&, impl] { s.run(impl, op, isend, nbr); });
        std::vector<bench::Stats> st = bench::time_rotating(MPI_COMM_WORLD, opt.rounds, iters, calls);
        long long halo_bytes = static_cast<long long>(s.lists.recv_idx.size()) * s.dof * sizeof(double);
        if (rank == 0) {
          std::printf("%-5s %6lld %-16s %10.2f %10.2f %10.2f %9.2f %9.2f\n", c.name, (long long)n, kOps[op],
                      st[0].us, st[1].us, st[2].us, st[0].us / st[1].us, st[0].us / st[2].us);
          std::fflush(stdout);
          for (int impl = 0; impl < kNumImpls; impl++) {
            bench::Record rec;
            rec.timing("sf_dmda", kImpls[impl], n, size, st[impl])
                .str("case", c.name)
                .str("op", kOps[op])
                .num("ratio_sf", st[0].us / st[impl].us)
                .integer("halo_bytes_rank0", halo_bytes)
                .integer("dof", opt.dof)
                .integer("width", opt.width)
                .boolean("periodic", opt.periodic)
                .str("transport", impl == 0 ? opt.transport : std::string("none"))
                .str("memory", "host");
            log.add(rec);
          }
        }
      }
      CHECK_STF(stf_grid_destroy(&s.grid));
    }
  }
  int rc = 0;
  if (rank == 0 && !opt.json.empty() && !log.write(opt.json)) rc = 1;
  MPI_Finalize();
  return rc;
}
