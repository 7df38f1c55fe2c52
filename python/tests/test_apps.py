"""The apps from Python: vector scatter, structured grids, distributed CSR
(from scipy.sparse) with SpMV and CG, Matrix Market; each checked against
numpy/scipy computed from the global data."""
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import starforest as stf

MATRICES = Path(os.environ.get("STF_MATRIX_DIR", Path(__file__).resolve().parents[3] / "shared" / "matrices"))


def test_vecscatter(comm):
    rng = np.random.default_rng([81, comm.rank])
    nowned = int(rng.integers(1, 6))
    sizes = comm.allgather(nowned)
    first, total = sum(sizes[: comm.rank]), sum(sizes)
    need = rng.integers(0, total, 7)
    vs = stf.VecScatter(comm, nowned, need)
    assert vs.nghost == 7 and vs.sf.nroots == nowned
    owned = np.arange(first, first + nowned, dtype=float) * 2
    ghost = np.ones(7)
    vs.forward(owned, ghost)
    assert np.array_equal(ghost, need * 2.0)
    vs.forward_begin(owned, ghost, "add").end()
    assert np.array_equal(ghost, need * 4.0)
    back = np.zeros(nowned)
    with vs.reverse_begin(np.ones(7), back):
        pass
    counts = np.bincount(np.concatenate(comm.allgather(need)), minlength=total)
    assert np.array_equal(back, counts[first: first + nowned])
    with pytest.raises(stf.Error):
        vs.reverse(np.ones(7), back, "insert")
    two = np.zeros((7, 2))  # two values per entry
    vs.forward(np.stack([owned, -owned], axis=1), two)
    assert np.array_equal(two[:, 1], -need * 2.0)
    # To all, to zero; back from rank 0 with reverse insert.
    everywhere = stf.VecScatter.to_all(comm, nowned)
    whole = np.zeros(everywhere.nghost)
    everywhere.forward(owned, whole)
    assert np.array_equal(whole, np.arange(total) * 2.0)
    zero = stf.VecScatter.to_zero(comm, nowned)
    assert zero.nghost == (total if comm.rank == 0 else 0)
    on_zero = np.zeros(zero.nghost)
    zero.forward(owned, on_zero)
    zero.reverse(-on_zero, owned, "insert")
    assert np.array_equal(owned, -np.arange(first, first + nowned) * 2.0)


def test_vecscatter_general(comm):
    # x and y of different layouts; y entry j read from x[src[j]] (-1: not
    # named), named by rank j % size: the same pairs on every rank.
    nx, ny = 2 + comm.rank % 3, 4 - comm.rank % 2
    xs, ys = comm.allgather(nx), comm.allgather(ny)
    fx, fy = sum(xs[: comm.rank]), sum(ys[: comm.rank])
    src = np.random.default_rng(5).integers(-1, sum(xs), sum(ys))
    mine = [j for j in range(sum(ys)) if src[j] >= 0 and j % comm.size == comm.rank]
    vs = stf.VecScatter.general(comm, nx, ny, src[mine], mine)
    x = np.arange(fx, fx + nx, dtype=float) + 1
    y = np.full(ny, -1.0)
    vs.forward(x, y)
    want = np.where(src >= 0, src + 1.0, -1.0)[fy: fy + ny]
    assert np.array_equal(y, want)
    back = np.zeros(nx)
    vs.reverse(np.ones(ny), back)
    counts = np.bincount(src[src >= 0], minlength=sum(xs))[fx: fx + nx]
    assert np.array_equal(back, counts)
    with pytest.raises(ValueError, match="one pair per entry"):
        stf.VecScatter.general(comm, nx, ny, [0, 0], [0])


