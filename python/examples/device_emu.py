"""Device arrays on the emulated device: the library's device code paths
(pack/unpack kernels on the library stream) from Python, with arrays shared
through DLPack. Run: mpiexec -n 2 python device_emu.py"""
import sys

import numpy as np
from mpi4py import MPI

import starforest as stf

comm = MPI.COMM_WORLD
stf.device_select("emu")
nxt = (comm.rank + 1) % comm.size
sf = stf.SF(comm)
sf.set_graph(4, [(nxt, 3 - i) for i in range(4)])  # leaves read the next rank's roots, reversed
roots = stf.DeviceArray.from_numpy(np.arange(4.0) + 10 * comm.rank)
leaves = stf.DeviceArray.empty(4)
with sf.bcast_begin(roots, leaves):
    pass  # work could overlap here
stf.device_synchronize()  # results are on the library stream until then
got = np.from_dlpack(leaves)  # a host view: emu memory is host-addressable
ok = np.array_equal(got, (np.arange(4.0) + 10 * nxt)[::-1])
kernels = sf.stats()["device_kernel_launches"]
print(f"rank {comm.rank}: leaves {got.tolist()}, {kernels} device kernel launches")
del got, roots, leaves
sf.destroy()
stf.device_select("host")
sys.exit(0 if comm.allreduce(ok, MPI.LAND) else 1)
