"""The graph algebra, each result checked by moving data over it and
comparing with what the definition says (computed from gathered data)."""
import numpy as np
import pytest

import starforest as stf
from oracle import Global, expect_bcast, leaf_array, random_graph, values

S = -5.0  # sentinel of slots an operation must not write


def graph_sf(comm, nroots, iremote, ilocal=None):
    sf = stf.SF(comm)
    sf.set_graph(nroots, iremote, ilocal)
    return sf


def random_sf(comm, seed, holes=True):
    return graph_sf(comm, *random_graph(comm, seed, holes))


def bcast(sf, roots, nleaves_min=0):
    leaves = np.full(max(sf.leaf_range[1] + 1, nleaves_min), S)
    sf.bcast(np.asarray(roots, float), leaves)
    return leaves


def degree_one_sf(comm, seed):
    """Every root has exactly one leaf: rank r's leaves take the roots of rank r+1, permuted."""
    rng = np.random.default_rng([seed, comm.rank])
    k = 4
    nxt = (comm.rank + 1) % comm.size
    slots = rng.permutation(k + 2)[:k]
    return graph_sf(comm, k, [(nxt, i) for i in range(k)], slots)


def test_compose(comm):
    a = random_sf(comm, 3, holes=False)
    nb_roots = a.leaf_range[1] + 1
    rng = np.random.default_rng([7, comm.rank])
    counts = comm.allgather(nb_roots)
    owners = [p for p in range(comm.size) if counts[p] > 0]
    n = int(rng.integers(0, 6)) if owners else 0
    remote = []
    for _ in range(n):
        p = owners[rng.integers(len(owners))]
        remote.append((p, int(rng.integers(counts[p]))))
    b = graph_sf(comm, nb_roots, remote)
    c = a.compose(b)
    roots = values(np.float64, comm.rank, a.nroots, 1)
    mid = bcast(a, roots, nb_roots)
    two_step = np.full(max(b.leaf_range[1] + 1, 0), S)
    b.bcast(mid, two_step)
    assert np.array_equal(bcast(c, roots, len(two_step))[: len(two_step)], two_step)


def test_inverse_and_compose_inverse(comm):
    sf = degree_one_sf(comm, 5)
    inv = sf.inverse()
    span = sf.leaf_range[1] + 1
    leafdata = values(np.float64, comm.rank, span, 2)
    want = np.full(sf.nroots, S)
    sf.reduce(leafdata, want, "replace")
    got = np.full(max(inv.leaf_range[1] + 1, sf.nroots), S)
    inv.bcast(leafdata, got)
    assert np.array_equal(got[: sf.nroots], want)
    # a's roots to b's roots through their shared leaves; with b = sf, bcast
    # through it equals bcast through a, then reduce(replace) through sf.
    a = degree_one_sf(comm, 9)
    ci = a.compose_inverse(sf)
    roots = values(np.float64, comm.rank, a.nroots, 3)
    mid = bcast(a, roots, span)
    want = np.full(sf.nroots, S)
    sf.reduce(mid, want, "replace")
    assert np.array_equal(bcast(ci, roots, sf.nroots)[: sf.nroots], want)


def test_concatenate_local_and_merge(comm):
    a, b = random_sf(comm, 11), random_sf(comm, 12)
    cat = stf.concatenate([a, b], roots="local")
    ra, rb = values(np.float64, comm.rank, a.nroots, 1), values(np.float64, comm.rank, b.nroots, 2)
    la, lb = bcast(a, ra), bcast(b, rb)
    got = bcast(cat, np.concatenate([ra, rb]), len(la) + len(lb))
    assert np.array_equal(got[: len(la) + len(lb)], np.concatenate([la, lb]))
    # merge on one root space: a second graph on a's roots; where both have a slot, b's edge wins.
    nroots, iremote, ilocal = random_graph(comm, 11)
    counts = comm.allgather(nroots)
    other = graph_sf(comm, nroots, [(r, (i + 1) % counts[r]) for r, i in iremote], ilocal)
    m = a.merge(other)
    span = max(a.leaf_range[1], other.leaf_range[1], m.leaf_range[1]) + 1
    want = np.full(span, S)
    a.bcast(ra, want)
    other.bcast(ra, want)
    assert np.array_equal(bcast(m, ra, span)[:span], want)


def test_embedding(comm):
    sf = random_sf(comm, 21)
    g = Global(comm, sf)
    keep = [i for i in range(sf.nroots) if i % 2 == 0]
    sub = sf.embed_roots(keep)
    kept = comm.allgather(keep)
    roots = values(np.float64, comm.rank, sf.nroots, 4)
    want = bcast(sf, roots)
    for lp, s, r, i in g.edges():
        if lp == comm.rank and i not in kept[r]:
            want[s] = S
    assert np.array_equal(bcast(sub, roots, len(want))[: len(want)], want)
    slots = [s for lp, s, _, _ in g.edges() if lp == comm.rank][::2]
    subl = sf.embed_leaves(slots)
    want = bcast(sf, roots)
    for lp, s, _, _ in g.edges():
        if lp == comm.rank and s not in slots:
            want[s] = S
    assert np.array_equal(bcast(subl, roots, len(want))[: len(want)], want)


