"""Bad input raises (ValueError / TypeError for arrays and arguments,
starforest.Error with the library's code and message for the library's own
checks); nothing crashes and no rank is left waiting."""
import re

import numpy as np
import pytest
from mpi4py import MPI

import starforest as stf


def ring(comm, debug=False):
    sf = stf.SF(comm)
    if debug:
        sf.set_options("-stf_debug 1")
    sf.set_graph(2, [((comm.rank + 1) % comm.size, i) for i in range(2)])
    return sf


def test_library_errors_carry_code_and_message(comm):
    sf = stf.SF(comm)
    with pytest.raises(stf.Error) as e:
        sf.set_graph(1, [(comm.size, 0)])
    assert e.value.code == stf.STF_ERR_RANK and e.value.name == "STF_ERR_RANK"
    assert "outside the communicator" in str(e.value)
    with pytest.raises(stf.Error) as e:
        sf.set_graph(1, [(0, 0), (0, 0)], ilocal=[1, 1])
    assert e.value.code == stf.STF_ERR_DUPLICATE
    with pytest.raises(stf.Error) as e:
        stf.set_options("-stf_no_such_option 1")
    assert e.value.code == stf.STF_ERR_OPTION
    with pytest.raises(stf.Error) as e:
        sf.set_type("carrier_pigeon")
    assert e.value.code == stf.STF_ERR_OPTION
    assert stf.error_name(stf.STF_ERR_OFFSET) == "STF_ERR_OFFSET"
    assert "-stf_validate" in stf.options_help()


def test_root_out_of_range_with_validation(comm):
    """A root index beyond its owner's nroots: with -stf_validate 1 set-up
    fails on every rank."""
    sf = stf.SF(comm)
    sf.set_options("-stf_validate 1")
    sf.set_graph(1, [((comm.rank + 1) % comm.size, 5 if comm.rank == 0 else 0)])
    with pytest.raises(stf.Error) as e:
        sf.setup()
    assert e.value.code in (stf.STF_ERR_OFFSET, stf.STF_ERR_ARG)


def test_bad_arrays_raise(comm):
    sf = ring(comm)
    roots, leaves = np.zeros(2), np.zeros(2)
    bad = [
        ((np.zeros(2, np.float32), leaves), ValueError,
         "rootdata (float32, 1 value per entry) and leafdata (float64, 1 value per entry) differ in dtype"),
        ((np.zeros(1), leaves), ValueError, "needs 2 (nroots)"),
        ((roots, np.zeros(1)), ValueError, "needs 2 (maxleaf + 1)"),
        ((np.zeros(4)[::2], leaves), ValueError, "not C-contiguous"),
        ((roots, np.zeros((2, 2)).T[0]), ValueError, "not C-contiguous"),
        ((np.zeros(2, np.float16), np.zeros(2, np.float16)), TypeError, "no MPI equivalent"),
        ((np.array(["a", "b"]), np.array(["a", "b"])), TypeError, "no MPI equivalent"),
        ((np.zeros(2, ">f8"), np.zeros(2, ">f8")), ValueError, "byte order"),
        ((np.float64(1.0), leaves), ValueError, "at least one axis"),
        (([1.0, 2.0], leaves), TypeError, "expected an array"),
        ((np.zeros((2, 3)), np.zeros((2, 2))), ValueError, "(float64, 3 values per entry) and leafdata (float64, 2"),
    ]
    for (r, l), exc, text in bad:
        with pytest.raises(exc, match=re.escape(text)):
            sf.bcast(r, l)
    frozen = np.zeros(2)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        sf.bcast(roots, frozen)
    with pytest.raises(ValueError, match="unknown op name"):
        sf.bcast(roots, leaves, "average")
    with pytest.raises(TypeError, match="op must be"):
        sf.bcast(roots, leaves, 3)
    with pytest.raises(stf.Error) as e:
        sf.bcast(np.zeros(2, bool), np.zeros(2, bool), MPI.SUM)  # SUM is not defined for C bool
    assert e.value.code == stf.STF_ERR_OP
    # after all that, the SF still works
    sf.bcast(np.array([1.0, 2.0]) + comm.rank, leaves)
    assert leaves.tolist() == [1.0 + (comm.rank + 1) % comm.size, 2.0 + (comm.rank + 1) % comm.size]


def test_requests_and_lifecycle(comm):
    sf = ring(comm)
    req = sf.bcast_begin(np.zeros(2), np.zeros(2))
    with pytest.raises(stf.Error) as e:
        sf.destroy()  # an operation is in flight
    assert e.value.code == stf.STF_ERR_STATE
    req.end()
    with pytest.raises(stf.Error) as e:
        req.end()
    assert e.value.code == stf.STF_ERR_REQUEST
    sf.destroy()
    with pytest.raises(stf.Error):
        sf.bcast(np.zeros(2), np.zeros(2))
    empty = stf.SF(comm)
    with pytest.raises(stf.Error, match="no graph"):
        empty.bcast(np.zeros(0), np.zeros(0))
    with pytest.raises(TypeError):
        stf.SF("not a communicator")
    with pytest.raises(ValueError):
        stf.SF(MPI.COMM_NULL)
    with pytest.raises(ValueError):
        empty.set_graph(1, [(0, 0, 0)])


def test_bad_input_on_one_rank_with_debug(comm):
    """With -stf_debug 1 the argument checks are agreed on: a short array
    on the last rank raises there, and ValueError naming it on the others."""
    sf = ring(comm, debug=True)
    last = comm.size - 1
    leaves = np.zeros(1 if comm.rank == last else 2)
    with pytest.raises(ValueError) as e:
        sf.bcast(np.zeros(2), leaves)
    if comm.rank == last:
        assert "needs 2" in str(e.value)
    else:
        assert f"rank {last} passed bad arguments" in str(e.value)
    with pytest.raises(ValueError):
        sf.reduce_begin(leaves, np.zeros(2))
    sf.bcast(np.ones(2), np.zeros(2))  # every rank is still in step


def test_options_from_the_command_line(comm):
    """set_options_from_args reads -stf_ options where PETSc users type them:
    a bare yes/no option is a yes (here -stf_debug, whose agreed checks then
    apply to SFs created afterwards), other arguments are left alone, and an
    unknown -stf_ option raises naming it."""
    stf.set_options_from_args(["prog", "--size", "3", "-stf_debug", "-stf_pack_opt"])
    sf = stf.SF(comm)
    sf.set_graph(2, [((comm.rank + 1) % comm.size, i) for i in range(2)])
    leaves = np.zeros(1 if comm.rank == comm.size - 1 else 2)
    with pytest.raises(ValueError):  # agreed on every rank: -stf_debug took effect
        sf.bcast(np.zeros(2), leaves)
    with pytest.raises(stf.Error) as e:
        stf.set_options_from_args(["prog", "-stf_tpye", "basic"])
    assert e.value.code == stf.STF_ERR_OPTION and "-stf_tpye" in str(e.value)
    stf.set_options("-stf_debug 0")
