"""Every operation on random graphs against the oracle, for several dtypes,
ops and entry shapes, blocking and split phase."""
import numpy as np
import pytest
from mpi4py import MPI

import starforest as stf
from oracle import (Global, HOLE, apply, expect_bcast, expect_fetch, expect_gather, expect_reduce,
                    expect_scatter, leaf_array, random_graph, values)

DTYPES = [np.int32, np.int64, np.uint8, np.float32, np.float64, np.complex128, np.longdouble]
SEEDS = [1, 2, 3]


def make_sf(comm, seed, holes=True):
    nroots, iremote, ilocal = random_graph(comm, seed, holes)
    sf = stf.SF(comm)
    sf.set_graph(nroots, iremote, ilocal)
    return sf, Global(comm, sf)


def ops_for(dtype):
    if np.dtype(dtype).kind == "c":
        return ["replace", "sum", "prod"]
    return ["replace", "sum", "max", "min"]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_bcast(comm, seed, dtype):
    sf, g = make_sf(comm, seed)
    for op in ops_for(dtype):
        roots = values(dtype, comm.rank, sf.nroots, seed)
        leaves = leaf_array(g, comm.rank, dtype, seed + 1)
        sf.bcast(roots, leaves, op)
        assert np.array_equal(leaves, expect_bcast(g, dtype, op, seed)), op
        assert np.array_equal(roots, values(dtype, comm.rank, sf.nroots, seed)), "bcast changed the roots"


def reduce_ok(g, got, dtype, op, key, block=()):
    """reduce's result; with replace, a root of several leaves may hold any one of them."""
    want = expect_reduce(g, dtype, op, key, block)
    if op != "replace":
        return np.array_equal(got, want)
    for i in range(len(got)):
        choices = [leaf_array(g, lp, dtype, key + 1, block)[s] for lp, s, r, ri in g.edges()
                   if r == g.rank and ri == i]
        choices = choices or [values(dtype, g.rank, g.nroots(g.rank), key, block)[i]]
        if not any(np.array_equal(got[i], c) for c in choices):
            return False
    return True


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_reduce(comm, seed, dtype):
    sf, g = make_sf(comm, seed)
    for op in ops_for(dtype):
        roots = values(dtype, comm.rank, sf.nroots, seed)
        leaves = leaf_array(g, comm.rank, dtype, seed + 1)
        sf.reduce(leaves, roots, op)
        assert reduce_ok(g, roots, dtype, op, seed), op
        assert np.array_equal(leaves, leaf_array(g, comm.rank, dtype, seed + 1)), "reduce changed the leaves"


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", [np.int32, np.float64, np.int8])
def test_fetch_and_op(comm, seed, dtype):
    sf, g = make_sf(comm, seed)
    for op in ["sum", "max"]:
        roots = values(dtype, comm.rank, sf.nroots, seed)
        leaves = leaf_array(g, comm.rank, dtype, seed + 1)
        update = np.full(leaves.shape, HOLE, dtype)
        sf.fetch_and_op(roots, leaves, update, op)
        want_roots, want_update = expect_fetch(g, dtype, op, seed)
        assert np.array_equal(roots, want_roots), op
        assert np.array_equal(update, want_update), op


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", [np.int64, np.float32, np.complex64])
def test_gather_scatter(comm, seed, dtype):
    sf, g = make_sf(comm, seed)
    nmulti = g.multi_offsets(comm.rank)[-1]
    assert sf.multiroots == nmulti
    assert np.array_equal(sf.degree(), np.diff(g.multi_offsets(comm.rank)))
    multi = np.full(nmulti, HOLE, dtype)
    sf.gather(leaf_array(g, comm.rank, dtype, seed + 1), multi)
    assert np.array_equal(multi, expect_gather(g, dtype, seed))
    leaves = leaf_array(g, comm.rank, dtype, seed + 1)
    sf.scatter(values(dtype, comm.rank, nmulti, seed), leaves)
    assert np.array_equal(leaves, expect_scatter(g, dtype, seed))


