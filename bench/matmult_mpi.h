// The hand-written MPI baseline of the matmult benchmark: this rank's rows
// of a matrix as diagonal and off-diagonal CSR blocks, and a ghost exchange
// with precomputed index lists (MPI_Irecv/MPI_Isend, no library). Built from
// the global matrix and the row split alone, independently of starforest.
#pragma once

#include <mpi.h>
#include <stf_apps.h>

#include <cstdint>
#include <vector>

namespace bench {

struct LocalCsr {
  std::vector<int64_t> rowptr;
  std::vector<int> col;  // local column (diagonal block) or ghost index
  std::vector<double> val;
  void multiply(const double *x, double *y, bool add) const;
};

class MpiSpmv {
 public:
  // first: first global row of every rank (size + 1 entries). Collective.
  MpiSpmv(MPI_Comm comm, const stf_coo &g, const std::vector<int64_t> &first);
  ~MpiSpmv();

  // Ghost values, in ascending global column order, from their owners.
  void scatter_begin(const double *x, double *ghost);
  void scatter_end();
  // y = A x with the exchange overlapped with the diagonal block.
  void mult(const double *x, double *y);
  // The local part alone, from ghost values at hand: the plain row loop.
  void mult_local(const double *x, const double *ghost, double *y) const;

  const std::vector<int64_t> &ghost_columns() const { return ghost_cols_; }
  int nlocal() const { return nlocal_; }
  long messages() const { return (long)recv_from_.size(); }

 private:
  MPI_Comm comm_;
  int nlocal_ = 0;
  LocalCsr diag_, offdiag_;
  std::vector<int64_t> ghost_cols_;
  std::vector<double> ghost_;
  // Receives: one contiguous range of the ghost array per owner.
  std::vector<int> recv_from_, recv_offset_, recv_count_;
  // Sends: my local entries each peer needs, grouped per peer.
  std::vector<int> send_to_, send_offset_, send_index_;
  std::vector<double> send_buf_;
  std::vector<MPI_Request> reqs_;
};

}  // namespace bench
