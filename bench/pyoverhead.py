"""pyoverhead: what the Python bindings add to one bcast.

The same blocking bcast (MPI_REPLACE, basic transport) on the same SF and
numpy arrays, called from Python (SF.bcast, as users write it) and from C
(starforest._core._bench_c_bcast: stf_bcast in a C loop, no argument
checks). Two ranks, each rank's leaves read the other rank's roots; sizes
8 B (one float64) and 1 MiB. Rounds alternate C and Python; a round's time
per call is the slowest rank's; reported are the median round and
[min..max], and overhead = median(Python) - median(C).
usage: scripts/bench pyoverhead [--rounds N] [--json FILE]
       (or mpiexec -n 2 python bench/pyoverhead.py ...)"""
import argparse
import json

import numpy as np
from mpi4py import MPI

import starforest as stf
from starforest._core import _bench_c_bcast

SIZES = {8: 20000, 1 << 20: 200}  # bytes: calls per round


def python_round(sf, root, leaf, calls):
    t = MPI.Wtime()
    for _ in range(calls):
        sf.bcast(root, leaf)
    return MPI.Wtime() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--json", help="write the records to this file")
    args = ap.parse_args()
    comm = MPI.COMM_WORLD
    other = (comm.rank + 1) % comm.size
    records = []
    if comm.rank == 0:
        print(f"pyoverhead: blocking bcast (REPLACE, basic) on {comm.size} ranks, "
              f"median of {args.rounds} interleaved rounds [min..max], us per call")
        print(f"{'size':>9} {'C':>22} {'Python':>22} {'overhead':>9}")
    for size, calls in SIZES.items():
        n = size // 8
        sf = stf.SF(comm)
        sf.set_graph(n, np.stack([np.full(n, other), np.arange(n)], axis=1))
        sf.setup()
        root, leaf = np.arange(n, dtype=np.float64) + comm.rank, np.zeros(n)
        sf.bcast(root, leaf)
        assert np.array_equal(leaf, np.arange(n) + other), "wrong data before timing"
        times = {"C": [], "Python": []}
        for _ in range(args.rounds):
            for impl in times:
                comm.Barrier()
                if impl == "C":
                    t = _bench_c_bcast(sf, root, leaf, calls)
                else:
                    t = python_round(sf, root, leaf, calls)
                times[impl].append(comm.allreduce(t, op=MPI.MAX) / calls * 1e6)
        med = {impl: float(np.median(t)) for impl, t in times.items()}
        if comm.rank == 0:
            cells = [f"{med[i]:8.2f} [{min(times[i]):.2f}..{max(times[i]):.2f}]" for i in times]
            print(f"{size:>9} {cells[0]:>22} {cells[1]:>22} {med['Python'] - med['C']:9.2f}")
        for impl, t in times.items():
            records.append({"benchmark": "pyoverhead", "impl": impl, "size": size, "ranks": comm.size,
                            "us": med[impl], "min_us": min(t), "max_us": max(t), "iterations": calls,
                            "memory": "host", "transport": "basic",
                            "overhead_us": med["Python"] - med["C"]})
        sf.destroy()
    if args.json and comm.rank == 0:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)


if __name__ == "__main__":
    main()