@pytest.mark.parametrize("block", [(3,), (2, 2)])
def test_entries_of_several_values(comm, block):
    """An array of shape (n, *block) moves prod(block) values per root or leaf."""
    seed = 11
    sf, g = make_sf(comm, seed)
    roots = values(np.float64, comm.rank, sf.nroots, seed, block)
    leaves = leaf_array(g, comm.rank, np.float64, seed + 1, block)
    sf.bcast(roots, leaves, MPI.SUM)
    assert np.array_equal(leaves, expect_bcast(g, np.float64, "sum", seed, block))
    sf.reduce(leaf_array(g, comm.rank, np.float64, seed + 1, block), roots, MPI.SUM)
    assert reduce_ok(g, roots, np.float64, "sum", seed, block)
    multi = np.zeros((sf.multiroots,) + block)
    sf.gather(leaf_array(g, comm.rank, np.float64, seed + 1, block), multi)
    assert np.array_equal(multi, expect_gather(g, np.float64, seed, block)[: len(multi)])


def test_bool_logical_ops(comm):
    sf, g = make_sf(comm, 5)
    for op in ["land", "lor"]:
        roots = values(np.bool_, comm.rank, sf.nroots, 5)
        leaves = leaf_array(g, comm.rank, np.bool_, 6)
        sf.bcast(roots, leaves, op)
        assert np.array_equal(leaves, expect_bcast(g, np.bool_, op, 5)), op


def test_split_phase_many_in_flight(comm):
    """Several requests on one SF at once, ended in reverse order, and the
    context manager form."""
    seed = 21
    sf, g = make_sf(comm, seed)
    roots = values(np.int64, comm.rank, sf.nroots, seed)
    outs = [leaf_array(g, comm.rank, np.int64, seed + 1) for _ in range(3)]
    reqs = [sf.bcast_begin(roots, out, "sum") for out in outs]
    for req in reversed(reqs):
        assert not req.ended
        req.end()
        assert req.ended
    for out in outs:
        assert np.array_equal(out, expect_bcast(g, np.int64, "sum", seed))
    red = values(np.int64, comm.rank, sf.nroots, seed)
    with sf.reduce_begin(leaf_array(g, comm.rank, np.int64, seed + 1), red, MPI.SUM):
        pass
    assert reduce_ok(g, red, np.int64, "sum", seed)
    upd = np.full(outs[0].shape, HOLE, np.int64)
    fr = values(np.int64, comm.rank, sf.nroots, seed)
    sf.fetch_and_op_begin(fr, leaf_array(g, comm.rank, np.int64, seed + 1), upd, "sum").end()
    want_roots, want_update = expect_fetch(g, np.int64, "sum", seed)
    assert np.array_equal(fr, want_roots) and np.array_equal(upd, want_update)
    multi = np.zeros(sf.multiroots, np.int64)
    sf.gather_begin(leaf_array(g, comm.rank, np.int64, seed + 1), multi).end()
    assert np.array_equal(multi, expect_gather(g, np.int64, seed))
    leaves = leaf_array(g, comm.rank, np.int64, seed + 1)
    sf.scatter_begin(multi, leaves).end()
    want = leaf_array(g, comm.rank, np.int64, seed + 1)
    for lp, s, _, _ in g.edges():
        if lp == comm.rank:
            want[s] = leaf_array(g, lp, np.int64, seed + 1)[s]
    assert np.array_equal(leaves, want), "gather then scatter must give every leaf its own value back"


def test_request_test_polls_until_done(comm):
    """Request.test() as the overlap tutorial uses it: poll while computing,
    the data is right once it returns True, and the request has then ended."""
    seed = 27
    sf, g = make_sf(comm, seed)
    leaves = leaf_array(g, comm.rank, np.float64, seed + 1)
    req = sf.bcast_begin(values(np.float64, comm.rank, sf.nroots, seed), leaves, "sum")
    polls = 0
    while not req.test():
        polls += 1
        assert not req.ended
        assert polls < 10_000_000
    assert req.ended
    assert np.array_equal(leaves, expect_bcast(g, np.float64, "sum", seed))
    with pytest.raises(stf.Error):
        req.test()  # ended already
    with pytest.raises(stf.Error):
        req.end()


