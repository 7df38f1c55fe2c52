// Distributed CSR matrix: row-block partition, diagonal / off-diagonal split
// with compacted ghost columns, and the ghost SF that feeds SpMV.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <new>
#include <numeric>
#include <vector>

#include "apps_error.h"
#include "csr.h"
#include "csr_kernels.h"

namespace stf_apps {
namespace {

// First global row of each rank (size + 1 entries).
std::vector<int64_t> split_rows(const stf_coo &g, stf_partition how, int size) {
  std::vector<int64_t> first(size + 1);
  if (how == STF_PARTITION_ROWS) {
    for (int p = 0; p <= size; p++) first[p] = g.nrows * p / size;
    return first;
  }
  std::vector<int64_t> prefix(g.nrows + 1, 0);
  for (int64_t k = 0; k < g.nnz; k++) prefix[g.row[k] + 1]++;
  for (int64_t r = 0; r < g.nrows; r++) prefix[r + 1] += prefix[r];
  first[0] = 0;
  for (int p = 1; p < size; p++) {
    int64_t target = g.nnz * p / size;
    int64_t r = std::lower_bound(prefix.begin(), prefix.end(), target) - prefix.begin();
    first[p] = std::max(first[p - 1], std::min<int64_t>(r, g.nrows));
  }
  first[size] = g.nrows;
  return first;
}

// Block from (row, col, val) triples: sorted by (row, col), duplicates
// summed, then grouped (csr_block.h). compress: store only rows with entries.
void build_block(stf_int nrows, std::vector<std::pair<std::pair<stf_int, stf_int>, double>> &entries, bool compress,
                 CsrBlock *b) {
  std::sort(entries.begin(), entries.end(),
            [](const auto &a, const auto &c) { return a.first < c.first; });
  std::vector<stf_int> rowptr(nrows + 1, 0), col;
  std::vector<double> val;
  for (std::size_t k = 0; k < entries.size(); k++) {
    if (k > 0 && entries[k].first == entries[k - 1].first) {
      val.back() += entries[k].second;
      continue;
    }
    rowptr[entries[k].first.first + 1]++;
    col.push_back(entries[k].first.second);
    val.push_back(entries[k].second);
  }
  for (stf_int r = 0; r < nrows; r++) rowptr[r + 1] += rowptr[r];
  b->assign(nrows, rowptr, col, val, compress);
}

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdULL;
}

// What this rank got is fit to build from: the local part of the agreement.
int check_input(const stf_coo *g, int how) {
  if (!g) return fail(STF_ERR_NULL, "global matrix is NULL");
  if (how != STF_PARTITION_ROWS && how != STF_PARTITION_NNZ) return fail(STF_ERR_ARG, "unknown partition %d", how);
  if (g->nrows != g->ncols)
    return fail(STF_ERR_ARG, "the matrix is %lld x %lld; only square matrices are supported",
                static_cast<long long>(g->nrows), static_cast<long long>(g->ncols));
  // Row pointers have nrows + 1 entries, a count that must fit in stf_int.
  if (g->nrows < 0 || g->nrows >= INT_MAX)
    return fail(STF_ERR_ARG, "%lld rows: the row count must lie in [0, INT_MAX)", static_cast<long long>(g->nrows));
  if (g->nnz < 0 || (g->nnz > 0 && (!g->row || !g->col || !g->val)))
    return fail(STF_ERR_ARG, "nnz = %lld with %s arrays", static_cast<long long>(g->nnz), g->nnz < 0 ? "any" : "NULL");
  for (int64_t k = 0; k < g->nnz; k++)
    if (g->row[k] < 0 || g->row[k] >= g->nrows || g->col[k] < 0 || g->col[k] >= g->ncols)
      return fail(STF_ERR_ARG, "entry %lld has an index outside the matrix", static_cast<long long>(k));
  return STF_SUCCESS;
}

// Every rank must pass the same matrix and partition, and a problem on one
// rank (a bad index, a NULL matrix) must fail on all of them instead of
// leaving the others in the collective calls that follow: one allreduce of
// the lowest failing rank with its code, and of a fingerprint of the input
// (every entry's row, column and value bits) and its complement, whose
// maxima differ from each other's complement exactly when two ranks differ.
int agree_on_input(MPI_Comm comm, const stf_coo *g, int how) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int local = check_input(g, how);
  std::uint64_t h = 0;
  if (!local) {
    h = mix(mix(mix(mix(h, static_cast<std::uint64_t>(g->nrows)), static_cast<std::uint64_t>(g->ncols)),
                static_cast<std::uint64_t>(g->nnz)),
            static_cast<std::uint64_t>(how));
    for (int64_t k = 0; k < g->nnz; k++) {
      std::uint64_t bits;
      std::memcpy(&bits, &g->val[k], sizeof bits);
      h = mix(mix(mix(h, static_cast<std::uint64_t>(g->row[k])), static_cast<std::uint64_t>(g->col[k])), bits);
    }
  }
  std::uint64_t v[3] = {local ? (static_cast<std::uint64_t>(size - rank) << 32) | static_cast<std::uint32_t>(local) : 0,
                        h, ~h};
  if (MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_UINT64_T, MPI_MAX, comm) != MPI_SUCCESS)
    return fail(STF_ERR_MPI, "stf_csr_create: MPI_Allreduce failed");
  if (local) return local;  // this rank's own message
  if (v[0])
    return fail(static_cast<int>(v[0] & 0xffffffffu), "stf_csr_create: rank %d passed a bad matrix or partition",
                size - static_cast<int>(v[0] >> 32));
  if (v[1] != ~v[2])
    return fail(STF_ERR_ARG, "stf_csr_create: the ranks passed different matrices or partitions (each must pass "
                             "the same global matrix)");
  return STF_SUCCESS;
}

