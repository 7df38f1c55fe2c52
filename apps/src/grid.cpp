// Structured grids: the SF from a ghosted box to the owners of its points.
// Leaves are numbered by their position in the ghosted box and roots by their
// position in the owner's box, so faces, edges, corners and the interior copy
// are strided blocks that index analysis can describe without arrays.
#include <algorithm>
#include <array>
#include <iterator>
#include <new>
#include <vector>

#include "apps_error.h"

struct stf_grid_s {
  stf_grid_desc desc{};
  std::array<int, 3> procs{1, 1, 1}, coord{0, 0, 0};
  std::array<int64_t, 3> own_start{0, 0, 0}, own_size{1, 1, 1}, ghost_start{0, 0, 0}, ghost_size{1, 1, 1};
  MPI_Datatype unit = MPI_DATATYPE_NULL;
  stf_sf sf = nullptr;
  std::vector<int> neighbors;  // ranks this rank exchanges ghost points with
};

namespace stf_apps {
namespace {

int64_t split(int64_t n, int parts, int p) { return n * p / parts; }

// Owner coordinate along one direction of global point x (already wrapped).
int owner_coord(int64_t n, int parts, int64_t x) {
  int p = static_cast<int>(x * parts / n);
  while (p > 0 && split(n, parts, p) > x) p--;
  while (p + 1 < parts && split(n, parts, p + 1) <= x) p++;
  return p;
}

int validate(const stf_grid_desc &d) {
  if (d.dim < 1 || d.dim > 3) return fail(STF_ERR_ARG, "dim = %d, expected 1, 2 or 3", d.dim);
  if (d.width < 1) return fail(STF_ERR_ARG, "ghost width %d < 1", d.width);
  if (d.dof < 1) return fail(STF_ERR_ARG, "dof %d < 1", d.dof);
  if (d.stencil != STF_STENCIL_STAR && d.stencil != STF_STENCIL_BOX)
    return fail(STF_ERR_ARG, "unknown stencil %d", d.stencil);
  int64_t points = 1;
  for (int a = 0; a < d.dim; a++) {
    if (d.n[a] < 1) return fail(STF_ERR_ARG, "n[%d] = %lld < 1", a, static_cast<long long>(d.n[a]));
    if (d.procs[a] < 0) return fail(STF_ERR_ARG, "procs[%d] = %d < 0", a, d.procs[a]);
    points *= d.n[a];
    if (points > 0x7fffffff) return fail(STF_ERR_ARG, "more than 2^31 grid points are not supported");
  }
  return STF_SUCCESS;
}

int choose_procs(stf_grid g, MPI_Comm comm) {
  int size, rank;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  const stf_grid_desc &d = g->desc;
  int dims[3] = {d.procs[0], d.dim >= 2 ? d.procs[1] : 1, d.dim == 3 ? d.procs[2] : 1};
  int given = 1, free_dims = 0;
  for (int a = 0; a < d.dim; a++) given *= dims[a] ? dims[a] : (free_dims++, 1);
  // MPI_Dims_create aborts (through MPI_COMM_WORLD's handler) on a misfit.
  if (size % given != 0 || (free_dims == 0 && given != size))
    return fail(STF_ERR_ARG, "the given process grid (%d ranks) does not divide %d ranks", given, size);
  MPI_Dims_create(size, d.dim, dims);
  if (dims[0] * dims[1] * dims[2] != size)
    return fail(STF_ERR_ARG, "process grid %d x %d x %d does not have %d ranks", dims[0], dims[1], dims[2], size);
  for (int a = 0; a < 3; a++) g->procs[a] = dims[a];
  g->coord = {rank % dims[0], (rank / dims[0]) % dims[1], rank / (dims[0] * dims[1])};
  for (int a = 0; a < d.dim; a++) {
    if (d.n[a] < g->procs[a])
      return fail(STF_ERR_ARG, "direction %d has %lld points for %d ranks", a, static_cast<long long>(d.n[a]),
                  g->procs[a]);
  }
  return STF_SUCCESS;
}

void set_boxes(stf_grid g) {
  const stf_grid_desc &d = g->desc;
  for (int a = 0; a < 3; a++) {
    if (a >= d.dim) continue;
    int64_t lo = split(d.n[a], g->procs[a], g->coord[a]), hi = split(d.n[a], g->procs[a], g->coord[a] + 1);
    g->own_start[a] = lo;
    g->own_size[a] = hi - lo;
    int64_t glo = lo - d.width, ghi = hi + d.width;
    if (!d.periodic[a]) glo = std::max<int64_t>(glo, 0), ghi = std::min<int64_t>(ghi, d.n[a]);
    g->ghost_start[a] = glo;
    g->ghost_size[a] = ghi - glo;
  }
}

// Leaves: every point of the ghosted box that the stencil reaches, pointing
// at its owner's point.
int build_sf(stf_grid g, MPI_Comm comm) {
  const stf_grid_desc &d = g->desc;
  std::vector<stf_int> ilocal;
  std::vector<stf_node> iremote;
  const auto &gs = g->ghost_start;
  const auto &gz = g->ghost_size;
  for (int64_t k = 0; k < gz[2]; k++)
    for (int64_t j = 0; j < gz[1]; j++)
      for (int64_t i = 0; i < gz[0]; i++) {
        std::array<int64_t, 3> x{gs[0] + i, gs[1] + j, gs[2] + k};
        int outside = 0;
        for (int a = 0; a < d.dim; a++)
          outside += x[a] < g->own_start[a] || x[a] >= g->own_start[a] + g->own_size[a];
        if (d.stencil == STF_STENCIL_STAR && outside > 1) continue;
        std::array<int, 3> owner{0, 0, 0};
        std::array<int64_t, 3> offset{0, 0, 0}, osize{1, 1, 1};
        for (int a = 0; a < d.dim; a++) {
          int64_t w = ((x[a] % d.n[a]) + d.n[a]) % d.n[a];
          owner[a] = owner_coord(d.n[a], g->procs[a], w);
          int64_t lo = split(d.n[a], g->procs[a], owner[a]);
          offset[a] = w - lo;
          osize[a] = split(d.n[a], g->procs[a], owner[a] + 1) - lo;
        }
        int rank = (owner[2] * g->procs[1] + owner[1]) * g->procs[0] + owner[0];
        int64_t root = (offset[2] * osize[1] + offset[1]) * osize[0] + offset[0];
        ilocal.push_back(static_cast<stf_int>((k * gz[1] + j) * gz[0] + i));
        iremote.push_back({rank, static_cast<stf_int>(root)});
      }
  stf_int nroots = static_cast<stf_int>(g->own_size[0] * g->own_size[1] * g->own_size[2]);
  int rc = stf_create(comm, &g->sf);
  if (!rc && d.options) rc = stf_set_sf_options(g->sf, d.options);
  if (!rc) rc = stf_set_graph(g->sf, nroots, static_cast<stf_int>(ilocal.size()), ilocal.data(), STF_COPY_VALUES,
                              iremote.data(), STF_COPY_VALUES);
  if (!rc) rc = stf_setup(g->sf);
  if (rc) return core(rc, "building the grid SF");
  if (MPI_Type_contiguous(d.dof, MPI_DOUBLE, &g->unit) != MPI_SUCCESS || MPI_Type_commit(&g->unit) != MPI_SUCCESS)
    return fail(STF_ERR_MPI, "cannot create the unit datatype");
  return STF_SUCCESS;
}

// The peers of both directions but this rank (the stencil is symmetric, so
// they are the same; the union is cheap and needs no argument).
int find_neighbors(stf_grid g) {
  int n[2] = {0, 0};
  const int *ranks[2] = {nullptr, nullptr};
  if (int rc = core(stf_get_root_ranks(g->sf, &n[0], &ranks[0], nullptr, nullptr, nullptr), "grid neighbours"))
    return rc;
  if (int rc = core(stf_get_leaf_ranks(g->sf, &n[1], &ranks[1], nullptr, nullptr), "grid neighbours")) return rc;
  const int me = (g->coord[2] * g->procs[1] + g->coord[1]) * g->procs[0] + g->coord[0];
  std::merge(ranks[0], ranks[0] + n[0], ranks[1], ranks[1] + n[1], std::back_inserter(g->neighbors));
  g->neighbors.erase(std::unique(g->neighbors.begin(), g->neighbors.end()), g->neighbors.end());
  g->neighbors.erase(std::remove(g->neighbors.begin(), g->neighbors.end(), me), g->neighbors.end());
  return STF_SUCCESS;
}

}  // namespace
}  // namespace stf_apps