def test_prepared(comm):
    seed = 28
    sf, g = make_sf(comm, seed)
    roots = values(np.int64, comm.rank, sf.nroots, seed)
    leaves = leaf_array(g, comm.rank, np.int64, seed + 1)
    red_leaves = leaf_array(g, comm.rank, np.int64, seed + 1)
    red_roots = values(np.int64, comm.rank, sf.nroots, seed)
    bc = sf.bcast_init(roots, leaves, "sum")
    with pytest.raises(stf.Error):
        bc.end()  # not started
    with sf.reduce_init(red_leaves, red_roots, "sum") as rd:
        for step in range(3):
            s = seed + 10 * step
            roots[...] = values(np.int64, comm.rank, sf.nroots, s)  # same arrays, new values
            leaves[...] = leaf_array(g, comm.rank, np.int64, s + 1)
            red_roots[...] = values(np.int64, comm.rank, sf.nroots, s)
            red_leaves[...] = leaf_array(g, comm.rank, np.int64, s + 1)
            bc.start()
            rd.start()
            assert bc.active
            with pytest.raises(stf.Error):
                bc.free()  # in flight
            rd.end()
            while not bc.test():
                pass
            assert not bc.active and not bc.freed
            assert np.array_equal(leaves, expect_bcast(g, np.int64, "sum", s))
            assert reduce_ok(g, red_roots, np.int64, "sum", s)
    assert rd.freed
    bc.free()
    with pytest.raises(stf.Error):
        bc.start()  # freed


def test_explain(comm):
    sf, _ = make_sf(comm, 29)
    text = sf.explain(np.float64)  # collective
    assert ("basic" in text and "bcast" in text) if comm.rank == 0 else text == ""
    assert (sf.explain("int32") != "") == (comm.rank == 0)
    with pytest.raises(ValueError, match="no type for dtype"):
        sf.explain(np.float16)


def test_request_dropped_without_end_is_completed(comm):
    seed = 31
    sf, g = make_sf(comm, seed)
    leaves = leaf_array(g, comm.rank, np.float64, seed + 1)
    sf.bcast_begin(values(np.float64, comm.rank, sf.nroots, seed), leaves)  # request dropped at once
    assert np.array_equal(leaves, expect_bcast(g, np.float64, "replace", seed))


@pytest.mark.parametrize("transport", ["basic", "neighbor", "window"])
def test_transports(comm, transport):
    seed = 41
    nroots, iremote, ilocal = random_graph(comm, seed)
    sf = stf.SF(comm)
    sf.set_type(transport)
    sf.set_graph(nroots, iremote, ilocal)
    sf.setup()
    assert sf.type == transport
    g = Global(comm, sf)
    leaves = leaf_array(g, comm.rank, np.float64, seed + 1)
    sf.bcast(values(np.float64, comm.rank, nroots, seed), leaves, "sum")
    assert np.array_equal(leaves, expect_bcast(g, np.float64, "sum", seed))
    text = sf.view()  # collective
    assert ("transport " + transport in text) if comm.rank == 0 else text == ""


def test_graph_round_trip_and_view(comm):
    sf = stf.SF(comm)
    assert sf.nroots == -1
    sf.set_graph(2, np.array([[comm.rank, 1], [comm.rank, 0]]), ilocal=[3, 1])
    nroots, iremote, ilocal = sf.get_graph()
    assert nroots == 2 and iremote.tolist() == [[comm.rank, 1], [comm.rank, 0]] and ilocal.tolist() == [3, 1]
    assert sf.leaf_range == (1, 3) and sf.nleaves == 2
    text = sf.view()
    assert (f"on {comm.size} rank(s)" in text) if comm.rank == 0 else text == ""
    stats = sf.stats()
    leaves = np.zeros(4)
    sf.bcast(np.array([1.0, 2.0]), leaves)
    assert leaves.tolist() == [0.0, 1.0, 0.0, 2.0]
    assert sf.stats()["scatter_calls"] > stats["scatter_calls"]
    after = sf.stats()
    assert after["operations"][0] == stats["operations"][0] + 1 and after["begin_seconds"][0] > 0
    sf.reset_stats()
    assert sf.stats()["scatter_calls"] == 0
    dup = sf.duplicate()
    assert dup.get_graph()[1].tolist() == iremote.tolist()
    sf.reset()
    assert sf.nroots == -1
    with stf.SF(comm) as scoped:
        scoped.set_graph(0, [])
        assert scoped.nleaves == 0
    with pytest.raises(stf.Error):
        scoped.setup()


def test_multi_sf(comm):
    seed = 51
    sf, g = make_sf(comm, seed)
    multi = sf.multi_sf()
    assert multi.nroots == g.multi_offsets(comm.rank)[-1]
    assert sf.multi_sf() is multi
    data = values(np.int32, comm.rank, multi.nroots, seed)
    leaves = leaf_array(g, comm.rank, np.int32, seed + 1)
    multi.bcast(data, leaves)
    assert np.array_equal(leaves, expect_scatter(g, np.int32, seed))
    with pytest.raises(stf.Error):
        multi.destroy()
    sf.destroy()
    with pytest.raises(stf.Error):
        multi.setup()
