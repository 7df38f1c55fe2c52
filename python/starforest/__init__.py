"""starforest: star-forest communication on MPI, from Python.

Every rank describes, for each of its leaves, the (rank, index) of the root
it reads; data then moves over that graph with bcast (roots to leaves),
reduce (leaves to roots), fetch_and_op, gather and scatter, blocking or split
phase (``req = sf.bcast_begin(...)``; ``req.end()``), or prepared once and
started many times (``p = sf.bcast_init(...)``; ``p.start()``; ``p.end()``;
``p.free()``). Communicators and ops
are mpi4py objects (ops may also be named: ``"sum"``). Arrays are numpy
arrays (or DLPack / CUDA-array-interface device arrays): the first axis
counts entries, the other axes are the values of one entry. They are never
copied; non-contiguous arrays are refused with ValueError.
"""
from mpi4py import MPI  # noqa: F401  (initialises MPI before the extension uses it)

import sys as _sys

from ._core import (  # noqa: F401
    CSR,
    SF,
    DeviceArray,
    Error,
    Grid,
    PreparedRequest,
    Request,
    VecScatter,
    concatenate,
    device_name,
    device_select,
    device_synchronize,
    error_name,
    layout_find_owners,
    memtype,
    nvshmem_init,
    options_help,
    set_options,
)
from ._core import (  # noqa: F401  error codes
    STF_ERR_ARG,
    STF_ERR_DEVICE,
    STF_ERR_DUPLICATE,
    STF_ERR_INTERNAL,
    STF_ERR_MEMORY,
    STF_ERR_MPI,
    STF_ERR_NULL,
    STF_ERR_OFFSET,
    STF_ERR_OP,
    STF_ERR_OPTION,
    STF_ERR_RANK,
    STF_ERR_REQUEST,
    STF_ERR_STATE,
    STF_ERR_TIMEOUT,
    STF_ERR_TYPE,
    STF_ERR_UNSUPPORTED,
    STF_SUCCESS,
)
from .matrix_market import read_matrix_market  # noqa: F401


def set_options_from_args(argv=None):
    """Read the -stf_ options of a command line (default: sys.argv), as C's
    stf_set_options_from_args: every argument from argv[1] on that starts
    with -stf_ is an option and the next one its value (none for a yes/no
    option followed by another option or by nothing); other arguments are
    left alone. Raises starforest.Error for an unknown -stf_ option."""
    from ._core import set_options_from_args as _from_args

    _from_args(list(_sys.argv if argv is None else argv))

__version__ = "0.1.0"
