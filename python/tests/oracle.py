"""The sequential oracle of the Python tests, as in the C suite: random
graphs, the global graph gathered from every rank, and the expected result
of each operation computed from it for this rank's arrays."""
import numpy as np

HOLE = 77  # value of leaf slots no leaf uses: operations must leave them alone


def random_graph(comm, seed, holes=True, max_roots=5, max_leaves=8):
    """(nroots, iremote, ilocal or None) of this rank; the counts of every rank
    come from seed, so all ranks know where roots exist."""
    size, rank = comm.size, comm.rank
    counts = np.random.default_rng(seed).integers(0, max_roots + 1, size)
    rng = np.random.default_rng([seed, rank])
    owners = [p for p in range(size) if counts[p] > 0]
    nleaves = int(rng.integers(0, max_leaves + 1)) if owners else 0
    iremote = []
    for _ in range(nleaves):
        p = owners[rng.integers(len(owners))]
        iremote.append((p, int(rng.integers(counts[p]))))
    ilocal = None
    if holes and nleaves and rng.random() < 0.7:
        ilocal = rng.permutation(nleaves + int(rng.integers(0, 4)))[:nleaves]
    return int(counts[rank]), iremote, ilocal


class Global:
    """Every rank's graph as the SF holds it (gathered with get_graph)."""

    def __init__(self, comm, sf):
        self.parts = comm.allgather(sf.get_graph())
        self.rank = comm.rank

    def nroots(self, p):
        return self.parts[p][0]

    def edges(self):
        """(leaf rank, leaf slot, root rank, root index), in (leaf rank, leaf slot) order."""
        out = []
        for p, (nroots, iremote, ilocal) in enumerate(self.parts):
            slots = range(len(iremote)) if ilocal is None else ilocal
            out += [(p, int(s), int(r), int(i)) for s, (r, i) in zip(slots, iremote)]
        return sorted(out)

    def leafspan(self, p):
        nroots, iremote, ilocal = self.parts[p]
        if len(iremote) == 0:
            return 0
        return len(iremote) if ilocal is None else int(max(ilocal)) + 1

    def multi_offsets(self, p):
        """Offset of each root of rank p in its multi-root array, and the total."""
        deg = np.zeros(self.nroots(p), int)
        for _, _, r, i in self.edges():
            if r == p:
                deg[i] += 1
        return np.concatenate([[0], np.cumsum(deg)]).astype(int)


def values(dtype, p, n, key, block=()):
    """Initial data of rank p: small integers, exact in every dtype."""
    idx = np.arange(n * int(np.prod(block, dtype=int))).reshape((n,) + tuple(block))
    raw = (idx * 7 + p * 13 + key) % 11
    if np.dtype(dtype) == np.bool_:
        return (raw % 2).astype(dtype)
    return (raw + 1).astype(dtype)


def apply(op, a, b):
    if op == "replace":
        return b
    if op == "sum":
        return a + b
    if op == "prod":
        return a * b
    if op == "max":
        return np.maximum(a, b)
    if op == "min":
        return np.minimum(a, b)
    if op == "land":
        return np.logical_and(a, b)
    if op == "lor":
        return np.logical_or(a, b)
    raise ValueError(op)


def leaf_array(g, p, dtype, key, block=()):
    """Leaf array of rank p: values on leaf slots, HOLE elsewhere."""
    span = g.leafspan(p)
    out = np.full((span,) + tuple(block), HOLE).astype(dtype)
    for lp, s, _, _ in g.edges():
        if lp == p:
            out[s] = values(dtype, p, span, key, block)[s]
    return out


def expect_bcast(g, dtype, op, key, block=()):
    me = g.rank
    out = leaf_array(g, me, dtype, key + 1, block)
    for lp, s, r, i in g.edges():
        if lp == me:
            out[s] = apply(op, out[s], values(dtype, r, g.nroots(r), key, block)[i])
    return out


def expect_reduce(g, dtype, op, key, block=()):
    """Expected roots; for replace, the set of values each root may take."""
    me = g.rank
    out = values(dtype, me, g.nroots(me), key, block)
    for lp, s, r, i in g.edges():
        if r == me:
            out[i] = apply(op, out[i], leaf_array(g, lp, dtype, key + 1, block)[s])
    return out


def expect_fetch(g, dtype, op, key, block=()):
    """(roots after, leafupdate of this rank): contributions in (rank, slot) order."""
    me = g.rank
    roots = {p: values(dtype, p, g.nroots(p), key, block) for p in range(len(g.parts))}
    update = np.full((g.leafspan(me),) + tuple(block), HOLE).astype(dtype)
    for lp, s, r, i in g.edges():
        before = roots[r][i].copy()
        roots[r][i] = apply(op, roots[r][i], leaf_array(g, lp, dtype, key + 1, block)[s])
        if lp == me:
            update[s] = before
    return roots[me], update


def multi_slots(g):
    """Multi-root (rank, position) of every edge, in edge order."""
    next_free = {p: list(g.multi_offsets(p)[:-1]) for p in range(len(g.parts))}
    slots = []
    for lp, s, r, i in g.edges():
        slots.append((r, next_free[r][i]))
        next_free[r][i] += 1
    return slots


def expect_gather(g, dtype, key, block=()):
    me = g.rank
    out = np.full((g.multi_offsets(me)[-1],) + tuple(block), HOLE).astype(dtype)
    for (lp, s, _, _), (r, m) in zip(g.edges(), multi_slots(g)):
        if r == me:
            out[m] = leaf_array(g, lp, dtype, key + 1, block)[s]
    return out


def expect_scatter(g, dtype, key, block=()):
    me = g.rank
    out = leaf_array(g, me, dtype, key + 1, block)
    for (lp, s, _, _), (r, m) in zip(g.edges(), multi_slots(g)):
        if lp == me:
            out[s] = values(dtype, r, g.multi_offsets(r)[-1], key, block)[m]
    return out
