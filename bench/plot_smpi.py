#!/usr/bin/python3
"""Plots of the simulated studies in bench/README (Debian's python3-matplotlib).

  plot_smpi.py setup OUT.png --runs LABEL FILE.json... [--runs LABEL FILE.json...]
      setup_cost records of several rank counts: one stf_setup's time against
      the ranks, a line per type and a line style per run (LABEL), and each
      type over basic of the same run below.
  plot_smpi.py nodeaware OUT.png FILE.json...
      nodeaware records of several platforms: per matrix, the bcast of each
      strategy over basic's of the same run, one group of bars per platform
      (nodes x ranks per node) in the order of the files.
"""
import argparse
import itertools
import json
from collections import defaultdict

import sys

try:
    import matplotlib
except ImportError:
    sys.exit("plot_smpi.py needs matplotlib: apt-get install python3-matplotlib (Debian), "
             "or pip install --user matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

COLOURS = {"basic": "black", "2step": "tab:blue", "3step": "tab:orange", "split": "tab:green"}
STYLES = ["-", "--", ":", "-."]


def records(paths):
    for p in paths:
        with open(p) as f:
            yield from json.load(f)


def plot_setup(out, runs):
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 7), sharex=True, height_ratios=[2, 1])
    for style, (label, paths) in zip(itertools.cycle(STYLES), runs):
        times = defaultdict(dict)  # type -> ranks -> us
        for r in records(paths):
            times[r["options"].split()[-1]].setdefault(r["ranks"], r["us"])
        basic = times.get("basic", {})
        for kind, by_ranks in times.items():
            ranks = sorted(by_ranks)
            colour = COLOURS.get(kind)
            top.plot(ranks, [by_ranks[n] for n in ranks], style, marker="o", color=colour, label=f"{kind}, {label}")
            if kind != "basic":
                shared = [n for n in ranks if n in basic]
                bottom.plot(shared, [by_ranks[n] / basic[n] for n in shared], style, marker="o", color=colour)
    top.set_ylabel("simulated time of one stf_setup (us)")
    top.set_xscale("log", base=2)
    top.legend(fontsize=8)
    top.grid(alpha=0.3)
    bottom.set_ylabel("over basic")
    bottom.set_xlabel("simulated ranks (4 per node)")
    bottom.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def plot_nodeaware(out, paths):
    ratios = defaultdict(lambda: defaultdict(dict))  # matrix -> platform -> strategy -> ratio
    platforms = []
    for p in paths:
        recs = [r for r in records([p]) if r["direction"] == "bcast"]
        if not recs:
            continue
        platform = f"{recs[0]['nodes']}x{recs[0]['ranks'] // recs[0]['nodes']}"
        if platform not in platforms:
            platforms.append(platform)
        base = {r["matrix"]: r["us"] for r in recs if r["strategy"] == "basic"}
        for r in recs:
            if r["strategy"] != "basic":
                ratios[r["matrix"]][platform][r["strategy"]] = r["us"] / base[r["matrix"]]
    matrices = sorted(ratios)
    fig, axes = plt.subplots(len(matrices), 1, figsize=(8, 2.6 * len(matrices)), squeeze=False)
    strategies = ["2step", "3step", "split"]
    width = 0.8 / len(strategies)
    for ax, matrix in zip(axes[:, 0], matrices):
        shown = [p for p in platforms if p in ratios[matrix]]
        for k, s in enumerate(strategies):
            xs = [i + (k - 1) * width for i in range(len(shown))]
            # From 1 (basic) to the ratio: below the line where the strategy wins.
            heights = [ratios[matrix][p].get(s, 1.0) - 1.0 for p in shown]
            ax.bar(xs, heights, width, bottom=1.0, color=COLOURS[s], label=s)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(shown)), [p.replace("x", " x ") for p in shown])
        ax.set_yscale("log", base=2)
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_ylabel("bcast over basic")
        ax.set_title(matrix, fontsize=10)
        ax.grid(alpha=0.3, axis="y")
    axes[0, 0].legend(fontsize=8)
    axes[-1, 0].set_xlabel("simulated nodes x ranks per node")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("study", choices=["setup", "nodeaware"])
    ap.add_argument("out")
    ap.add_argument("files", nargs="*")
    ap.add_argument("--runs", nargs="+", action="append", metavar=("LABEL", "FILE"), default=[])
    a = ap.parse_args()
    if a.study == "setup":
        if not a.runs:
            ap.error("setup needs --runs LABEL FILE...")
        plot_setup(a.out, [(r[0], r[1:]) for r in a.runs])
    else:
        if not a.files:
            ap.error("nodeaware needs its JSON files")
        plot_nodeaware(a.out, a.files)


if __name__ == "__main__":
    main()
