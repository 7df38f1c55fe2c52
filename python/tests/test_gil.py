"""Blocking calls release the GIL: while rank 0 waits in a bcast for a late
rank 1, a Python thread on rank 0 keeps running."""
import threading
import time

import numpy as np
import pytest

import starforest as stf


def test_gil_released_while_waiting(comm):
    if comm.size < 2:
        pytest.skip("needs a peer to wait for")
    sf = stf.SF(comm)
    sf.set_graph(1, [((comm.rank + 1) % comm.size, 0)])
    sf.setup()
    ticks, stop = [0], threading.Event()

    def count():
        while not stop.is_set():
            ticks[0] += 1
            time.sleep(0.001)

    comm.barrier()
    if comm.rank == 0:
        thread = threading.Thread(target=count)
        thread.start()
        sf.bcast(np.ones(1), np.zeros(1))  # rank 1 comes 0.5 s later
        during = ticks[0]
        stop.set()
        thread.join()
        assert during > 50, f"the thread ran {during} times in 0.5 s: the GIL was held"
    else:
        time.sleep(0.5)
        sf.bcast(np.ones(1), np.zeros(1))