using stf_apps::core;
using stf_apps::fail;

extern "C" int stf_grid_create(MPI_Comm comm, const stf_grid_desc *desc, stf_grid *grid) try {
  if (!grid) return fail(STF_ERR_NULL, "output grid pointer is NULL");
  *grid = nullptr;
  if (!desc) return fail(STF_ERR_NULL, "grid description is NULL");
  if (int rc = stf_apps::validate(*desc)) return rc;
  stf_grid g = new (std::nothrow) stf_grid_s;
  if (!g) return fail(STF_ERR_MEMORY, "cannot allocate a grid");
  g->desc = *desc;
  for (int a = desc->dim; a < 3; a++) g->desc.n[a] = 1, g->desc.periodic[a] = 0, g->desc.procs[a] = 1;
  int rc = stf_apps::choose_procs(g, comm);
  if (!rc) {
    stf_apps::set_boxes(g);
    rc = stf_apps::build_sf(g, comm);
  }
  if (!rc) rc = stf_apps::find_neighbors(g);
  if (rc) {
    stf_grid_destroy(&g);
    return rc;
  }
  *grid = g;
  return STF_SUCCESS;
} STF_APPS_CATCH

extern "C" int stf_grid_destroy(stf_grid *grid) try {
  if (!grid) return fail(STF_ERR_NULL, "pointer to the grid handle is NULL");
  if (!*grid) return STF_SUCCESS;
  int rc = (*grid)->sf ? stf_destroy(&(*grid)->sf) : STF_SUCCESS;
  if ((*grid)->unit != MPI_DATATYPE_NULL) MPI_Type_free(&(*grid)->unit);
  delete *grid;
  *grid = nullptr;
  return core(rc, "destroying the grid SF");
} STF_APPS_CATCH

