// The apps library from Python: vector scatter, structured grids, the
// distributed CSR matrix (from scipy.sparse) with SpMV and CG, Matrix Market.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <memory>

#include "arrays.h"
#include "request.h"
#include "sf.h"
#include "stf_apps.h"

namespace stfpy {
using namespace nb::literals;

namespace {

// A float64 array of this rank's vector entries (at least n), as a buffer.
Buffer doubles(nb::handle obj, const char *what, int64_t n, bool writable) {
  Buffer b = get_buffer(obj, what, writable);
  if (b.base != MPI_DOUBLE) throw nb::type_error((std::string(what) + ": expected float64 values").c_str());
  if (b.units * b.block < n)
    throw nb::value_error((std::string(what) + ": " + std::to_string(b.units * b.block) + " values, need " +
                           std::to_string(n))
                              .c_str());
  return b;
}

// ---- vector scatter ----

struct VecScatter {
  stf_vecscatter vs = nullptr;
  stf_int nowned = 0, nghost = 0;
  nb::object comm;
  ~VecScatter() {
    if (vs && !mpi_finalized()) stf_vecscatter_destroy(&vs);
  }
};

stf_insert_mode mode_of(const std::string &mode) {
  if (mode == "insert") return STF_INSERT_VALUES;
  if (mode == "add") return STF_ADD_VALUES;
  throw nb::value_error("mode must be 'insert' or 'add'");
}

struct ScatterArgs {
  Buffer buf[2];
  MPI_Datatype unit;
  stf_insert_mode mode;
};

// forward: owned -> ghost; reverse: ghost -> owned.
ScatterArgs scatter_args(const VecScatter &v, nb::handle owned, nb::handle ghost, const std::string &mode,
                         bool forward) {
  ScatterArgs a;
  a.buf[0] = get_buffer(owned, "owned", !forward);
  a.buf[1] = get_buffer(ghost, "ghost", forward);
  a.unit = common_unit(a.buf[0], "owned", a.buf[1], "ghost");
  check_length(a.buf[0], "owned", v.nowned, "owned entries");
  check_length(a.buf[1], "ghost", v.nghost, "ghost entries");
  a.mode = mode_of(mode);
  return a;
}

int forward_end(void *vs, stf_request *r) { return stf_vecscatter_forward_end(static_cast<stf_vecscatter>(vs), r); }
int reverse_end(void *vs, stf_request *r) { return stf_vecscatter_reverse_end(static_cast<stf_vecscatter>(vs), r); }

nb::object scatter_begin(nb::handle self, nb::handle owned, nb::handle ghost, const std::string &mode, bool forward) {
  VecScatter &v = nb::cast<VecScatter &>(self);
  ScatterArgs a = scatter_args(v, owned, ghost, mode, forward);
  return begin_request(self, v.vs, forward ? forward_end : reverse_end, a.buf, {owned, ghost},
                       [&](stf_request *r) {
                         return forward ? stf_vecscatter_forward_begin(v.vs, a.unit, a.buf[0].data, a.buf[1].data,
                                                                       a.mode, r)
                                        : stf_vecscatter_reverse_begin(v.vs, a.unit, a.buf[1].data, a.buf[0].data,
                                                                       a.mode, r);
                       });
}

// PETSc's ToAll / ToZero: the whole vector on every rank, or on rank 0.
VecScatter *gathered(nb::handle comm, stf_int nowned, bool all) {
  auto v = std::make_unique<VecScatter>();
  MPI_Comm c = to_comm(comm);
  keep_comm(c);
  v->comm = nb::borrow(comm);
  v->nowned = nowned;
  run([&] { return all ? stf_vecscatter_create_to_all(c, nowned, &v->vs) : stf_vecscatter_create_to_zero(c, nowned, &v->vs); });
  stf_sf sf = nullptr;
  check(stf_vecscatter_get_sf(v->vs, &sf));
  check(stf_get_graph(sf, nullptr, &v->nghost, nullptr, nullptr));
  return v.release();
}

// PETSc's VecScatterCreate(x, ix, y, iy): owned = x, ghost = y (ny entries).
VecScatter *general(nb::handle comm, stf_int nx, stf_int ny, nb::handle ix, nb::handle iy) {
  GlobalArray from = global_ids(ix, "ix"), to = global_ids(iy, "iy");
  if (from.size != to.size)
    throw nb::value_error(("ix has " + std::to_string(from.size) + " entries and iy " + std::to_string(to.size) +
                           ": one pair per entry").c_str());
  auto v = std::make_unique<VecScatter>();
  MPI_Comm c = to_comm(comm);
  keep_comm(c);
  v->comm = nb::borrow(comm);
  v->nowned = nx;
  v->nghost = ny;
  run([&] { return stf_vecscatter_create_general(c, nx, ny, from.size, from.data, to.data, &v->vs); });
  return v.release();
}

void bind_vecscatter(nb::module_ &m) {
  nb::class_<VecScatter>(m, "VecScatter",
                         "Ghost entries of a distributed vector with contiguous ownership (rank 0 first).")
      .def("__init__", [](VecScatter *self, nb::handle comm, stf_int nowned, nb::handle global) {
        new (self) VecScatter;
        GlobalArray g = global_ids(global, "global");
        MPI_Comm c = to_comm(comm);
        keep_comm(c);
        self->comm = nb::borrow(comm);
        self->nowned = nowned;
        self->nghost = g.size;
        run([&] { return stf_vecscatter_create(c, nowned, self->nghost, g.data, &self->vs); });
      }, "comm"_a, "nowned"_a, "global"_a, "nowned entries owned here; ghost entry i holds global entry global[i].")
      .def_static("to_all", [](nb::handle comm, stf_int nowned) { return gathered(comm, nowned, true); },
                  "comm"_a, "nowned"_a, "The whole vector (every entry, in order) as every rank's ghost vector.")
      .def_static("to_zero", [](nb::handle comm, stf_int nowned) { return gathered(comm, nowned, false); },
                  "comm"_a, "nowned"_a, "The whole vector as rank 0's ghost vector (none elsewhere).")
      .def_static("general", &general, "comm"_a, "nx"_a, "ny"_a, "ix"_a, "iy"_a,
                  "Between two distributed vectors (PETSc's VecScatterCreate(x, ix, y, iy)): forward sets "
                  "y[iy[k]] = x[ix[k]] for the pairs named here; owned = x (nx entries), ghost = y (ny).")
      .def_prop_ro("nowned", [](const VecScatter &v) { return v.nowned; })
      .def_prop_ro("nghost", [](const VecScatter &v) { return v.nghost; })
      .def_prop_ro("sf", [](nb::handle self) {
        VecScatter &v = nb::cast<VecScatter &>(self);
        stf_sf sf = nullptr;
        check(stf_vecscatter_get_sf(v.vs, &sf));
        return wrap_sf(sf, v.comm, default_debug(), false, self);
      }, "The SF underneath (owned by the scatter).")
      .def("forward_begin", [](nb::handle self, nb::handle owned, nb::handle ghost, const std::string &mode) {
        return scatter_begin(self, owned, ghost, mode, true);
      }, "owned"_a, "ghost"_a, "mode"_a = "insert", "ghost[i] = (or +=) the owned value of global[i]: a Request.")
      .def("forward", [](nb::handle self, nb::handle owned, nb::handle ghost, const std::string &mode) {
        nb::cast<Request &>(scatter_begin(self, owned, ghost, mode, true)).end();
      }, "owned"_a, "ghost"_a, "mode"_a = "insert")
      .def("reverse_begin", [](nb::handle self, nb::handle ghost, nb::handle owned, const std::string &mode) {
        return scatter_begin(self, owned, ghost, mode, false);
      }, "ghost"_a, "owned"_a, "mode"_a = "add",
         "owned[g] += (or = , 'insert', where no entry is named twice) the ghost entries naming g: a Request.")
      .def("reverse", [](nb::handle self, nb::handle ghost, nb::handle owned, const std::string &mode) {
        nb::cast<Request &>(scatter_begin(self, owned, ghost, mode, false)).end();
      }, "ghost"_a, "owned"_a, "mode"_a = "add");
}

// ---- structured grids ----

struct Grid {
  stf_grid grid = nullptr;
  stf_grid_desc desc{};
  int64_t owned_start[3], owned_size[3], ghost_start[3], ghost_size[3];
  nb::object comm;
  ~Grid() {
    if (grid && !mpi_finalized()) stf_grid_destroy(&grid);
  }
  // numpy shape of a box: (z,) y, x, (dof): x fastest, dof innermost.
  nb::tuple shape(const int64_t size[3]) const {
    nb::list s;
    for (int d = desc.dim - 1; d >= 0; --d) s.append(size[d]);
    if (desc.dof > 1) s.append(desc.dof);
    return nb::tuple(s);
  }
  int64_t count(const int64_t size[3]) const {
    int64_t n = desc.dof;
    for (int d = 0; d < desc.dim; ++d) n *= size[d];
    return n;
  }
};

std::vector<int64_t> triple(nb::handle obj, int dim, const char *what) {
  std::vector<int64_t> v = nb::cast<std::vector<int64_t>>(obj);
  if (int(v.size()) != dim) throw nb::value_error((std::string(what) + ": one entry per dimension").c_str());
  return v;
}

void grid_init(Grid *self, nb::handle comm, nb::handle n, nb::handle procs, nb::handle periodic,
               const std::string &stencil, int width, int dof) {
  new (self) Grid;
  MPI_Comm c = to_comm(comm);
  keep_comm(c);
  self->comm = nb::borrow(comm);
  stf_grid_desc &d = self->desc;
  std::vector<int64_t> sizes = nb::cast<std::vector<int64_t>>(n);
  d.dim = int(sizes.size());
  if (d.dim < 1 || d.dim > 3) throw nb::value_error("n: 1, 2 or 3 sizes (x[, y[, z]])");
  for (int i = 0; i < d.dim; ++i) d.n[i] = sizes[i];
  if (!procs.is_none()) {
    std::vector<int64_t> p = triple(procs, d.dim, "procs");
    for (int i = 0; i < d.dim; ++i) d.procs[i] = int(p[i]);
  }
  if (PyBool_Check(periodic.ptr())) {
    for (int i = 0; i < d.dim; ++i) d.periodic[i] = periodic.ptr() == Py_True;
  } else {
    std::vector<int64_t> p = triple(periodic, d.dim, "periodic");
    for (int i = 0; i < d.dim; ++i) d.periodic[i] = p[i] != 0;
  }
  if (stencil != "star" && stencil != "box") throw nb::value_error("stencil must be 'star' or 'box'");
  d.stencil = stencil == "star" ? STF_STENCIL_STAR : STF_STENCIL_BOX;
  d.width = width;
  d.dof = dof;
  run([&] { return stf_grid_create(c, &d, &self->grid); });
  check(stf_grid_get_boxes(self->grid, self->owned_start, self->owned_size, self->ghost_start, self->ghost_size));
}

int g2l_end(void *g, stf_request *r) { return stf_grid_global_to_local_end(static_cast<stf_grid>(g), r); }
int l2g_end(void *g, stf_request *r) { return stf_grid_local_to_global_end(static_cast<stf_grid>(g), r); }

// The split-phase forms: the Request keeps both arrays alive until its end.
nb::object grid_begin(nb::handle self, nb::handle from, nb::handle to, bool to_local) {
  Grid &g = nb::cast<Grid &>(self);
  Buffer buf[2];
  buf[0] = doubles(from, to_local ? "global" : "local", g.count(to_local ? g.owned_size : g.ghost_size), false);
  buf[1] = doubles(to, to_local ? "local" : "global", g.count(to_local ? g.ghost_size : g.owned_size), true);
  const double *src = static_cast<const double *>(buf[0].data);
  double *dst = static_cast<double *>(buf[1].data);
  return begin_request(self, g.grid, to_local ? g2l_end : l2g_end, buf, {from, to}, [&](stf_request *r) {
    return to_local ? stf_grid_global_to_local_begin(g.grid, src, dst, r)
                    : stf_grid_local_to_global_begin(g.grid, src, dst, r);
  });
}

nb::tuple box(const Grid &g, const int64_t start[3], const int64_t size[3]) {
  nb::list st, sz;
  for (int d = 0; d < g.desc.dim; ++d) st.append(start[d]), sz.append(size[d]);
  return nb::make_tuple(nb::tuple(st), nb::tuple(sz));
}

void bind_grid(nb::module_ &m) {
  nb::class_<Grid>(m, "Grid", "A 1D/2D/3D structured grid split over the ranks, with ghost layers.")
      .def("__init__", &grid_init, "comm"_a, "n"_a, "procs"_a = nb::none(), "periodic"_a = false,
           "stencil"_a = "star", "width"_a = 1, "dof"_a = 1,
           "n: points per direction (x, y[, z]); procs: process grid (None or 0 entries: chosen).")
      .def_prop_ro("owned_box", [](const Grid &g) { return box(g, g.owned_start, g.owned_size); },
                   "(start, size) per direction (x first) of the points this rank owns.")
      .def_prop_ro("ghost_box", [](const Grid &g) { return box(g, g.ghost_start, g.ghost_size); },
                   "(start, size) of the ghosted box.")
      .def("global_vector", [](const Grid &g) {
        return numpy().attr("zeros")(g.shape(g.owned_size));
      }, "Zeros shaped like this rank's owned box: ([z,] y, x[, dof]).")
      .def("local_vector", [](const Grid &g) {
        return numpy().attr("zeros")(g.shape(g.ghost_size));
      }, "Zeros shaped like the ghosted box.")
      .def("interior", [](const Grid &g, nb::handle local) {
        nb::list index;
        for (int d = g.desc.dim - 1; d >= 0; --d) {
          int64_t lo = g.owned_start[d] - g.ghost_start[d];
          index.append(nb::slice(nb::int_(lo), nb::int_(lo + g.owned_size[d]), nb::none()));
        }
        return local.attr("__getitem__")(nb::tuple(index));
      }, "local"_a, "The owned points of a ghosted array (a numpy view).")
      .def("global_to_local", [](nb::handle self, nb::handle global, nb::handle local) {
        nb::cast<Request &>(grid_begin(self, global, local, true)).end();
      }, "global"_a, "local"_a, "local = global on the owned points and the ghosts (collective).")
      .def("local_to_global", [](nb::handle self, nb::handle local, nb::handle global) {
        nb::cast<Request &>(grid_begin(self, local, global, false)).end();
      }, "local"_a, "global"_a, "global += every local value of the same point (collective).")
      .def("local_to_global_insert", [](const Grid &g, nb::handle local, nb::handle global) {
        Buffer lb = doubles(local, "local", g.count(g.ghost_size), false);
        Buffer gb = doubles(global, "global", g.count(g.owned_size), true);
        check(stf_grid_local_to_global_insert(g.grid, static_cast<double *>(lb.data), static_cast<double *>(gb.data)));
      }, "local"_a, "global"_a, "global = the owned points of local (no communication; ghosts are not read).")
      .def("global_to_local_begin", [](nb::handle self, nb::handle global, nb::handle local) {
        return grid_begin(self, global, local, true);
      }, "global"_a, "local"_a, "Split-phase global_to_local: returns a Request; local is complete at its end().")
      .def("local_to_global_begin", [](nb::handle self, nb::handle local, nb::handle global) {
        return grid_begin(self, local, global, false);
      }, "local"_a, "global"_a, "Split-phase local_to_global: returns a Request; global is complete at its end().")
      .def_prop_ro("sf", [](nb::handle self) {
        Grid &g = nb::cast<Grid &>(self);
        stf_sf sf = nullptr;
        MPI_Datatype unit;
        check(stf_grid_get_sf(g.grid, &sf, &unit));
        return wrap_sf(sf, g.comm, default_debug(), false, self);
      }, "The grid's SF (owned by the grid): roots = owned points, leaves = ghosted points.");
}

// ---- CSR, CG, Matrix Market ----

struct CSR {
  stf_csr A = nullptr;
  int64_t nglobal = 0, first_row = 0, nnz_local = 0;
  stf_int nlocal = 0, nghost = 0;
  nb::object comm;
  ~CSR() {
    if (A && !mpi_finalized()) stf_csr_destroy(&A);
  }
};

stf_partition partition_of(const std::string &how) {
  if (how == "rows") return STF_PARTITION_ROWS;
  if (how == "nnz") return STF_PARTITION_NNZ;
  throw nb::value_error("partition must be 'rows' or 'nnz'");
}

void csr_init(CSR *self, nb::handle comm, nb::handle matrix, const std::string &partition) {
  new (self) CSR;
  MPI_Comm c = to_comm(comm);
  keep_comm(c);
  self->comm = nb::borrow(comm);
  if (!nb::hasattr(matrix, "tocoo")) throw nb::type_error("matrix: expected a scipy.sparse matrix (or array)");
  nb::object coo = matrix.attr("tocoo")();
  nb::tuple shape = nb::cast<nb::tuple>(coo.attr("shape"));
  nb::object row = contiguous(coo.attr("row"), "int64"), col = contiguous(coo.attr("col"), "int64");
  nb::object val = contiguous(coo.attr("data"), "float64");
  stf_coo g{nb::cast<int64_t>(shape[0]), nb::cast<int64_t>(shape[1]), nb::cast<int64_t>(val.attr("size")),
            data_of<int64_t>(row), data_of<int64_t>(col), data_of<double>(val)};
  stf_partition how = partition_of(partition);
  run([&] { return stf_csr_create(c, &g, how, &self->A); });
  check(stf_csr_get_info(self->A, &self->nglobal, &self->nlocal, &self->first_row, &self->nghost,
                              &self->nnz_local));
}

// y (allocated when None) = product(x).
template <class F>
nb::object product(const CSR &A, nb::handle x, nb::handle y, F &&mult) {
  nb::object out = y.is_none() ? numpy().attr("zeros")(A.nlocal) : nb::borrow(y);
  Buffer xb = doubles(x, "x", A.nlocal, false), yb = doubles(out, "y", A.nlocal, true);
  run([&] { return mult(static_cast<const double *>(xb.data), static_cast<double *>(yb.data)); });
  return out;
}

nb::dict cg_result(const stf_cg_result &r) {
  nb::dict d;
  d["iterations"] = r.iterations;
  d["residual_norm"] = r.residual_norm;
  d["converged"] = bool(r.converged);
  d["host_syncs"] = r.host_syncs;
  return d;
}

void bind_csr(nb::module_ &m) {
  nb::class_<CSR>(m, "CSR", "A square sparse matrix split by rows over the ranks (stf_csr).")
      .def("__init__", &csr_init, "comm"_a, "matrix"_a, "partition"_a = "nnz",
           "Every rank passes the same global scipy.sparse matrix and keeps its rows ('rows' or 'nnz' balance).")
      .def_prop_ro("nglobal", [](const CSR &A) { return A.nglobal; })
      .def_prop_ro("nlocal", [](const CSR &A) { return A.nlocal; }, "Rows (and x entries) on this rank.")
      .def_prop_ro("first_row", [](const CSR &A) { return A.first_row; })
      .def_prop_ro("nghost", [](const CSR &A) { return A.nghost; })
      .def_prop_ro("nnz_local", [](const CSR &A) { return A.nnz_local; })
      .def_prop_ro("ghost_columns", [](const CSR &A) {
        const int64_t *cols = nullptr;
        check(stf_csr_get_ghost_columns(A.A, &cols));
        nb::object out = numpy().attr("empty")(A.nghost, "dtype"_a = "int64");
        if (A.nghost) std::memcpy(data_of<int64_t>(out), cols, sizeof(int64_t) * A.nghost);
        return out;
      }, "Global column of each ghost entry (a copy).")
      .def_prop_ro("ghost_sf", [](nb::handle self) {
        CSR &A = nb::cast<CSR &>(self);
        stf_sf sf = nullptr;
        check(stf_csr_get_ghost_sf(A.A, &sf));
        return wrap_sf(sf, A.comm, default_debug(), false, self);
      }, "The ghost SF (owned by the matrix).")
      .def("mult", [](const CSR &A, nb::handle x, nb::handle y) {
        return product(A, x, y, [&](const double *xp, double *yp) { return stf_csr_mult(A.A, xp, yp); });
      }, "x"_a, "y"_a = nb::none(), "y = A x on this rank's rows (collective); returns y.")
      .def("mult_transpose", [](const CSR &A, nb::handle x, nb::handle y) {
        return product(A, x, y, [&](const double *xp, double *yp) { return stf_csr_mult_transpose(A.A, xp, yp); });
      }, "x"_a, "y"_a = nb::none(), "y = A^T x (collective); returns y.")
      .def("cg", [](const CSR &A, nb::handle b, nb::handle x, double rtol, int maxit) {
        nb::object out = x.is_none() ? numpy().attr("zeros")(A.nlocal) : nb::borrow(x);
        Buffer bb = doubles(b, "b", A.nlocal, false), xb = doubles(out, "x", A.nlocal, true);
        stf_cg_result r{};
        run([&] {
          return stf_cg_solve(A.A, static_cast<const double *>(bb.data), static_cast<double *>(xb.data), rtol, maxit, &r);
        });
        return nb::make_tuple(out, cg_result(r));
      }, "b"_a, "x"_a = nb::none(), "rtol"_a = 1e-8, "maxit"_a = 1000,
      "Unpreconditioned CG from x (zeros if None): (x, {iterations, residual_norm, converged, host_syncs}).");

  m.def("_mm_read", [](const std::string &path) {
    struct Coo {  // freed however this ends
      stf_coo m{};
      ~Coo() { stf_coo_free(&m); }
    } coo;
    check(stf_mm_read(path.c_str(), &coo.m));
    const stf_coo &c = coo.m;
    nb::object row = numpy().attr("empty")(c.nnz, "dtype"_a = "int64");
    nb::object col = numpy().attr("empty")(c.nnz, "dtype"_a = "int64");
    nb::object val = numpy().attr("empty")(c.nnz, "dtype"_a = "float64");
    if (c.nnz) {
      std::memcpy(data_of<int64_t>(row), c.row, sizeof(int64_t) * c.nnz);
      std::memcpy(data_of<int64_t>(col), c.col, sizeof(int64_t) * c.nnz);
      std::memcpy(data_of<double>(val), c.val, sizeof(double) * c.nnz);
    }
    return nb::make_tuple(c.nrows, c.ncols, row, col, val);
  }, "path"_a, "(nrows, ncols, row, col, val) of a Matrix Market file (plain or gzip).");
}

}  // namespace

void bind_apps(nb::module_ &m) {
  bind_vecscatter(m);
  bind_grid(m);
  bind_csr(m);
}

}  // namespace stfpy
