#!/usr/bin/env python3
"""Writes the seed graphs of fuzz_graph into corpus/fuzz_graph/.

fuzz_graph decodes its input with libFuzzer's FuzzedDataProvider, which
takes integers from the end of the input, most significant byte first,
each in as few bytes as its range needs; this encodes graphs that way.
Run it again after changing the harness's decoding."""
import os

TRANSPORTS = ["basic", "neighbor", "window", "collective", "allgatherv", "gatherv",
              "alltoall", "putsignal", "2step", "3step", "split"]


def field(value, lo, hi):
    """The bytes of value in [lo, hi], in the order the harness reads them."""
    span, n = hi - lo, 0
    while span >> (8 * n):
        n += 1
    return list((value - lo).to_bytes(n, "big"))


def graph(transport, nroots, leaves, validate=True, contiguous=False, copy=True, wide=False):
    """leaves: (slot, rank, offset) per leaf; slot ignored when contiguous.
    wide: nroots, slots and offsets may be any int."""
    def value(v, lo, hi):
        return field(v, -2**31, 2**31 - 1) if wide else field(v, lo, hi)
    read = field(TRANSPORTS.index(transport), 0, len(TRANSPORTS) - 1)
    read += [int(validate), int(contiguous), int(copy), int(wide)]
    read += value(nroots, -2, 1000) + field(len(leaves), -2, 4096)
    for slot, rank, offset in leaves:
        if not contiguous:
            read += value(slot, -1, 8192)
        read += [rank & 0xFF if rank else 0]
        read += value(offset, -1, 1100)
    return bytes(reversed(read))


SEEDS = {
    "ring": graph("basic", 4, [(i, 0, (i + 1) % 4) for i in range(4)], contiguous=True),
    "scattered_slots": graph("neighbor", 3, [(4, 0, 2), (0, 0, 0), (2, 0, 0), (6, 0, 1)]),
    "window_shared_root": graph("window", 1, [(1, 0, 0), (3, 0, 0)], copy=False),
    "no_leaves": graph("basic", 5, []),
    "no_roots": graph("basic", 0, []),
    "gatherv": graph("gatherv", 2, [(0, 0, 1), (1, 0, 1), (2, 0, 0)]),
    "putsignal": graph("putsignal", 3, [(5, 0, 2), (1, 0, 0)]),
    "threestep": graph("3step", 4, [(i, 0, 3 - i) for i in range(4)], contiguous=True),
    "offset_past_nroots": graph("basic", 2, [(0, 0, 2)]),
    "offset_past_nroots_novalidate": graph("neighbor", 2, [(0, 0, 5)], validate=False),
    "rank_out_of_range": graph("basic", 2, [(0, -1, 0)]),
    "duplicate_slot": graph("window", 2, [(3, 0, 0), (3, 0, 1)]),
    "negative_slot": graph("basic", 2, [(-1, 0, 0)]),
    "negative_nroots": graph("basic", -1, []),
    "wide_last_root": graph("basic", 2**31 - 1, [(7, 0, 2**31 - 2), (0, 0, 0)], wide=True),
    "wide_last_slot": graph("neighbor", 3, [(2**31 - 1, 0, 2)], wide=True),
    "wide_in_buffers": graph("window", 70000, [(65536, 0, 69999), (3, 0, 1)], wide=True),
}

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "fuzz_graph")
os.makedirs(out, exist_ok=True)
for name, data in SEEDS.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