def test_strided(comm):
    sf = random_sf(comm, 31)
    bs = 3
    ldr, ldl = sf.nroots + 1, sf.leaf_range[1] + 3
    st = sf.strided(bs, ldr, ldl)
    roots = np.arange(bs * ldr, dtype=float) + 100 * comm.rank
    got = np.full(bs * ldl, S)
    st.bcast(roots, got)
    for c in range(bs):
        col = bcast(sf, roots[c * ldr: c * ldr + sf.nroots], ldl)[:ldl]
        assert np.array_equal(got[c * ldl: (c + 1) * ldl], col)


@pytest.mark.parametrize("pattern", ["allgather", "gather", "alltoall"])
def test_patterns(comm, pattern):
    n = 2 if pattern == "alltoall" else 1 + comm.rank % 3
    sf = stf.SF.from_pattern(comm, pattern, n)
    roots = values(np.float64, comm.rank, sf.nroots, 6)
    got = bcast(sf, roots)
    everything = comm.allgather(roots)
    if pattern == "alltoall":
        want = np.concatenate([everything[p][comm.rank * n:(comm.rank + 1) * n] for p in range(comm.size)])
    elif pattern == "gather" and comm.rank != 0:
        want = np.zeros(0)
    else:
        want = np.concatenate(everything)
    assert np.array_equal(got, want)


def test_global_indices_and_owners(comm):
    rng = np.random.default_rng([41, comm.rank])
    nowned = int(rng.integers(1, 5))
    sizes = comm.allgather(nowned)
    total, first = sum(sizes), sum(sizes[: comm.rank])
    need = rng.integers(0, total, 6)
    sf = stf.SF.from_global_indices(comm, nowned, need)
    owned = np.arange(first, first + nowned, dtype=float) * 10
    assert np.array_equal(bcast(sf, owned, len(need)), need * 10.0)
    owners = stf.layout_find_owners(comm, nowned, need)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    for (r, off), gi in zip(owners, need):
        assert starts[r] + off == gi and off < sizes[r]


def test_global_ids_past_int_max(comm):
    # 2^30 entries per rank (counts only): from 3 ranks the ids pass 2^31.
    sizes = [2**30 + 7 * p for p in range(comm.size)]
    starts = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])
    need = np.array([starts[p + 1] - 1 for p in range(comm.size)] + [starts[-1] // 2], dtype=np.int64)
    owners = stf.layout_find_owners(comm, sizes[comm.rank], need)
    for (r, off), gi in zip(owners, need):
        assert starts[r] + off == gi
    with pytest.raises(TypeError):
        stf.layout_find_owners(comm, sizes[comm.rank], need.astype(float))


def test_distribute_section(comm):
    sf = random_sf(comm, 51)
    g = Global(comm, sf)
    rng = np.random.default_rng([52, comm.rank])
    count = rng.integers(0, 4, sf.nroots)
    offset = np.concatenate([[0], np.cumsum(count)[:-1]]).astype(int) if sf.nroots else np.zeros(0, int)
    leaf_count, leaf_offset, datasf = sf.distribute_section(count, offset)
    counts = comm.allgather(count)
    data = np.arange(int(count.sum()), dtype=float) + 1000 * comm.rank
    everything = comm.allgather(data)
    offsets = comm.allgather(offset)
    want, pos = [], 0
    for lp, s, r, i in sorted(g.edges(), key=lambda e: (e[0], e[1])):
        if lp != comm.rank:
            continue
        assert leaf_count[s] == counts[r][i] and leaf_offset[s] == pos
        want += list(everything[r][offsets[r][i]: offsets[r][i] + counts[r][i]])
        pos += counts[r][i]
    got = np.full(len(want), S)
    datasf.bcast(data, got)
    assert np.array_equal(got, np.array(want))


def test_migration(comm):
    rng = np.random.default_rng([61, comm.rank])
    npoints = int(rng.integers(0, 6))
    target = rng.integers(0, comm.size, npoints)
    sf, nnew = stf.SF.migration(comm, target)
    labels = np.arange(npoints, dtype=float) + 100 * comm.rank
    got = np.full(nnew, S)
    sf.bcast(labels, got)
    want = [100 * p + i for p, t in enumerate(comm.allgather(target)) for i in range(len(t)) if t[i] == comm.rank]
    assert nnew == len(want) and np.array_equal(got, np.array(want, float))


def test_algebra_error_on_every_rank(comm):
    """A root with two leaves where inverse needs at most one: an error on every rank."""
    sf = graph_sf(comm, 1, [(0, 0), (0, 0)] if comm.rank == 0 else [])
    with pytest.raises(stf.Error) as e:
        sf.inverse()
    assert e.value.code == stf.STF_ERR_ARG


def test_oracle_sanity(comm):
    """The oracle itself on a hand-made graph (leaf i of every rank reads root i of rank 0)."""
    sf = graph_sf(comm, 2 if comm.rank == 0 else 0, [(0, 1), (0, 0)])
    g = Global(comm, sf)
    want = expect_bcast(g, np.float64, "replace", 8)
    roots0 = values(np.float64, 0, 2, 8)
    assert want.tolist() == [roots0[1], roots0[0]]
    assert leaf_array(g, comm.rank, np.float64, 9).shape == (2,)