extern "C" int stf_grid_get_boxes(stf_grid g, int64_t owned_start[3], int64_t owned_size[3], int64_t ghost_start[3],
                                  int64_t ghost_size[3]) try {
  if (!g) return fail(STF_ERR_NULL, "the grid handle is NULL");
  for (int a = 0; a < 3; a++) {
    if (owned_start) owned_start[a] = g->own_start[a];
    if (owned_size) owned_size[a] = g->own_size[a];
    if (ghost_start) ghost_start[a] = g->ghost_start[a];
    if (ghost_size) ghost_size[a] = g->ghost_size[a];
  }
  return STF_SUCCESS;
} STF_APPS_CATCH

extern "C" int stf_grid_get_sizes(stf_grid g, int64_t *global_len, int64_t *local_len) try {
  if (!g) return fail(STF_ERR_NULL, "the grid handle is NULL");
  const int64_t dof = g->desc.dof;
  if (global_len) *global_len = g->own_size[0] * g->own_size[1] * g->own_size[2] * dof;
  if (local_len) *local_len = g->ghost_size[0] * g->ghost_size[1] * g->ghost_size[2] * dof;
  return STF_SUCCESS;
} STF_APPS_CATCH

extern "C" int stf_grid_get_procs(stf_grid g, int procs[3], int coords[3]) try {
  if (!g) return fail(STF_ERR_NULL, "the grid handle is NULL");
  for (int a = 0; a < 3; a++) {
    if (procs) procs[a] = g->procs[a];
    if (coords) coords[a] = g->coord[a];
  }
  return STF_SUCCESS;
} STF_APPS_CATCH

