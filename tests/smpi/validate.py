#!/usr/bin/env python3
"""A generated platform gives the profile's model back (ctest smpi_platform).

  validate.py [--sender-gap] [--flat-node-limit] PROFILE.json NETCHECK OUTDIR [NODE_RATE_TIMES]

writes a platform of 2 nodes of 4 ranks from the profile (scripts/platform;
with NODE_RATE_TIMES, the profile's node injection limit set to that many
times one rank's large-message rate, so that the limit binds at some pair
count), runs NETCHECK (tests/smpi/netcheck.c) on it and compares:
- each one-way time, per locality and size, with alpha + beta * bytes of
  the profile's segment for that size;
- the rate of k concurrent pairs between the nodes, at 8 KiB and 16 MiB,
  with k * S / (alpha + max(beta * S, k * S / limit)): the node's limit
  at that size, which is the profile's at every size with
  --flat-node-limit, else scaled by the last segment's beta over S's
  segment's (scripts/platform);
- the time of k messages of 8 bytes that one rank sends to the other node
  at once with alpha + (k - 1) * gap: the profile's off-node gap with
  --sender-gap (passed on to scripts/platform, as --flat-node-limit is),
  else 0 (SMPI overlaps them).
Fails when any is more than 10 % off.
"""
import json
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def segment(segs, nbytes):
    return [s for s in segs if s["from_bytes"] <= nbytes][-1]


def postal(segs, nbytes):
    seg = segment(segs, nbytes)
    return seg["alpha"] + seg["beta"] * nbytes


def main(profile_path, netcheck, out, node_rate_times=None, flags=()):
    with open(profile_path) as f:
        profile = json.load(f)
    same = profile["postal"]["same_node"]["segments"]
    other = profile["postal"]["other_node"]["segments"]
    gap = profile["postal"]["other_node"]["gap"] if "--sender-gap" in flags else 0.0
    one_rank = 1.0 / other[-1]["beta"]
    node_rate = max(profile["maxrate"]["node_rate"], one_rank)
    if node_rate_times is not None:
        node_rate = float(node_rate_times) * one_rank
        profile["maxrate"]["node_rate"] = node_rate
        os.makedirs(out, exist_ok=True)
        profile_path = os.path.join(out, "profile.json")
        with open(profile_path, "w") as f:
            json.dump(profile, f)
    platform = os.path.join(ROOT, "scripts", "platform")
    subprocess.run([platform] + list(flags) + [profile_path, "2", "4", out], check=True)
    run = subprocess.run([os.path.join(ROOT, "scripts", "smpirun"), out, "8", netcheck],
                         capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        sys.exit(f"validate: the simulation failed ({run.returncode}):\n{run.stdout}\n{run.stderr}")
    rows = []
    for line in run.stdout.splitlines():
        w = line.split()
        if w and w[0] == "pingpong":
            nbytes = int(w[1])
            rows.append((f"same_node  {nbytes:9d} B", float(w[2]) * 1e6, postal(same, nbytes) * 1e6, "us"))
            rows.append((f"other_node {nbytes:9d} B", float(w[3]) * 1e6, postal(other, nbytes) * 1e6, "us"))
        elif w and w[0] == "pairs":
            k, nbytes = int(w[1]), int(w[2])
            seg = segment(other, nbytes)
            limit = node_rate if "--flat-node-limit" in flags else node_rate * other[-1]["beta"] / seg["beta"]
            want = k * nbytes / (seg["alpha"] + max(seg["beta"] * nbytes, k * nbytes / limit))
            rows.append((f"{k} pairs    {nbytes:9d} B", float(w[3]) / 1e9, want / 1e9, "GB/s"))
        elif w and w[0] == "fan":
            k, nbytes = int(w[1]), int(w[2])
            want = postal(other, nbytes) + (k - 1) * gap
            rows.append((f"{k} at once  {nbytes:9d} B", float(w[3]) * 1e6, want * 1e6, "us"))
    bad = 0
    for what, got, want, unit in rows:
        err = got / want - 1
        ok = abs(err) <= 0.10
        bad += not ok
        print(f"{what}  simulated {got:10.3f} {unit:4}  profile {want:10.3f} {unit:4}  {err * 100:+6.1f} %  "
              f"{'ok' if ok else 'FAIL'}")
    if len(rows) < 20:
        sys.exit(f"validate: only {len(rows)} figures to compare:\n{run.stdout}")
    print(f"validate: {len(rows) - bad}/{len(rows)} within 10 %")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    options = ("--sender-gap", "--flat-node-limit")
    args = [a for a in sys.argv[1:] if a not in options]
    if len(args) not in (3, 4):
        sys.exit("usage: validate.py [--sender-gap] [--flat-node-limit] PROFILE.json NETCHECK OUTDIR "
                 "[NODE_RATE_TIMES]")
    main(*args, flags=[a for a in sys.argv[1:] if a in options])
