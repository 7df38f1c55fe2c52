"""Device arrays through DLPack and the CUDA array interface, on the
emulated device (its memory is device memory to the library, so the device
code paths run: kernels, library stream, statistics)."""
import gc
import os

import numpy as np
import pytest

import starforest as stf
from oracle import Global, expect_bcast, expect_gather, expect_reduce, leaf_array, random_graph, values


@pytest.fixture
def emu():
    stf.device_select("emu")
    yield
    gc.collect()  # device arrays and SFs with device index copies go before the device does
    stf.device_select("host")


class CudaInterface:
    """A minimal producer of __cuda_array_interface__ (as CuPy or Numba
    arrays are), over memory of the active device."""

    def __init__(self, dev):
        self.dev = dev
        self.__cuda_array_interface__ = {"data": (dev.ptr, False), "shape": dev.shape,
                                         "typestr": dev.dtype.str, "strides": None, "version": 3}


def test_device_ops_match_oracle(comm, emu):
    seed = 71
    nroots, iremote, ilocal = random_graph(comm, seed)
    sf = stf.SF(comm)
    sf.set_graph(nroots, iremote, ilocal)
    g = Global(comm, sf)
    roots = stf.DeviceArray.from_numpy(values(np.float64, comm.rank, nroots, seed))
    leaves = stf.DeviceArray.from_numpy(leaf_array(g, comm.rank, np.float64, seed + 1))
    assert stf.memtype(roots) == "device" and stf.memtype(np.zeros(1)) == "host"
    sf.bcast(roots, leaves, "sum")
    stf.device_synchronize()
    assert np.array_equal(leaves.to_numpy(), expect_bcast(g, np.float64, "sum", seed))
    red = stf.DeviceArray.from_numpy(values(np.float64, comm.rank, nroots, seed))
    with sf.reduce_begin(stf.DeviceArray.from_numpy(leaf_array(g, comm.rank, np.float64, seed + 1)), red, "sum"):
        pass
    assert np.array_equal(red.to_numpy(), expect_reduce(g, np.float64, "sum", seed))
    multi = stf.DeviceArray.empty(sf.multiroots, np.float64)
    sf.gather(stf.DeviceArray.from_numpy(leaf_array(g, comm.rank, np.float64, seed + 1)), multi)
    assert np.array_equal(multi.to_numpy(), expect_gather(g, np.float64, seed))
    if g.edges():
        assert comm.allreduce(sf.stats()["device_kernel_launches"]) > 0, "the device path did not run"


def test_cuda_array_interface_and_dlpack_consumers(comm, emu):
    sf = stf.SF(comm)
    sf.set_graph(3, [((comm.rank + 1) % comm.size, i) for i in range(3)])
    src = stf.DeviceArray.from_numpy(np.arange(3, dtype=np.int32) + 10 * comm.rank)
    dst = stf.DeviceArray.empty((3,), np.int32)
    sf.bcast(CudaInterface(src), CudaInterface(dst))
    stf.device_synchronize()
    assert dst.to_numpy().tolist() == [10 * ((comm.rank + 1) % comm.size) + i for i in range(3)]
    # other DLPack consumers see the emulated device's memory as CPU memory
    view = np.from_dlpack(dst)
    assert view.tolist() == dst.to_numpy().tolist()
    with pytest.raises(ValueError, match="not memory of the active device"):
        sf.bcast(CudaInterface(src), type("Host", (), {"__cuda_array_interface__": {
            "data": (np.zeros(3, np.int32).ctypes.data, False), "shape": (3,), "typestr": "<i4",
            "strides": None, "version": 3}})())


def test_device_entries_of_several_values(comm, emu):
    sf = stf.SF(comm)
    sf.set_graph(2, [((comm.rank + 1) % comm.size, 1), ((comm.rank + 1) % comm.size, 0)])
    roots = stf.DeviceArray.from_numpy(np.arange(6.0).reshape(2, 3) + comm.rank)
    leaves = stf.DeviceArray.empty((2, 3), np.float64)
    sf.bcast(roots, leaves)
    nxt = np.arange(6.0).reshape(2, 3) + (comm.rank + 1) % comm.size
    assert np.array_equal(leaves.to_numpy(), nxt[::-1])


def test_device_select_refused_while_memory_lives(comm, emu):
    keep = stf.DeviceArray.empty(4)
    with pytest.raises(stf.Error) as e:
        stf.device_select("host")
    assert e.value.code == stf.STF_ERR_STATE
    keep.free()


def test_nvshmem_init_refused_without_gpu(comm):
    # No GPU (CI), or a build without NVSHMEM: every rank gets the error.
    if os.environ.get("STF_DEVICE") == "cuda":
        pytest.skip("a GPU: NVSHMEM may start here")
    with pytest.raises(stf.Error) as e:
        stf.nvshmem_init(comm)
    assert e.value.code == stf.STF_ERR_UNSUPPORTED