extern "C" int stf_grid_get_neighbors(stf_grid g, int *n, const int **ranks) try {
  if (!g) return fail(STF_ERR_NULL, "the grid handle is NULL");
  if (n) *n = static_cast<int>(g->neighbors.size());
  if (ranks) *ranks = g->neighbors.data();
  return STF_SUCCESS;
} STF_APPS_CATCH

extern "C" int stf_grid_get_sf(stf_grid g, stf_sf *sf, MPI_Datatype *unit) try {
  if (!g) return fail(STF_ERR_NULL, "the grid handle is NULL");
  if (sf) *sf = g->sf;
  if (unit) *unit = g->unit;
  return STF_SUCCESS;
} STF_APPS_CATCH

namespace {

// The grid's two exchanges: global to local is a bcast (MPI_REPLACE), local
// to global a reduce (MPI_SUM).
int exchange_begin(stf_grid g, bool to_local, const double *from, double *to, stf_request *req) {
  if (req) *req = nullptr;
  if (!g) return fail(STF_ERR_NULL, "the grid handle is NULL");
  if (to_local) return core(stf_bcast_begin(g->sf, g->unit, from, to, MPI_REPLACE, req), "global_to_local");
  return core(stf_reduce_begin(g->sf, g->unit, from, to, MPI_SUM, req), "local_to_global");
}

int exchange_end(stf_grid g, bool to_local, stf_request *req) {
  if (!g) return fail(STF_ERR_NULL, "the grid handle is NULL");
  if (to_local) return core(stf_bcast_end(g->sf, req), "global_to_local");
  return core(stf_reduce_end(g->sf, req), "local_to_global");
}

int exchange(stf_grid g, bool to_local, const double *from, double *to) {
  stf_request req = nullptr;
  if (int rc = exchange_begin(g, to_local, from, to, &req)) return rc;
  return exchange_end(g, to_local, &req);
}

}  // namespace

extern "C" int stf_grid_global_to_local_begin(stf_grid g, const double *global, double *local, stf_request *req) try {
  return exchange_begin(g, true, global, local, req);
} STF_APPS_CATCH
extern "C" int stf_grid_global_to_local_end(stf_grid g, stf_request *req) try {
  return exchange_end(g, true, req);
} STF_APPS_CATCH
extern "C" int stf_grid_global_to_local(stf_grid g, const double *global, double *local) try {
  return exchange(g, true, global, local);
} STF_APPS_CATCH

extern "C" int stf_grid_local_to_global_begin(stf_grid g, const double *local, double *global, stf_request *req) try {
  return exchange_begin(g, false, local, global, req);
} STF_APPS_CATCH
extern "C" int stf_grid_local_to_global_end(stf_grid g, stf_request *req) try {
  return exchange_end(g, false, req);
} STF_APPS_CATCH
extern "C" int stf_grid_local_to_global(stf_grid g, const double *local, double *global) try {
  return exchange(g, false, local, global);
} STF_APPS_CATCH

// The owned box inside the ghosted one, row by row: no communication.
extern "C" int stf_grid_local_to_global_insert(stf_grid g, const double *local, double *global) try {
  if (!g) return fail(STF_ERR_NULL, "the grid handle is NULL");
  const int64_t *own = g->own_size.data();
  if (own[0] * own[1] * own[2] > 0 && (!local || !global))
    return fail(STF_ERR_NULL, "local_to_global_insert: %s is NULL", local ? "global" : "local");
  const int64_t dof = g->desc.dof, row = own[0] * dof;
  const int64_t di = g->own_start[0] - g->ghost_start[0], dj = g->own_start[1] - g->ghost_start[1],
                dk = g->own_start[2] - g->ghost_start[2];
  for (int64_t k = 0; k < own[2]; k++)
    for (int64_t j = 0; j < own[1]; j++) {
      const int64_t from = (((k + dk) * g->ghost_size[1] + j + dj) * g->ghost_size[0] + di) * dof;
      std::copy(local + from, local + from + row, global + (k * own[1] + j) * row);
    }
  return STF_SUCCESS;
} STF_APPS_CATCH
