#!/usr/bin/env python3
"""Combines bench/autoselect runs (one JSON file per layout) into the table
of how well -stf_type auto chooses, and a scatter plot of predicted against
measured time.

usage: bench/autoselect_report.py RUN.json... [--again RUN2.json...] [--plot FILE.png] [--markdown]

Per layout (hosts x ranks per host), over the cases (graph x unit size):
  within 5%   fraction of cases whose pick's measured time is at most 1.05
              times the fastest of auto's candidates (basic, neighbor,
              putsignal, 2step, 3step, split, the last three also with
              putsignal steps, e.g. 3step/putsignal) in the same run
  mean, worst the pick's time over the fastest's (the slowdown)
for three picks: the model's (-stf_type auto, predictions for 8-byte
units unless the run was told the unit), the model's at the case's unit size (the smallest predicted time
stf_explain gives for that unit), and the autotuned one (-stf_autotune N);
under the run's profile and, when the runs recorded one
(--baseline-profile), under the baseline profile too.
The median relative error |predicted - measured| / measured is over every
case and candidate that has a prediction.

--again names a second run of the same cases (the same layouts, e.g. the
study run twice): each run's fastest candidate and model pick are judged
by the other run's times. How often one run's fastest is within 5 % of the
other's is the most that any choice, the best measured one included, can
score on this machine's noise: the ceiling that the goal's 90 % must be
read against.

The plot needs matplotlib; without it the table is printed and the plot
is skipped with a line saying how to get it."""
import json
import statistics
import sys
from collections import defaultdict


def load(paths):
    records = []
    for p in paths:
        with open(p) as f:
            records.extend(r for r in json.load(f) if r.get("benchmark") == "autoselect")
    return records


def layout(r):
    return f"{r['hosts']} host(s) x {r['ranks_per_host'].split(',')[0]}"


def cases(records):
    """{layout: {case: {candidate: record}}}"""
    out = defaultdict(lambda: defaultdict(dict))
    for r in records:
        out[layout(r)][r["case"]][r["candidate"]] = r
    return out


def summary(by_case, suffix=""):
    """The picks under the profile (suffix "") or the baseline one ("_baseline")."""
    picks = {"model": [], "model@unit": [], "autotune": []}
    for cands in by_case.values():
        auto = {c: r for c, r in cands.items() if r["auto_candidate"]}
        fastest = min(r["us"] for r in auto.values())
        any_r = next(iter(cands.values()))
        predicted = {c: r["predicted" + suffix + "_us"] for c, r in auto.items() if r["predicted" + suffix + "_us"] >= 0}
        chosen = {"model": any_r["model_pick" + suffix], "autotune": any_r["autotune_pick" + suffix],
                  "model@unit": min(predicted, key=predicted.get) if predicted else any_r["model_pick" + suffix]}
        for k, c in chosen.items():
            picks[k].append(auto[c]["us"] / fastest if c in auto else float("nan"))
    rows = {}
    for k, s in picks.items():
        rows[k] = (sum(x <= 1.05 for x in s), len(s), statistics.mean(s), max(s))
    return rows


def noise(by_case):
    """Median over cases of the fastest candidate's round spread (max - min)
    / median, and the cases whose second fastest of auto's candidates lies
    inside the fastest's [min, max] range of rounds (not told apart)."""
    spreads, ties = [], 0
    for cands in by_case.values():
        auto = sorted((r for r in cands.values() if r["auto_candidate"]), key=lambda r: r["us"])
        spreads.append((auto[0]["max_us"] - auto[0]["min_us"]) / auto[0]["us"])
        ties += len(auto) > 1 and auto[1]["us"] <= auto[0]["max_us"]
    return statistics.median(spreads), ties


def cross_run(first, second):
    """Per case in both runs: (the first run's fastest, the first run's model
    pick), each as its time over the fastest in the second run."""
    out = []
    for case, cands in first.items():
        if case not in second:
            continue
        auto = {c: r for c, r in cands.items() if r["auto_candidate"]}
        other = {c: r["us"] for c, r in second[case].items() if r["auto_candidate"]}
        fastest = min(auto, key=lambda c: auto[c]["us"])
        pick = next(iter(cands.values()))["model_pick"]
        if fastest in other and pick in other:
            best = min(other.values())
            out.append((other[fastest] / best, other[pick] / best))
    return out


def print_cross_run(by_layout, again_layout):
    print("two runs (--again): one run's fastest candidate and model pick, timed in the other run, over that "
          "run's fastest (both directions); the fastest's share within 5% is the noise ceiling of any pick")
    for lay, by_case in sorted(by_layout.items()):
        if lay not in again_layout:
            continue
        pairs = cross_run(by_case, again_layout[lay]) + cross_run(again_layout[lay], by_case)
        if not pairs:
            continue
        n = len(pairs)
        for k, name in ((0, "fastest of the other run"), (1, "model pick")):
            r = [p[k] for p in pairs]
            within = sum(x <= 1.05 for x in r)
            print(f"  {lay}: {name}: {within}/{n} within 5% ({100 * within / n:.0f}%), "
                  f"mean {statistics.mean(r):.2f}x, worst {max(r):.2f}x")


