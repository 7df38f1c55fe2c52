"""A 2D periodic 5-point halo exchange as a star forest (examples/demo.c in
Python). Each rank owns an n x n block of a px x py process grid; roots are
the owned cells, leaves the 4n ghost cells of the ghosted (n+2) x (n+2)
array. bcast(REPLACE) fills the ghosts; reduce(SUM) adds ghost contributions
back into their owners. Both are checked against the global numbering, then
the exchange is timed against a hand-written mpi4py Isend/Irecv exchange in
the same run (medians of interleaved rounds).
Run: mpiexec -n 4 python halo.py [n] [exchanges]"""
import sys

import numpy as np
from mpi4py import MPI

import starforest as stf

comm = MPI.COMM_WORLD
n = int(sys.argv[1]) if len(sys.argv) > 1 else 64
exchanges = int(sys.argv[2]) if len(sys.argv) > 2 else 200
px, py = MPI.Compute_dims(comm.size, 2)
pi, pj = divmod(comm.rank, py)
N = (px * n, py * n)  # global grid


def owner(i, j):
    """(rank, offset in its owned block) of global cell (i, j), periodic."""
    i, j = i % N[0], j % N[1]
    return (i // n) * py + j // n, (i % n) * n + j % n


# The ghost cells of the (n+2) x (n+2) array, row-major slots, and their roots.
ghosts = [(a, b) for a in range(n + 2) for b in range(n + 2)
          if (a in (0, n + 1)) != (b in (0, n + 1))]  # edges, not corners
ilocal = [a * (n + 2) + b for a, b in ghosts]
iremote = [owner(pi * n + a - 1, pj * n + b - 1) for a, b in ghosts]
sf = stf.SF(comm)
sf.set_graph(n * n, iremote, ilocal)


def global_id(i, j):
    return float((i % N[0]) * N[1] + j % N[1])


owned = np.array([[global_id(pi * n + a, pj * n + b) for b in range(n)] for a in range(n)])
u = np.full((n + 2, n + 2), -1.0)
sf.bcast(owned.ravel(), u.ravel())
ok = all(u[a, b] == global_id(pi * n + a - 1, pj * n + b - 1) for a, b in ghosts)
back = np.zeros(n * n)
sf.reduce(np.ones((n + 2) * (n + 2)), back)  # every boundary cell mirrored once per side it touches
want = np.zeros((n, n))
want[0, :] += 1; want[-1, :] += 1; want[:, 0] += 1; want[:, -1] += 1  # noqa: E702
ok = ok and np.array_equal(back, want.ravel())


def exchange_mpi(u):
    """The same halo exchange by hand: four neighbours, one message each way."""
    nbrs = {"n": ((pi - 1) % px, pj), "s": ((pi + 1) % px, pj), "w": (pi, (pj - 1) % py), "e": (pi, (pj + 1) % py)}
    send = {"n": u[1, 1:-1], "s": u[n, 1:-1], "w": u[1:-1, 1], "e": u[1:-1, n]}
    recv = {k: np.empty(n) for k in nbrs}
    opposite = {"n": "s", "s": "n", "w": "e", "e": "w"}
    reqs = []
    for k, (a, b) in nbrs.items():
        reqs.append(comm.Irecv(recv[k], source=a * py + b, tag=ord(opposite[k])))
        reqs.append(comm.Isend(np.ascontiguousarray(send[k]), dest=a * py + b, tag=ord(k)))
    MPI.Request.Waitall(reqs)
    u[0, 1:-1], u[n + 1, 1:-1], u[1:-1, 0], u[1:-1, n + 1] = recv["n"], recv["s"], recv["w"], recv["e"]


ref = np.full((n + 2, n + 2), -1.0)
ref[1:-1, 1:-1] = owned
exchange_mpi(ref)
ok = ok and all(ref[a, b] == u[a, b] for a, b in ghosts)  # the baseline moves the same data
roots, work = owned.ravel(), ref
times = {"starforest": [], "mpi4py": []}
for _ in range(5):
    for name in times:
        comm.Barrier()
        t = MPI.Wtime()
        for _ in range(exchanges):
            if name == "starforest":
                sf.bcast(roots, work.ravel())
            else:
                exchange_mpi(work)
        times[name].append(comm.allreduce(MPI.Wtime() - t, MPI.MAX) / exchanges * 1e6)
ok = comm.allreduce(ok, MPI.LAND)
if comm.rank == 0:
    print(f"halo exchange, {comm.size} ranks ({px} x {py}), n = {n}: results {'correct' if ok else 'WRONG'}")
    for name, t in times.items():
        print(f"  {name:10s} {np.median(t):8.1f} us per exchange (median of 5 rounds)")
sys.exit(0 if ok else 1)