int build(MPI_Comm comm, const stf_coo &g, stf_partition how, stf_csr A) {
  if (MPI_Comm_dup(comm, &A->comm) != MPI_SUCCESS) return fail(STF_ERR_MPI, "MPI_Comm_dup failed");
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::vector<int64_t> first = split_rows(g, how, size);
  A->nglobal = g.nrows;
  A->first = first[rank];
  A->nlocal = static_cast<stf_int>(first[rank + 1] - first[rank]);
  const int64_t lo = first[rank], hi = first[rank + 1];

  std::vector<int64_t> ghosts;
  for (int64_t k = 0; k < g.nnz; k++) {  // indices checked by agree_on_input
    if (g.row[k] >= lo && g.row[k] < hi && (g.col[k] < lo || g.col[k] >= hi)) ghosts.push_back(g.col[k]);
  }
  std::sort(ghosts.begin(), ghosts.end());
  ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
  A->ghost_cols = ghosts;
  A->nghost = static_cast<stf_int>(ghosts.size());

  std::vector<std::pair<std::pair<stf_int, stf_int>, double>> diag, off;
  for (int64_t k = 0; k < g.nnz; k++) {
    if (g.row[k] < lo || g.row[k] >= hi) continue;
    stf_int r = static_cast<stf_int>(g.row[k] - lo);
    if (g.col[k] >= lo && g.col[k] < hi) {
      diag.push_back({{r, static_cast<stf_int>(g.col[k] - lo)}, g.val[k]});
    } else {
      stf_int c = static_cast<stf_int>(std::lower_bound(ghosts.begin(), ghosts.end(), g.col[k]) - ghosts.begin());
      off.push_back({{r, c}, g.val[k]});
    }
  }
  build_block(A->nlocal, diag, false, &A->diag);
  build_block(A->nlocal, off, true, &A->off);

  int rc = stf_create_from_global_indices(comm, A->nlocal, A->nghost, ghosts.data(), &A->ghost_sf);
  if (rc) return fail(rc, "building the ghost SF: %s", stf_last_error_message());
  A->ghost.assign(A->nghost, 0.0);
  A->ghost_t.assign(A->nghost, 0.0);
  A->work.assign(A->nlocal, 0.0);
  const stf_int *degree = nullptr;
  if (int rc = stf_compute_degree(A->ghost_sf, &degree))
    return fail(rc, "ghost SF degrees: %s", stf_last_error_message());
  for (stf_int r = 0; r < A->nlocal; r++)
    if (degree[r] > 0) A->ghosted_rows.push_back(r);
  A->alone = size == 1;
  return STF_SUCCESS;
}

// y = B x (accumulate: y += B x).
void multiply(const CsrBlock &b, const double *x, double *y, bool accumulate) {
  block_mult(b.view(), x, y, accumulate, 0, b.nseg());
}

// The transposed blocks, made at the first transposed product: gathers
// along their rows are much faster than scattering along A's rows.
int make_transposes(stf_csr A) {
  if (A->transposed) return STF_SUCCESS;
  try {
    A->diag_t = A->diag.transposed(A->nlocal);
    A->off_t = A->off.transposed(A->nghost);
  } catch (const std::bad_alloc &) {
    A->diag_t = A->off_t = CsrBlock{};
    return fail(STF_ERR_MEMORY, "out of memory while transposing the matrix");
  }
  A->transposed = true;
  return STF_SUCCESS;
}

int check(stf_csr A) { return A ? STF_SUCCESS : fail(STF_ERR_NULL, "the matrix handle is NULL"); }

}  // namespace
}  // namespace stf_apps

using namespace stf_apps;

extern "C" int stf_csr_create(MPI_Comm comm, const stf_coo *global, stf_partition how, stf_csr *A) try {
  if (!A) return fail(STF_ERR_NULL, "output matrix pointer is NULL");
  *A = nullptr;
  if (int rc = agree_on_input(comm, global, how)) return rc;
  stf_csr m = new (std::nothrow) stf_csr_s;
  if (!m) return fail(STF_ERR_MEMORY, "cannot allocate a matrix");
  int rc;
  try {
    rc = build(comm, *global, how, m);
  } catch (const std::bad_alloc &) {
    rc = fail(STF_ERR_MEMORY, "out of memory while distributing the matrix");
  }
  if (rc) {
    stf_csr_destroy(&m);
    return rc;
  }
  *A = m;
  return STF_SUCCESS;
} STF_APPS_CATCH