def relative_errors(records, suffix=""):
    key = "predicted" + suffix + "_us"
    return [abs(r[key] - r["us"]) / r["us"] for r in records if r.get(key, -1) >= 0 and r["us"] > 0]


def main(argv):
    paths, again, plot, markdown = [], [], None, False
    into = paths
    i = 0
    while i < len(argv):
        if argv[i] == "--plot":
            plot = argv[i + 1]
            i += 2
            continue
        if argv[i] == "--markdown":
            markdown = True
        elif argv[i] == "--again":
            into = again
        else:
            into.append(argv[i])
        i += 1
    if not paths:
        print(__doc__)
        return 2
    records, again_records = load(paths), load(again)
    timings = {r.get("timing", "streamed") for r in records + again_records}
    if len(timings) > 1:  # runs before --timing existed timed back to back
        print(f"warning: the runs were timed differently ({', '.join(sorted(timings))}): "
              "bench/README.md, Method, says why their times do not compare", file=sys.stderr)
    by_layout = cases(records)
    baseline = all("model_pick_baseline" in r for r in records)
    profiles = [("", "profile")] + ([("_baseline", "baseline")] if baseline else [])
    head = ("layout", "model", "cases", "model within 5%", "mean", "worst", "model@unit within 5%", "mean", "worst",
            "autotune within 5%", "mean", "worst")
    lines = []
    for lay, by_case in sorted(by_layout.items()):
        for suffix, label in profiles:
            s = summary(by_case, suffix)
            row = [lay, label, str(len(by_case))]
            for k in ("model", "model@unit", "autotune"):
                within, n, mean, worst = s[k]
                row += [f"{within}/{n} ({100 * within / n:.0f}%)", f"{mean:.2f}x", f"{worst:.2f}x"]
            lines.append(row)
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for row in lines:
            print("| " + " | ".join(row) + " |")
    else:
        widths = [max(len(h), *(len(r[k]) for r in lines)) for k, h in enumerate(head)]
        print("  ".join(h.ljust(w) for h, w in zip(head, widths)))
        for row in lines:
            print("  ".join(c.ljust(w) for c, w in zip(row, widths)))
    for suffix, label in profiles:
        e = relative_errors(records, suffix)
        if e:
            print(f"median relative error ({label}): {statistics.median(e):.2f} over {len(e)} predictions "
                  f"(|predicted - measured| / measured)")
        for lay, by_case in sorted(by_layout.items()):
            e = relative_errors([r for c in by_case.values() for r in c.values()], suffix)
            if e:
                print(f"  {lay}: {statistics.median(e):.2f} over {len(e)}")
    print("measurement noise: the fastest candidate's round spread (max - min) / median, median over cases; "
          "cases whose second fastest lies inside the fastest's range of rounds")
    for lay, by_case in sorted(by_layout.items()):
        spread, ties = noise(by_case)
        print(f"  {lay}: spread {spread:.2f}, not told apart {ties}/{len(by_case)}")
    if again:
        print_cross_run(by_layout, cases(again_records))
    errs = relative_errors(records)
    if plot:
        try:
            import matplotlib
        except ImportError:
            print(f"plot skipped: this Python ({sys.executable}) has no matplotlib; get it with "
                  "apt-get install python3-matplotlib (Debian's python3) or pip install matplotlib")
            return 0
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(7, 6))
        markers = "os^Dv<>"
        cands = sorted({r["candidate"] for r in records if r["predicted_us"] >= 0})
        lays = sorted(by_layout)
        for li, lay in enumerate(lays):
            for ci, c in enumerate(cands):
                pts = [(r["predicted_us"], r["us"]) for r in records
                       if layout(r) == lay and r["candidate"] == c and r["predicted_us"] > 0]
                if pts:
                    ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=14, marker=markers[li % len(markers)],
                               color=f"C{ci}", alpha=0.7, label=f"{c}, {lay}")
        lo = min(min(r["predicted_us"], r["us"]) for r in records if r["predicted_us"] > 0)
        hi = max(max(r["predicted_us"], r["us"]) for r in records if r["predicted_us"] > 0)
        ax.plot([lo, hi], [lo, hi], "k--", lw=1, label="predicted = measured")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("predicted us per bcast")
        ax.set_ylabel("measured us per bcast (slowest rank, median)")
        med = statistics.median(errs) if errs else float("nan")
        ax.set_title(f"autoselect: model against measurement (median relative error {med:.2f})")
        ax.legend(fontsize=6, ncol=2)
        fig.tight_layout()
        fig.savefig(plot, dpi=120)
        print(f"plot: {plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
