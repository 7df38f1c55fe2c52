"""The table of scripts/compare-builds: reads DIR/<benchmark>-<before|after>-<round>.json."""
import glob
import json
import os
import statistics
import sys

BASELINE = {"sf_pingpong": "mpi", "sf_dmda": "mpi_isend", "matmult": "mpi", "halo3d": "mpi"}
SHOWN = ("case", "op", "matrix", "phase", "transport", "grouping", "size")


def case_of(rec, skip=()):
    """The case a record measures: its settings, not its results."""
    return tuple((k, str(rec[k])) for k in ("benchmark", "impl") + SHOWN if k in rec and k not in skip)


def main(out):
    raw, norm = {}, {}  # starforest case -> label -> [us], [us / the same run's baseline us]
    for path in sorted(glob.glob(os.path.join(out, "*.json"))):
        label = os.path.basename(path).rsplit("-", 2)[1]
        recs = json.load(open(path))
        base = {case_of(r, ("impl", "transport")): r["us"] for r in recs if r["impl"] == BASELINE.get(r["benchmark"])}
        for r in recs:
            if r["impl"] != "starforest":
                continue
            raw.setdefault(case_of(r), {}).setdefault(label, []).append(r["us"])
            b = base.get(case_of(r, ("impl", "transport")))
            if b:
                norm.setdefault(case_of(r), {}).setdefault(label, []).append(r["us"] / b)
    print("%-11s %-46s %10s %10s %7s %12s" % ("benchmark", "case", "before us", "after us", "after/", "normalised"))
    print("%-11s %-46s %10s %10s %7s %12s" % ("", "", "", "", "before", "after/before"))
    ratios = []
    for k in sorted(raw):
        t, n = raw[k], norm.get(k, {})
        if "before" not in t or "after" not in t:
            continue
        d = dict(k)
        case = " ".join("%s=%s" % (f, d[f]) for f in SHOWN if f in d)
        b, a = statistics.median(t["before"]), statistics.median(t["after"])
        r = float("nan")
        if n.get("before") and n.get("after"):
            r = statistics.median(n["after"]) / statistics.median(n["before"])
            ratios.append(r)
        print("%-11s %-46s %10.3f %10.3f %7.3f %12.3f" % (d["benchmark"], case[:46], b, a, a / b, r))
    if ratios:
        print("normalised after/before over %d cases: median %.3f, min %.3f, max %.3f"
              % (len(ratios), statistics.median(ratios), min(ratios), max(ratios)))


if __name__ == "__main__":
    main(sys.argv[1])