@pytest.mark.parametrize("dim,stencil,dof", [(1, "star", 1), (2, "star", 1), (2, "box", 2), (3, "box", 1)])
def test_grid(comm, dim, stencil, dof):
    n = (7, 5, 4)[:dim]
    grid = stf.Grid(comm, n, periodic=[True] + [False] * (dim - 1), stencil=stencil, width=1, dof=dof)
    (ostart, osize), (gstart, gsize) = grid.owned_box, grid.ghost_box
    glob = grid.global_vector()
    assert glob.shape == tuple(reversed(osize)) + ((dof,) if dof > 1 else ())

    def value(point, d):  # a function of the global point and dof
        x = point[0] % n[0]
        return float(x + 10 * (point[1] if dim >= 2 else 0) + 100 * (point[2] if dim == 3 else 0) + 1000 * d)

    for idx in np.ndindex(*glob.shape):
        pt = [ostart[k] + idx[dim - 1 - k] for k in range(dim)]
        glob[idx] = value(pt, idx[dim] if dof > 1 else 0)
    local = grid.local_vector()
    local[...] = -1.0
    grid.global_to_local(glob, local)
    assert np.array_equal(grid.interior(local), glob)
    for idx in np.ndindex(*local.shape):
        pt = [gstart[k] + idx[dim - 1 - k] for k in range(dim)]
        off = sum(pt[k] < ostart[k] or pt[k] >= ostart[k] + osize[k] for k in range(dim))
        if stencil == "star" and off > 1:
            continue  # corners are no ghosts with a star stencil
        assert local[idx] == value(pt, idx[dim] if dof > 1 else 0), (idx, pt)
    total = np.zeros_like(glob)
    grid.local_to_global(np.ones_like(local), total)
    assert total.min() >= 1 and comm.allreduce(total.sum()) >= np.prod(n) * dof
    assert grid.sf.nroots == np.prod(osize)
    # The split-phase forms give the same, with computation between begin and end.
    again = np.full_like(local, -1.0)
    req = grid.global_to_local_begin(glob, again)
    assert not req.ended
    req.end()
    assert np.array_equal(again, local)
    total2 = np.zeros_like(glob)
    with grid.local_to_global_begin(np.ones_like(local), total2):
        pass
    assert np.array_equal(total2, total)
    back = np.full_like(glob, -1.0)
    grid.local_to_global_insert(local, back)  # the owned part, no communication
    assert np.array_equal(back, glob)


def poisson2d(m):
    t = sp.diags([-1.0, 4.0, -1.0], [-1, 0, 1], shape=(m, m))
    return (sp.kron(sp.identity(m), t) + sp.kron(sp.diags([-1.0, -1.0], [-1, 1], shape=(m, m)), sp.identity(m))).tocsr()


@pytest.mark.parametrize("partition", ["rows", "nnz"])
def test_csr_mult_and_cg(comm, partition):
    A = poisson2d(9)
    M = stf.CSR(comm, A, partition)
    sizes = comm.allgather(M.nlocal)
    assert sum(sizes) == A.shape[0] == M.nglobal and M.first_row == sum(sizes[: comm.rank])
    rows = slice(M.first_row, M.first_row + M.nlocal)
    x = np.sin(np.arange(A.shape[0]))
    y = M.mult(x[rows])
    assert np.allclose(y, (A @ x)[rows], rtol=0, atol=1e-12)
    yt = M.mult_transpose(x[rows], np.zeros(M.nlocal))
    assert np.allclose(yt, (A.T @ x)[rows], rtol=0, atol=1e-12)
    assert np.all(np.diff(M.ghost_columns) > 0) and M.ghost_sf.nleaves == M.nghost
    b = (A @ np.ones(A.shape[0]))[rows]
    sol, info = M.cg(b, rtol=1e-10, maxit=500)
    assert info["converged"] and info["iterations"] > 0
    assert np.allclose(sol, 1.0, atol=1e-8)


def test_matrix_market(comm):
    # Not pytest's tmp_path: its clean-up races between ranks.
    with tempfile.TemporaryDirectory() as tmp:
        matrix_market_files(Path(tmp) / "m.mtx")


def matrix_market_files(path):
    path.write_text("%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 2.0\n3 1 -1.5\n2 2 4\n")
    m = stf.read_matrix_market(path)
    assert m.shape == (3, 3)
    assert np.array_equal(m.toarray(), [[2.0, 0, -1.5], [0, 4.0, 0], [-1.5, 0, 0]])
    path.write_text("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 x 2.0\n")
    with pytest.raises(stf.Error, match="line"):
        stf.read_matrix_market(path)


def test_real_matrix_spmv(comm):
    f = MATRICES / "bcsstk13.mtx.gz"
    if not f.exists():
        pytest.skip(f"{f} not present")
    A = stf.read_matrix_market(f).tocsr()
    M = stf.CSR(comm, A)
    x = np.cos(np.arange(A.shape[0]))
    rows = slice(M.first_row, M.first_row + M.nlocal)
    assert np.allclose(M.mult(x[rows]), (A @ x)[rows], rtol=1e-12, atol=1e-9)
