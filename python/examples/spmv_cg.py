"""Distributed SpMV and CG on a scipy.sparse matrix (the CSR app): every rank
passes the same global matrix and keeps its rows. The product is checked
against scipy; CG must converge on the default Poisson matrix (a file's
matrix may be too ill-conditioned for unpreconditioned CG: only reported).
Run: mpiexec -n 4 python spmv_cg.py [matrix.mtx(.gz)]"""
import sys

import numpy as np
import scipy.sparse as sp
from mpi4py import MPI

import starforest as stf

comm = MPI.COMM_WORLD
if len(sys.argv) > 1:
    A = stf.read_matrix_market(sys.argv[1]).tocsr()
else:  # 2D Poisson, 30 x 30
    m = 30
    T = sp.diags([-1.0, 4.0, -1.0], [-1, 0, 1], shape=(m, m))
    A = (sp.kron(sp.identity(m), T) + sp.kron(sp.diags([-1.0, -1.0], [-1, 1], shape=(m, m)), sp.identity(m))).tocsr()
M = stf.CSR(comm, A, partition="nnz")
rows = slice(M.first_row, M.first_row + M.nlocal)
x = np.random.default_rng(0).random(A.shape[0])
y = M.mult(x[rows])
want = A @ x
ok = np.allclose(y, want[rows], rtol=1e-12, atol=1e-12 * np.abs(want).max())
b = (A @ np.ones(A.shape[0]))[rows]
sol, info = M.cg(b, rtol=1e-10, maxit=2000)
ok = comm.allreduce(bool(ok), MPI.LAND)
if comm.rank == 0:
    print(f"{A.shape[0]} rows, {A.nnz} nonzeros on {comm.size} ranks: SpMV {'matches scipy' if ok else 'WRONG'}; "
          f"CG {info['iterations']} iterations, residual {info['residual_norm']:.2e}"
          f"{'' if info['converged'] else ' (not converged)'}")
ok = ok and (info["converged"] or len(sys.argv) > 1)
sys.exit(0 if ok else 1)
