/* starforest apps: what users build on star forests, written on the public
 * API only: Matrix Market reading, a distributed CSR matrix with its SpMV
 * and CG (host and device), structured grids, vector scatters and mesh
 * redistribution. Link with starforest::apps (CMake) or starforest_apps
 * (pkg-config). */
#ifndef STF_APPS_H
#define STF_APPS_H

#include <stdint.h>

#include "starforest.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Errors: as in starforest.h. A failing apps call returns an stf_error code
 * and stf_last_error_message() explains it (the same channel as the core
 * library's, also when the failure came from a core call inside it).
 * stf_coo_free and stf_points_free cannot fail. Collective calls given the
 * same arguments on every rank fail on every rank alike for bad arguments;
 * other failures are local, as in the core library. */

/* ---- Matrix Market ------------------------------------------------------- */

/* A sparse matrix as coordinate triples, 0-based, in file order. Symmetric
 * and skew-symmetric files are expanded: every stored off-diagonal entry
 * (i, j, v) also yields (j, i, v), respectively (j, i, -v). Pattern files get
 * value 1. */
typedef struct {
  int64_t nrows, ncols;
  int64_t nnz; /* entries after expansion */
  int64_t *row, *col;
  double *val;
} stf_coo;

/* Read a Matrix Market coordinate file (real, integer or pattern; general,
 * symmetric or skew-symmetric), plain or gzip-compressed (detected from the
 * content, not the name; gzip needs a build with zlib, STF_ERR_UNSUPPORTED
 * otherwise). On error: STF_ERR_ARG for malformed input with the
 * line number in the message, STF_ERR_UNSUPPORTED for valid but unsupported
 * kinds (array format, complex, hermitian), STF_ERR_ARG for a file that
 * cannot be opened, STF_ERR_MEMORY; *out is then empty. Free with
 * stf_coo_free. Not collective. */
int stf_mm_read(const char *path, stf_coo *out);
/* Same, from a string in memory (plain text). */
int stf_mm_parse(const char *text, int64_t length, stf_coo *out);
/* Free the arrays of a matrix and zero it; NULL is ignored. */
void stf_coo_free(stf_coo *m);


/* ---- distributed CSR matrix ---------------------------------------------- *
 * Rows are split into contiguous blocks, one per rank; columns use the same
 * split (the matrix must be square). Each rank stores its rows as a diagonal
 * block (columns it owns) and an off-diagonal block whose columns are
 * compacted to the ghost entries it needs; the ghost SF brings those entries
 * from their owners. */

typedef struct stf_csr_s *stf_csr;

typedef enum {
  STF_PARTITION_ROWS, /* about the same number of rows per rank */
  STF_PARTITION_NNZ   /* about the same number of nonzeros per rank */
} stf_partition;

/* Collective. Every rank passes the same global matrix (for example each one
 * read the same file) and keeps its own rows. Duplicate entries are summed.
 * STF_ERR_ARG for a non-square matrix, INT_MAX rows or more (row pointers
 * count in stf_int), an index outside the matrix, or ranks that pass
 * different matrices or partitions (one allreduce of a fingerprint of every
 * entry). Errors are agreed: one rank's bad input fails the call on all. */
int stf_csr_create(MPI_Comm comm, const stf_coo *global, stf_partition how, stf_csr *A);
/* Collective. Sets *A to NULL. */
int stf_csr_destroy(stf_csr *A);
/* Sizes: global rows, this rank's rows, its first global row, its ghost
 * entries, its stored nonzeros. Any pointer may be NULL. */
int stf_csr_get_info(stf_csr A, int64_t *nglobal, stf_int *nlocal, int64_t *first_row, stf_int *nghost,
                     int64_t *nnz_local);
/* The ghost SF (owned by A): roots = this rank's x entries, leaves = ghosts. */
int stf_csr_get_ghost_sf(stf_csr A, stf_sf *sf);
/* Global column index of each ghost entry (owned by A, nghost entries, ascending). */
int stf_csr_get_ghost_columns(stf_csr A, const int64_t **columns);
/* y = A x on this rank's parts (nlocal entries each). The diagonal block is
 * multiplied while the ghost entries travel. Collective. */
int stf_csr_mult(stf_csr A, const double *x, double *y);
/* y = A^T x: off-diagonal contributions travel back to their owners with a
 * reduce (MPI_SUM) while the diagonal block is multiplied. Collective. */
int stf_csr_mult_transpose(stf_csr A, const double *x, double *y);
/* y = A x on this rank's rows from x and ghost values already at hand
 * (nghost entries, in the order of stf_csr_get_ghost_columns): the local
 * product of stf_csr_mult without the exchange. Not collective. */
int stf_csr_mult_local(stf_csr A, const double *x, const double *ghost, double *y);

/* How this rank's rows are stored. Consecutive rows of the same length are
 * multiplied together in groups of up to 8 (one accumulator per row, values
 * stored entry by entry across the group); rows that also have the same
 * columns (an inode: the unknowns of one mesh node) share one column list,
 * so each x entry is read once for the group. The off-diagonal block stores
 * only its rows with entries. */
typedef struct {
  stf_int diag_groups;      /* row groups of the diagonal block (nlocal rows) */
  stf_int diag_shared_rows; /* of its rows, those in groups with one column list */
  stf_int off_rows;         /* rows with off-diagonal entries */
  stf_int off_groups;       /* row groups of the off-diagonal block */
  stf_int off_shared_rows;  /* of off_rows, those in groups with one column list */
} stf_csr_layout;
int stf_csr_get_layout(stf_csr A, stf_csr_layout *layout);

/* ---- distributed CSR on a device ------------------------------------------ *
 * The matrix blocks copied to device memory of the active device (see
 * "devices" in starforest.h), the products run as kernels (one body, run
 * by "host" and "emu" and, in builds with CUDA, compiled for "cuda"), and
 * the ghost entries travel over the ghost SF on device data. Vectors live in device memory and follow the library stream
 * (stream model B): x is produced on it, y is ready on it after the call
 * (stf_device_synchronize before reading y on the host). */

/* Copy A's blocks to the active device and create its ghost buffer, second
 * stream and events there. Once per matrix; freed by stf_csr_destroy. The
 * host copy stays and stf_csr_mult keeps working. Not collective. */
int stf_csr_to_device(stf_csr A);

/* Three SpMV variants, after the GPU SpMV and stream discussions of Zhang
 * et al., "The PetscSF Scalable Communication Layer", IEEE TPDS 33(4), 2022,
 * and Mills et al., "Toward performance-portable PETSc for GPU-based exascale
 * systems", Parallel Computing 108, 2021. Each overlaps the diagonal
 * product with the ghost exchange; they differ in where the host waits. */
typedef enum {
  /* Split phase, stream model B: bcast begin waits for the library stream
   * (x must be ready before MPI reads it), then the diagonal product is
   * launched; end unpacks; the off-diagonal product follows on the stream. */
  STF_CSR_MULT_SPLIT = 0,
  /* Stream model C: begin packs without waiting, the diagonal product is
   * launched at once behind the pack; end waits for the pack's event (not
   * for the diagonal product), posts the sends and unpacks. */
  STF_CSR_MULT_EVENT = 1,
  /* Two streams: the diagonal product runs on A's second stream, which waits
   * for x with an event and is launched before the exchange's begin (model
   * B) waits for the library stream; the unpack and the off-diagonal
   * product stay on the library stream, which joins the second stream with
   * an event before adding the off-diagonal part. */
  STF_CSR_MULT_TWO_STREAMS = 2
} stf_csr_mult_variant;

/* y = A x with x and y in device memory (nlocal entries each), after
 * stf_csr_to_device. Sets the ghost SF's stream model for the variant.
 * STF_ERR_STATE before stf_csr_to_device; STF_ERR_ARG for host vectors
 * on a device other than "host". Collective. */
int stf_csr_mult_device(stf_csr A, const double *x, double *y, stf_csr_mult_variant variant);

/* Host waits of stf_csr_mult_device since stf_csr_to_device, measured as
 * the ghost SF's device_stream_syncs + device_syncs (stf_get_stats) across
 * the exchange's begin and across its end. The SpMV code itself never waits:
 * it only enqueues kernels, events and the exchange. */
typedef struct {
  long long mults;
  long long waits_in_begin;
  long long waits_in_end;
} stf_csr_sync_counts;
int stf_csr_get_sync_counts(stf_csr A, stf_csr_sync_counts *counts);

/* ---- conjugate gradient -------------------------------------------------- */

typedef struct {
  int iterations;        /* iterations done */
  double residual_norm;  /* ||b - A x|| (recursive residual) at the end */
  int converged;         /* 1 if ||r|| <= rtol * ||b|| */
  long long host_syncs;  /* points where the host waited for a global result (allreduces) */
  /* Device CGs (0 from stf_cg_solve): host_syncs counts every host wait
   * (stream or event waits, blocking copies, blocking MPI calls) during the
   * solve, set-up and final read included; of them: */
  long long mult_syncs;      /* waits inside the SpMV's ghost exchange */
  long long loop_syncs;      /* waits of the CG code itself inside its iterations */
} stf_cg_result;

/* Unpreconditioned CG for SPD A, starting from x (this rank's part), until
 * ||r|| <= rtol * ||b|| or maxit iterations. Collective. */
int stf_cg_solve(stf_csr A, const double *b, double *x, double rtol, int maxit, stf_cg_result *result);

/* The same CG on device vectors (b, x: nlocal entries in device memory,
 * after stf_csr_to_device; SpMV by variant). Dot products are kernels; the
 * host reads each local dot (a stream wait), sums it with a blocking
 * MPI_Allreduce, computes the scalars and checks convergence: two stream
 * waits and two allreduces per iteration. history (host, maxit + 1 entries,
 * may be NULL) gets ||r|| before each iteration and at the end. x is ready
 * on return. Collective. */
int stf_cg_solve_device(stf_csr A, const double *b, double *x, double rtol, int maxit,
                        stf_csr_mult_variant variant, double *history, stf_cg_result *result);

/* CGAsync: exactly `iterations` CG iterations on device vectors in which the
 * host never waits for a dot product or a scalar. Dot products, their global
 * sums and the scalar updates (alpha, beta) are work on the library stream:
 * the local sum is copied to host memory (pinned on "cuda"), summed over the
 * ranks by an MPI_Allreduce in a host function enqueued on the stream, and
 * copied back, where a one-item kernel updates the scalars (a
 * stream-ordered reduction). Needs MPI_THREAD_MULTIPLE on a device other
 * than "host" (STF_ERR_UNSUPPORTED otherwise): the host functions run on the
 * device's threads (CUDA's callback thread on "cuda"; an MPI that calls CUDA
 * from MPI_Allreduce on host memory would break CUDA's rule for host
 * functions). The only host waits inside an iteration are those of the SpMV's
 * ghost exchange (result->mult_syncs). history as above (iterations + 1
 * entries), copied once at the end; converged reports ||r|| <= rtol ||b||
 * after the last iteration (no early exit). A non-SPD matrix (p^T A p <= 0
 * with r != 0) is found at the end: STF_ERR_ARG. Collective. */
int stf_cg_solve_async(stf_csr A, const double *b, double *x, double rtol, int iterations,
                       stf_csr_mult_variant variant, double *history, stf_cg_result *result);


/* ---- structured grids ---------------------------------------------------- *
 * A 1D, 2D or 3D box of points split over a process grid; each rank owns a box
 * and works on it with a ghost layer. Vectors store points with x fastest,
 * then y, then z, and dof values per point innermost. A "global" vector is
 * this rank's owned box; a "local" vector is its ghosted box (owned box
 * widened by width points on each side, clipped at non-periodic domain
 * boundaries). */

typedef struct stf_grid_s *stf_grid;

typedef enum {
  STF_STENCIL_STAR, /* ghosts across faces only */
  STF_STENCIL_BOX   /* faces, edges and corners */
} stf_stencil;

typedef struct {
  int dim;            /* 1, 2 or 3 */
  int64_t n[3];       /* global points per direction (those past dim are ignored) */
  int procs[3];       /* process grid; 0 entries are chosen (MPI_Dims_create) */
  int periodic[3];    /* 1: periodic in that direction */
  stf_stencil stencil;
  int width;          /* ghost width >= 1 */
  int dof;            /* values per point >= 1 */
  const char *options; /* options of this grid's SF, e.g. "-stf_type neighbor" (NULL: the defaults) */
} stf_grid_desc;

/* Collective. STF_ERR_ARG for a bad description or a process grid that does
 * not fit the communicator (or has more ranks than points in a direction),
 * on every rank when every rank passes the same description;
 * STF_ERR_OPTION for bad options. */
int stf_grid_create(MPI_Comm comm, const stf_grid_desc *desc, stf_grid *grid);
int stf_grid_destroy(stf_grid *grid);
/* Owned and ghosted boxes: first global point and size per direction. Ghosted
 * starts may be negative or sizes run past n in periodic directions. */
int stf_grid_get_boxes(stf_grid grid, int64_t owned_start[3], int64_t owned_size[3], int64_t ghost_start[3],
                       int64_t ghost_size[3]);
/* Lengths (in doubles: points * dof) of this rank's global vector (owned
 * box) and local vector (ghosted box). Any pointer may be NULL. */
int stf_grid_get_sizes(stf_grid grid, int64_t *global_len, int64_t *local_len);
/* The process grid and this rank's position in it (x fastest: rank =
 * (coords[2] * procs[1] + coords[1]) * procs[0] + coords[0]). */
int stf_grid_get_procs(stf_grid grid, int procs[3], int coords[3]);
/* The ranks this rank exchanges ghost points with, ascending, not itself
 * (up to 2 in 1D, 8 in 2D, 26 in 3D with the box stencil). Owned by the grid. */
int stf_grid_get_neighbors(stf_grid grid, int *n, const int **ranks);
/* The grid's SF (owned by the grid) and its unit (dof doubles). */
int stf_grid_get_sf(stf_grid grid, stf_sf *sf, MPI_Datatype *unit);
/* local = global on the owned part and the ghosts (bcast, MPI_REPLACE). Points
 * of the ghosted box that are no ghost (corners with a star stencil) are left
 * as they are. Split phase: compute on the interior between begin and end
 * (or poll with stf_test on the grid's SF); until end both vectors belong
 * to the grid. A failed begin leaves *req NULL. Collective. */
int stf_grid_global_to_local_begin(stf_grid grid, const double *global, double *local, stf_request *req);
int stf_grid_global_to_local_end(stf_grid grid, stf_request *req);
int stf_grid_global_to_local(stf_grid grid, const double *global, double *local);
/* global += every local value of the same point, owned part and ghosts alike
 * (reduce, MPI_SUM). Split phase as above. Collective. */
int stf_grid_local_to_global_begin(stf_grid grid, const double *local, double *global, stf_request *req);
int stf_grid_local_to_global_end(stf_grid grid, stf_request *req);
int stf_grid_local_to_global(stf_grid grid, const double *local, double *global);
/* global = the owned part of local (PETSc's local-to-global with
 * INSERT_VALUES): ghosts are not read. No communication, not collective. */
int stf_grid_local_to_global_insert(stf_grid grid, const double *local, double *global);


/* ---- vector scatter ------------------------------------------------------ *
 * Distributed vectors with contiguous ownership (rank 0 owns the first
 * entries); each rank names the global entries it needs, in any order
 * (repeats allowed), and gets them in a local ghost vector, entry i of the
 * ghost vector holding global entry global[i]. */

typedef struct stf_vecscatter_s *stf_vecscatter;

typedef enum {
  STF_INSERT_VALUES, /* overwrite the destination */
  STF_ADD_VALUES     /* add into the destination */
} stf_insert_mode;

/* Collective. nowned: entries this rank owns; global: the nneeded global
 * indices it needs. STF_ERR_ARG for an index outside the vector. */
int stf_vecscatter_create(MPI_Comm comm, stf_int nowned, stf_int nneeded, const stf_gint *global,
                          stf_vecscatter *vs);
/* PETSc's VecScatterCreateToAll and ToZero: the ghost vector is the whole
 * vector (all N entries, in order) on every rank, or on rank 0 only (the
 * others get none). Collective. */
int stf_vecscatter_create_to_all(MPI_Comm comm, stf_int nowned, stf_vecscatter *vs);
int stf_vecscatter_create_to_zero(MPI_Comm comm, stf_int nowned, stf_vecscatter *vs);
/* PETSc's VecScatterCreate(x, ix, y, iy) between two distributed vectors:
 * x with nx entries here, y with ny (contiguous ownership each), and n
 * pairs named on this rank (any rank may name any pair): forward sets
 * y[iy[k]] = (or +=) x[ix[k]], reverse x[ix[k]] += (or =) y[iy[k]]; the
 * scatter's "owned" vector is x, its "ghost" vector y (ny entries here).
 * Each entry of y may be named by one pair over all ranks. Errors, agreed
 * on every rank: STF_ERR_ARG for an index outside its vector or negative
 * counts, STF_ERR_DUPLICATE for an entry of y named twice, STF_ERR_NULL for
 * a NULL array with n > 0. Collective. */
int stf_vecscatter_create_general(MPI_Comm comm, stf_int nx, stf_int ny, stf_int n, const stf_gint *ix,
                                  const stf_gint *iy, stf_vecscatter *vs);
int stf_vecscatter_destroy(stf_vecscatter *vs);
/* The SF underneath (owned by vs): roots = owned entries, leaves = ghost entries. */
int stf_vecscatter_get_sf(stf_vecscatter vs, stf_sf *sf);
/* Forward: ghost[i] = (or +=) owned value of global[i]. Split phase; the
 * request is an ordinary starforest request. unit: MPI_DOUBLE, or any unit
 * of the same layout on both sides (several values per entry). Either
 * vector may be in device memory (see "devices" in starforest.h: units of
 * one builtin type there; device results may still be in flight on the
 * library stream after end, stf_device_synchronize before host reads). */
int stf_vecscatter_forward_begin(stf_vecscatter vs, MPI_Datatype unit, const void *owned, void *ghost,
                                 stf_insert_mode mode, stf_request *req);
int stf_vecscatter_forward_end(stf_vecscatter vs, stf_request *req);
/* Reverse: owned[g] += every ghost entry naming g (ADD), or owned[g] = the
 * ghost entry naming g (INSERT; entries no ghost names are left alone).
 * INSERT needs every owned entry named by at most one ghost entry over all
 * ranks (a to-zero scatter, not a to-all one): the first reverse INSERT
 * checks it (degrees and one allreduce) and refuses it on every rank
 * otherwise (STF_ERR_ARG). */
int stf_vecscatter_reverse_begin(stf_vecscatter vs, MPI_Datatype unit, const void *ghost, void *owned,
                                 stf_insert_mode mode, stf_request *req);
int stf_vecscatter_reverse_end(stf_vecscatter vs, stf_request *req);


/* ---- mesh redistribution ------------------------------------------------- *
 * Points with coordinates and integer labels, moved to new owners with the
 * migration SF of the graph algebra (stf_create_migration). */

typedef struct {
  stf_int n;       /* points on this rank */
  int dim;         /* coordinates per point, 1..3 */
  double *coords;  /* n * dim, point-major */
  int64_t *labels; /* n */
} stf_points;

typedef enum {
  STF_DIST_SEQ,    /* every point on rank 0 */
  STF_DIST_CHUNKS, /* contiguous blocks of labels, balanced */
  STF_DIST_RAND    /* each point on a random rank (seeded) */
} stf_point_dist;

/* Collective: nglobal points labelled 0..nglobal-1, coordinates a fixed
 * function of the label in the unit cube, distributed as dist. Free with
 * stf_points_free. */
int stf_points_create_test(MPI_Comm comm, int64_t nglobal, int dim, stf_point_dist dist, unsigned seed,
                           stf_points *points);
void stf_points_free(stf_points *points);
/* Collective: target[i] = rank that should own point i, by recursive
 * coordinate bisection (cut across the longest side of each group's bounding
 * box, ranks split in halves, points in proportion). */
int stf_rcb_partition(MPI_Comm comm, const stf_points *points, int *target);
/* Collective: move every point to target[i]. out receives the points that
 * arrive, ordered by (source rank, source index); *sf (may be NULL) gets the
 * migration SF, to move more point data the same way. */
int stf_points_migrate(MPI_Comm comm, const stf_points *in, const int *target, stf_points *out, stf_sf *sf);

#ifdef __cplusplus
}
#endif

#endif /* STF_APPS_H */
