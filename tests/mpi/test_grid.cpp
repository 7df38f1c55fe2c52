// Structured grids against a serial oracle: owned boxes tile the domain,
// global-to-local fills exactly the points the stencil reaches with the
// owner's values (wrapped where periodic) and leaves the rest alone, and
// local-to-global adds every copy of a point into its owner; blocking,
// begin/end and polled with stf_test; local-to-global with insert copies
// the owned part back. 1D, 2D and 3D. The queries (sizes, process grid,
// neighbours) against the gathered boxes, and per-grid SF options.
#include <sched.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <cstdint>
#include <string>
#include <vector>

#include "check.h"
#include "stf_apps.h"

namespace {

using Box = std::array<int64_t, 6>;  // start[3], size[3]

int64_t wrap(int64_t x, int64_t n) { return ((x % n) + n) % n; }

double value(const std::array<int64_t, 3> &x, int c) {
  return static_cast<double>(((x[2] * 1000 + x[1]) * 1000 + x[0]) * 4 + c);
}

// Does the local point x (global coordinates) of a rank with owned box own
// receive a value under desc? Mirrors the documented stencil rule.
bool reached(const stf_grid_desc &d, const Box &own, const std::array<int64_t, 3> &x) {
  int outside = 0;
  for (int a = 0; a < d.dim; a++) {
    if (!d.periodic[a] && (x[a] < 0 || x[a] >= d.n[a])) return false;
    outside += x[a] < own[a] || x[a] >= own[a] + own[3 + a];
  }
  return d.stencil == STF_STENCIL_BOX || outside <= 1;
}

// Without periodicity every neighbour direction is its own rank, so each
// message is one face, edge or corner box and the self part is the interior
// copy: index analysis must describe all of them without index arrays.
void check_no_index_arrays(stft::Checker &ck, stf_grid g) {
  stf_sf sf = nullptr;
  stf_grid_get_sf(g, &sf, nullptr);
  int found = 0;
  std::FILE *f = ck.rank() == 0 ? std::tmpfile() : nullptr;
  ck.code(stf_view(sf, f), STF_SUCCESS, "stf_view");
  if (f) {
    std::rewind(f);
    char line[512];
    while (std::fgets(line, sizeof line, f))
      if (std::strstr(line, "indexed")) found = 1, std::printf("index array kept: %s", line);
    std::fclose(f);
  }
  MPI_Bcast(&found, 1, MPI_INT, 0, MPI_COMM_WORLD);
  ck.check(!found, "a grid message or the self part kept an index array (see the view line above)");
}

// The grid's queries: sizes, process grid, neighbours (ranks owning a
// point this rank's stencil reaches, or reaching one it owns), SF options.
void check_queries(stft::Checker &ck, stf_grid g, const stf_grid_desc &d, const std::vector<Box> &owns,
                   const std::vector<Box> &ghosts) {
  int me = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int64_t nz = d.dim == 3 ? d.n[2] : 1;
  auto covers = [](const Box &b, const std::array<int64_t, 3> &w) {
    for (int a = 0; a < 3; a++)
      if (w[a] < b[a] || w[a] >= b[a] + b[3 + a]) return false;
    return true;
  };
  // Does rank p's stencil reach a point that rank q owns?
  auto reaches = [&](int p, int q) {
    const Box &gb = ghosts[p];
    for (int64_t k = 0; k < gb[5]; k++)
      for (int64_t j = 0; j < gb[4]; j++)
        for (int64_t i = 0; i < gb[3]; i++) {
          std::array<int64_t, 3> x{gb[0] + i, gb[1] + j, gb[2] + k};
          if (reached(d, owns[p], x) && covers(owns[q], {wrap(x[0], d.n[0]), wrap(x[1], d.n[1]), wrap(x[2], nz)}))
            return true;
        }
    return false;
  };
  std::vector<int> want;
  for (int p = 0; p < size; p++)
    if (p != me && (reaches(me, p) || reaches(p, me))) want.push_back(p);
  int n = -1;
  const int *ranks = nullptr;
  if (ck.code(stf_grid_get_neighbors(g, &n, &ranks), STF_SUCCESS, "stf_grid_get_neighbors"))
    ck.check(std::vector<int>(ranks, ranks + n) == want, "%d neighbours, expected %zu", n, want.size());

  int64_t glen = -1, llen = -1;
  const Box &own = owns[me], &ghost = ghosts[me];
  ck.code(stf_grid_get_sizes(g, &glen, &llen), STF_SUCCESS, "stf_grid_get_sizes");
  ck.check(glen == own[3] * own[4] * own[5] * d.dof && llen == ghost[3] * ghost[4] * ghost[5] * d.dof,
           "sizes %lld / %lld", (long long)glen, (long long)llen);
  int procs[3], coords[3];
  ck.code(stf_grid_get_procs(g, procs, coords), STF_SUCCESS, "stf_grid_get_procs");
  ck.check(procs[0] * procs[1] * procs[2] == size && (coords[2] * procs[1] + coords[1]) * procs[0] + coords[0] == me,
           "process grid %d x %d x %d, coordinates %d %d %d on rank %d", procs[0], procs[1], procs[2], coords[0],
           coords[1], coords[2], me);
  stf_sf sf = nullptr;
  const char *type = nullptr;
  stf_grid_get_sf(g, &sf, nullptr);
  ck.code(stf_get_type(sf, &type), STF_SUCCESS, "stf_get_type");
  ck.check(std::string(type) == (d.options ? "neighbor" : "basic"), "the grid's SF uses %s", type);
}

// One exchange of the grid in the form `form` picks: blocking, begin/end,
// or begin and stf_test on the grid's SF.
int exchange(stf_grid g, bool to_local, const double *from, double *to, int form) {
  if (form == 0) return to_local ? stf_grid_global_to_local(g, from, to) : stf_grid_local_to_global(g, from, to);
  stf_request req = nullptr;
  int rc = to_local ? stf_grid_global_to_local_begin(g, from, to, &req)
                    : stf_grid_local_to_global_begin(g, from, to, &req);
  if (rc) return rc;
  if (form == 1) return to_local ? stf_grid_global_to_local_end(g, &req) : stf_grid_local_to_global_end(g, &req);
  stf_sf sf = nullptr;
  stf_grid_get_sf(g, &sf, nullptr);
  int done = 0;
  while ((rc = stf_test(sf, &req, &done)) == STF_SUCCESS && !done) sched_yield();
  return rc;
}

void run(stft::Checker &ck, const stf_grid_desc &given, const std::string &name, int form) {
  ck.context(name);
  stf_grid_desc d = given;  // directions past dim: one point, not periodic (as the grid takes them)
  for (int a = d.dim; a < 3; a++) d.n[a] = 1, d.periodic[a] = 0;
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  stf_grid g = nullptr;
  if (!ck.code(stf_grid_create(MPI_COMM_WORLD, &given, &g), STF_SUCCESS, "stf_grid_create")) return;
  Box own, ghost;
  stf_grid_get_boxes(g, own.data(), own.data() + 3, ghost.data(), ghost.data() + 3);
  std::vector<Box> owns(size), ghosts(size);
  MPI_Allgather(own.data(), 6, MPI_INT64_T, owns.data(), 6, MPI_INT64_T, MPI_COMM_WORLD);
  MPI_Allgather(ghost.data(), 6, MPI_INT64_T, ghosts.data(), 6, MPI_INT64_T, MPI_COMM_WORLD);
  const int64_t nz = d.dim == 3 ? d.n[2] : 1;

  // Owned boxes tile the domain: every point owned exactly once.
  std::vector<int> owners(d.n[0] * d.n[1] * nz, 0);
  for (const Box &b : owns)
    for (int64_t k = b[2]; k < b[2] + b[5]; k++)
      for (int64_t j = b[1]; j < b[1] + b[4]; j++)
        for (int64_t i = b[0]; i < b[0] + b[3]; i++) owners[(k * d.n[1] + j) * d.n[0] + i]++;
  for (std::size_t p = 0; p < owners.size(); p++)
    if (!ck.check(owners[p] == 1, "point %zu owned %d times", p, owners[p])) break;

  const int dof = d.dof;
  const int64_t nown = own[3] * own[4] * own[5], nloc = ghost[3] * ghost[4] * ghost[5];
  std::vector<double> global(nown * dof), local(nloc * dof, -1.0);
  for (int64_t k = 0; k < own[5]; k++)
    for (int64_t j = 0; j < own[4]; j++)
      for (int64_t i = 0; i < own[3]; i++)
        for (int c = 0; c < dof; c++)
          global[((k * own[4] + j) * own[3] + i) * dof + c] = value({own[0] + i, own[1] + j, own[2] + k}, c);
  ck.code(exchange(g, true, global.data(), local.data(), form), STF_SUCCESS, "global_to_local");
  for (int64_t k = 0; k < ghost[5]; k++)
    for (int64_t j = 0; j < ghost[4]; j++)
      for (int64_t i = 0; i < ghost[3]; i++) {
        std::array<int64_t, 3> x{ghost[0] + i, ghost[1] + j, ghost[2] + k};
        std::array<int64_t, 3> w{wrap(x[0], d.n[0]), wrap(x[1], d.n[1]), wrap(x[2], nz)};
        bool r = reached(d, own, x);
        for (int c = 0; c < dof; c++) {
          double got = local[((k * ghost[4] + j) * ghost[3] + i) * dof + c];
          double want = r ? value(w, c) : -1.0;
          if (!ck.check(got == want, "local (%lld,%lld,%lld) c%d: expected %g got %g", (long long)x[0],
                        (long long)x[1], (long long)x[2], c, want, got))
            return;
        }
      }

  // local-to-global: each owned point gains one per copy anywhere.
  std::vector<double> ones(nloc * dof, 1.0), sums(nown * dof, 0.0);
  ck.code(exchange(g, false, ones.data(), sums.data(), form), STF_SUCCESS, "local_to_global");
  std::vector<int> copies(owners.size(), 0);
  for (int p = 0; p < size; p++) {
    const Box &gb = ghosts[p];
    for (int64_t k = 0; k < gb[5]; k++)
      for (int64_t j = 0; j < gb[4]; j++)
        for (int64_t i = 0; i < gb[3]; i++) {
          std::array<int64_t, 3> x{gb[0] + i, gb[1] + j, gb[2] + k};
          if (reached(d, owns[p], x))
            copies[(wrap(x[2], nz) * d.n[1] + wrap(x[1], d.n[1])) * d.n[0] + wrap(x[0], d.n[0])]++;
        }
  }
  for (int64_t k = 0; k < own[5]; k++)
    for (int64_t j = 0; j < own[4]; j++)
      for (int64_t i = 0; i < own[3]; i++)
        for (int c = 0; c < dof; c++) {
          int want = copies[((own[2] + k) * d.n[1] + own[1] + j) * d.n[0] + own[0] + i];
          double got = sums[((k * own[4] + j) * own[3] + i) * dof + c];
          if (!ck.check(got == want, "global (%lld,%lld,%lld): expected %d copies, got %g", (long long)(own[0] + i),
                        (long long)(own[1] + j), (long long)(own[2] + k), want, got))
            return;
        }
  // local-to-global with insert: the owned part of the local vector (its
  // ghosts spoiled first: they must not be read).
  for (int64_t k = 0; k < ghost[5]; k++)
    for (int64_t j = 0; j < ghost[4]; j++)
      for (int64_t i = 0; i < ghost[3]; i++) {
        const bool owned = ghost[0] + i >= own[0] && ghost[0] + i < own[0] + own[3] && ghost[1] + j >= own[1] &&
                           ghost[1] + j < own[1] + own[4] && ghost[2] + k >= own[2] && ghost[2] + k < own[2] + own[5];
        for (int c = 0; !owned && c < dof; c++) local[((k * ghost[4] + j) * ghost[3] + i) * dof + c] = -7.0;
      }
  std::vector<double> inserted(nown * dof, -1.0);
  ck.code(stf_grid_local_to_global_insert(g, local.data(), inserted.data()), STF_SUCCESS, "local_to_global_insert");
  ck.check(inserted == global, "local_to_global_insert: the owned part differs from the global vector");
  if (!d.periodic[0] && !d.periodic[1] && !d.periodic[2]) check_no_index_arrays(ck, g);
  check_queries(ck, g, d, owns, ghosts);
  ck.code(stf_grid_destroy(&g), STF_SUCCESS, "stf_grid_destroy");
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  stft::Checker ck("test_grid", 0);
  int count = 0;
  for (int dim : {1, 2, 3})
    for (stf_stencil st : {STF_STENCIL_STAR, STF_STENCIL_BOX})
      for (int width : {1, 2})
        for (int periodic = 0; periodic < (dim == 1 ? 2 : 4); periodic++) {
          stf_grid_desc d{};
          d.dim = dim;
          d.n[0] = 9 + count % 3;
          d.n[1] = 8;
          d.n[2] = 7;
          d.periodic[0] = periodic & 1;
          d.periodic[1] = (periodic >> 1) & 1;
          d.periodic[2] = periodic == 3;
          d.stencil = st;
          d.width = width;
          d.dof = 1 + count % 3;
          d.options = count % 4 == 1 ? "-stf_type neighbor" : nullptr;
          const int form = count % 3;  // blocking, begin/end, stf_test
          std::string name = std::to_string(dim) + "D " + (st == STF_STENCIL_STAR ? "star" : "box") + " w" +
                             std::to_string(width) + " periodic" + std::to_string(periodic) + " dof" +
                             std::to_string(d.dof) + (d.options ? " neighbor" : "") +
                             (form == 0 ? " blocking" : form == 1 ? " begin/end" : " stf_test");
          run(ck, d, name, form);
          count++;
        }
  // Bad descriptions are errors, not crashes.
  ck.context("errors");
  stf_grid g = nullptr;
  double x0 = 0;
  stf_grid_desc bad{};
  bad.dim = 4;
  ck.code(stf_grid_create(MPI_COMM_WORLD, &bad, &g), STF_ERR_ARG, "dim 4");
  bad.dim = 0;
  ck.code(stf_grid_create(MPI_COMM_WORLD, &bad, &g), STF_ERR_ARG, "dim 0");
  ck.code(stf_grid_local_to_global_insert(nullptr, &x0, &x0), STF_ERR_NULL, "insert on a NULL grid");
  bad = stf_grid_desc{};
  bad.dim = 2, bad.n[0] = bad.n[1] = 8, bad.width = 1, bad.dof = 1, bad.procs[0] = 1000;
  ck.code(stf_grid_create(MPI_COMM_WORLD, &bad, &g), STF_ERR_ARG, "process grid that does not fit");
  bad.procs[0] = 0, bad.options = "-stf_type carrier_pigeon";
  ck.code(stf_grid_create(MPI_COMM_WORLD, &bad, &g), STF_ERR_OPTION, "unknown transport in the grid's options");
  ck.check(g == nullptr, "a failed stf_grid_create left a grid");
  stf_request req = reinterpret_cast<stf_request>(&bad);
  double x = 0;
  ck.code(stf_grid_global_to_local_begin(nullptr, &x, &x, &req), STF_ERR_NULL, "begin on a NULL grid");
  ck.check(req == nullptr, "a failed begin left the request non-NULL");
  int rc = ck.finish();
  MPI_Finalize();
  return rc;
}
