#!/usr/bin/env bash
# The whole bench/autoselect study: the case set on 1 host x 4 ranks, then
# in the namespace cluster on 2 hosts x 2 and 4 hosts x 2 (under the
# cluster's lock, taken down afterwards), then the table and the plot.
#   bench/autoselect_layouts.sh OUTDIR [autoselect options...]
# Writes OUTDIR/{1x4,2x2,4x2}.json, OUTDIR/table.txt and OUTDIR/scatter.png.
# Two models judged by the same measurements: the baseline
# (--baseline-profile) is share/profiles/cluster-2hosts-4ranks.json, the
# library's model as it is; the profile (--profile) is the same with
# maxrate.node_gap set to its other-node gap, which adds the messages
# leaving a node one after another to the strategy model (docs/MODEL.md).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:?usage: bench/autoselect_layouts.sh OUTDIR [options]}"
shift
mkdir -p "$out"
out="$(cd "$out" && pwd)"
shared="$root/share/profiles/cluster-2hosts-4ranks.json"
/usr/bin/python3 - "$shared" "$out/node-gap-profile.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["maxrate"]["node_gap"] = p["postal"]["other_node"]["gap"]
json.dump(p, open(sys.argv[2], "w"), indent=2)
PY
args=(--profile "$out/node-gap-profile.json" --baseline-profile "$shared" "$@")
"$root/scripts/bench" autoselect --ranks 4 --json "$out/1x4.json" "${args[@]}" | tee "$out/1x4.txt"
flock /tmp/stf-cluster-use.lock bash -c '
  root="$1"; out="$2"; shift 2
  "$root/scripts/cluster" up 4 >/dev/null &&
  { "$root/scripts/bench" autoselect --hosts 2 --ranks 4 --json "$out/2x2.json" "$@" | tee "$out/2x2.txt";
    "$root/scripts/bench" autoselect --hosts 4 --ranks 8 --json "$out/4x2.json" "$@" | tee "$out/4x2.txt"; }
  rc=$?; "$root/scripts/cluster" down; exit $rc' _ "$root" "$out" "${args[@]}"
/usr/bin/python3 "$root/bench/autoselect_report.py" "$out"/1x4.json "$out"/2x2.json "$out"/4x2.json \
  --plot "$out/scatter.png" | tee "$out/table.txt"
