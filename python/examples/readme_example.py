"""A ring (examples/readme_example.c in Python): rank r owns 1 or 2 roots;
its leaves point at the roots of rank r+1. Run: mpiexec -n 4 python readme_example.py"""
import sys

import numpy as np
from mpi4py import MPI

import starforest as stf

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
nxt = (rank + 1) % size
nroots, nleaves = 1 + rank % 2, 1 + nxt % 2  # the next rank's root count

sf = stf.SF(comm)
sf.set_graph(nroots, [(nxt, i) for i in range(nleaves)])

roots = 10 * rank + np.arange(nroots, dtype=np.int32)
leaves = np.zeros(nleaves, dtype=np.int32)
sf.bcast(roots, leaves, MPI.REPLACE)  # leaves <- roots
sf.reduce(leaves, roots, MPI.SUM)     # roots += leaves

wrong = 0
for i, v in enumerate(leaves):
    print(f"rank {rank} leaf {i} = {v}")
    wrong += v != 10 * nxt + i
for i, v in enumerate(roots):
    print(f"rank {rank} root {i} = {v}")
    wrong += v != 2 * (10 * rank + i)  # each root has one leaf
sf.destroy()
sys.exit(1 if comm.allreduce(wrong) else 0)
