#include "matmult_mpi.h"

#include <algorithm>

namespace bench {

void LocalCsr::multiply(const double *x, double *y, bool add) const {
  const int64_t n = (int64_t)rowptr.size() - 1;
  for (int64_t r = 0; r < n; ++r) {
    double s = add ? y[r] : 0.0;
    for (int64_t k = rowptr[r]; k < rowptr[r + 1]; ++k) s += val[k] * x[col[k]];
    y[r] = s;
  }
}

namespace {

// CSR from (row, column, value) triples of one block, rows 0..nrows-1.
// Duplicates stay separate entries: the product sums them anyway.
LocalCsr to_csr(int nrows, const std::vector<int64_t> &rows, const std::vector<int> &cols,
                const std::vector<double> &vals) {
  LocalCsr c;
  c.rowptr.assign(nrows + 1, 0);
  for (int64_t r : rows) c.rowptr[r + 1]++;
  for (int r = 0; r < nrows; ++r) c.rowptr[r + 1] += c.rowptr[r];
  c.col.resize(cols.size());
  c.val.resize(vals.size());
  std::vector<int64_t> next(c.rowptr.begin(), c.rowptr.end() - 1);
  for (size_t k = 0; k < rows.size(); ++k) {
    int64_t at = next[rows[k]]++;
    c.col[at] = cols[k];
    c.val[at] = vals[k];
  }
  return c;
}

}  // namespace

MpiSpmv::MpiSpmv(MPI_Comm comm, const stf_coo &g, const std::vector<int64_t> &first) : comm_(comm) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int64_t lo = first[rank], hi = first[rank + 1];
  nlocal_ = (int)(hi - lo);

  // My rows; off-block columns become ghosts, numbered in ascending order.
  std::vector<int64_t> drow, orow, ocol_global;
  std::vector<int> dcol;
  std::vector<double> dval, oval;
  for (int64_t k = 0; k < g.nnz; ++k) {
    if (g.row[k] < lo || g.row[k] >= hi) continue;
    if (g.col[k] >= lo && g.col[k] < hi) {
      drow.push_back(g.row[k] - lo);
      dcol.push_back((int)(g.col[k] - lo));
      dval.push_back(g.val[k]);
    } else {
      orow.push_back(g.row[k] - lo);
      ocol_global.push_back(g.col[k]);
      oval.push_back(g.val[k]);
    }
  }
  ghost_cols_ = ocol_global;
  std::sort(ghost_cols_.begin(), ghost_cols_.end());
  ghost_cols_.erase(std::unique(ghost_cols_.begin(), ghost_cols_.end()), ghost_cols_.end());
  std::vector<int> ocol(ocol_global.size());
  for (size_t k = 0; k < ocol.size(); ++k)
    ocol[k] = (int)(std::lower_bound(ghost_cols_.begin(), ghost_cols_.end(), ocol_global[k]) - ghost_cols_.begin());
  diag_ = to_csr(nlocal_, drow, dcol, dval);
  offdiag_ = to_csr(nlocal_, orow, ocol, oval);
  ghost_.resize(ghost_cols_.size());

  // Owners hold contiguous column ranges and the ghosts are sorted, so the
  // ghosts of one owner are one contiguous range.
  std::vector<int> need(size, 0);
  for (size_t i = 0; i < ghost_cols_.size();) {
    int owner = (int)(std::upper_bound(first.begin(), first.end(), ghost_cols_[i]) - first.begin()) - 1;
    size_t j = i;
    while (j < ghost_cols_.size() && ghost_cols_[j] < first[owner + 1]) ++j;
    recv_from_.push_back(owner);
    recv_offset_.push_back((int)i);
    recv_count_.push_back((int)(j - i));
    need[owner] = (int)(j - i);
    i = j;
  }

  // Tell every owner which of its entries I need (global indices).
  std::vector<int> give(size);
  MPI_Alltoall(need.data(), 1, MPI_INT, give.data(), 1, MPI_INT, comm);
  std::vector<int> sdispl(size + 1, 0), rdispl(size + 1, 0);
  for (int p = 0; p < size; ++p) {
    sdispl[p + 1] = sdispl[p] + need[p];
    rdispl[p + 1] = rdispl[p] + give[p];
  }
  std::vector<int64_t> asked(rdispl[size]);
  MPI_Alltoallv(ghost_cols_.data(), need.data(), sdispl.data(), MPI_INT64_T, asked.data(), give.data(),
                rdispl.data(), MPI_INT64_T, comm);
  send_offset_.push_back(0);
  for (int p = 0; p < size; ++p) {
    if (give[p] == 0) continue;
    send_to_.push_back(p);
    for (int k = rdispl[p]; k < rdispl[p + 1]; ++k) send_index_.push_back((int)(asked[k] - lo));
    send_offset_.push_back((int)send_index_.size());
  }
  send_buf_.resize(send_index_.size());
  reqs_.resize(recv_from_.size() + send_to_.size());
}

MpiSpmv::~MpiSpmv() = default;

void MpiSpmv::scatter_begin(const double *x, double *ghost) {
  const int tag = 31;
  size_t r = 0;
  for (size_t i = 0; i < recv_from_.size(); ++i)
    MPI_Irecv(ghost + recv_offset_[i], recv_count_[i], MPI_DOUBLE, recv_from_[i], tag, comm_, &reqs_[r++]);
  for (size_t i = 0; i < send_to_.size(); ++i) {
    for (int k = send_offset_[i]; k < send_offset_[i + 1]; ++k) send_buf_[k] = x[send_index_[k]];
    MPI_Isend(send_buf_.data() + send_offset_[i], send_offset_[i + 1] - send_offset_[i], MPI_DOUBLE,
              send_to_[i], tag, comm_, &reqs_[r++]);
  }
}

void MpiSpmv::scatter_end() { MPI_Waitall((int)reqs_.size(), reqs_.data(), MPI_STATUSES_IGNORE); }

void MpiSpmv::mult_local(const double *x, const double *ghost, double *y) const {
  diag_.multiply(x, y, false);
  offdiag_.multiply(ghost, y, true);
}

void MpiSpmv::mult(const double *x, double *y) {
  scatter_begin(x, ghost_.data());
  diag_.multiply(x, y, false);
  scatter_end();
  offdiag_.multiply(ghost_.data(), y, true);
}

}  // namespace bench
