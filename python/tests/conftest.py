"""pytest under mpiexec: every rank runs every test; a test failing on one
rank fails on all (its message is shown by rank 0), and only rank 0 prints."""
import numpy as np
import pytest
from mpi4py import MPI

import starforest  # noqa: F401  (import errors show before any test)

COMM = MPI.COMM_WORLD


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    if COMM.rank != 0:  # the other ranks' failures reach rank 0 through the hook below
        config.pluginmanager.unregister(name="terminalreporter")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Agree on each phase's outcome across the ranks, so that ranks stay in
    step (the next test's collectives) and rank 0 reports every failure."""
    outcome = yield
    report = outcome.get_result()
    failed = report.failed
    text = str(report.longrepr)[-3000:] if failed else ""
    texts = COMM.allgather(text if failed else None)
    others = [(rank, t) for rank, t in enumerate(texts) if t is not None and rank != COMM.rank]
    if others and not failed:
        report.outcome = "failed"
        report.longrepr = "\n".join(f"--- failed on rank {rank}:\n{t}" for rank, t in others)


@pytest.fixture
def comm():
    return COMM


@pytest.fixture
def rng(request):
    """The same seed on every rank, a different one per test."""
    seed = sum(ord(c) for c in request.node.nodeid)
    return np.random.default_rng(seed)