extern "C" int stf_csr_destroy(stf_csr *A) try {
  if (!A) return fail(STF_ERR_NULL, "pointer to the matrix handle is NULL");
  if (!*A) return STF_SUCCESS;
  const int rc_dev = release_device(*A);
  const int rc_sf = (*A)->ghost_sf ? core(stf_destroy(&(*A)->ghost_sf), "destroying the ghost SF") : STF_SUCCESS;
  if ((*A)->comm != MPI_COMM_NULL) MPI_Comm_free(&(*A)->comm);
  delete *A;
  *A = nullptr;
  return rc_dev ? rc_dev : rc_sf;
} STF_APPS_CATCH

extern "C" int stf_csr_get_info(stf_csr A, int64_t *nglobal, stf_int *nlocal, int64_t *first_row, stf_int *nghost,
                                int64_t *nnz_local) try {
  if (int rc = check(A)) return rc;
  if (nglobal) *nglobal = A->nglobal;
  if (nlocal) *nlocal = A->nlocal;
  if (first_row) *first_row = A->first;
  if (nghost) *nghost = A->nghost;
  if (nnz_local) *nnz_local = static_cast<int64_t>(A->diag.val.size() + A->off.val.size());
  return STF_SUCCESS;
} STF_APPS_CATCH

extern "C" int stf_csr_get_ghost_sf(stf_csr A, stf_sf *sf) try {
  if (int rc = check(A)) return rc;
  if (!sf) return fail(STF_ERR_NULL, "output SF pointer is NULL");
  *sf = A->ghost_sf;
  return STF_SUCCESS;
} STF_APPS_CATCH

extern "C" int stf_csr_get_ghost_columns(stf_csr A, const int64_t **columns) try {
  if (int rc = check(A)) return rc;
  if (!columns) return fail(STF_ERR_NULL, "output pointer is NULL");
  *columns = A->ghost_cols.data();
  return STF_SUCCESS;
} STF_APPS_CATCH

extern "C" int stf_csr_mult(stf_csr A, const double *x, double *y) try {
  if (int rc = check(A)) return rc;
  if (A->nlocal > 0 && (!x || !y)) return fail(STF_ERR_NULL, "x or y is NULL");
  if (A->alone) {
    multiply(A->diag, x, y, false);
    return STF_SUCCESS;
  }
  stf_request req = nullptr;
  if (int rc = core(stf_bcast_begin(A->ghost_sf, MPI_DOUBLE, x, A->ghost.data(), MPI_REPLACE, &req), "mult"))
    return rc;
  multiply(A->diag, x, y, false);
  if (int rc = core(stf_bcast_end(A->ghost_sf, &req), "mult")) return rc;
  multiply(A->off, A->ghost.data(), y, true);
  return STF_SUCCESS;
} STF_APPS_CATCH

extern "C" int stf_csr_mult_local(stf_csr A, const double *x, const double *ghost, double *y) try {
  if (int rc = check(A)) return rc;
  if ((A->nlocal > 0 && (!x || !y)) || (A->nghost > 0 && !ghost)) return fail(STF_ERR_NULL, "x, ghost or y is NULL");
  multiply(A->diag, x, y, false);
  multiply(A->off, ghost, y, true);
  return STF_SUCCESS;
} STF_APPS_CATCH

extern "C" int stf_csr_get_layout(stf_csr A, stf_csr_layout *layout) try {
  if (int rc = check(A)) return rc;
  if (!layout) return fail(STF_ERR_NULL, "layout is NULL");
  layout->diag_groups = A->diag.groups();
  layout->diag_shared_rows = A->diag.shared_rows();
  layout->off_rows = A->off.stored_rows();
  layout->off_groups = A->off.groups();
  layout->off_shared_rows = A->off.shared_rows();
  return STF_SUCCESS;
} STF_APPS_CATCH

extern "C" int stf_csr_mult_transpose(stf_csr A, const double *x, double *y) try {
  if (int rc = check(A)) return rc;
  if (A->nlocal > 0 && (!x || !y)) return fail(STF_ERR_NULL, "x or y is NULL");
  if (int rc = make_transposes(A)) return rc;
  if (A->alone) {
    multiply(A->diag_t, x, y, false);
    return STF_SUCCESS;
  }
  multiply(A->off_t, x, A->ghost_t.data(), false);
  stf_request req = nullptr;
  if (int rc = core(stf_reduce_begin(A->ghost_sf, MPI_DOUBLE, A->ghost_t.data(), A->work.data(), MPI_SUM, &req),
                    "mult_transpose"))
    return rc;
  multiply(A->diag_t, x, y, false);
  if (int rc = core(stf_reduce_end(A->ghost_sf, &req), "mult_transpose")) return rc;
  // Only rows that are someone's ghost receive sums: add them and leave work
  // zero for the next call.
  for (stf_int r : A->ghosted_rows) {
    y[r] += A->work[r];
    A->work[r] = 0.0;
  }
  return STF_SUCCESS;
} STF_APPS_CATCH
