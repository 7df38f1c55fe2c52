#!/usr/bin/env bash
# The whole bench/autoselect study: the case set on 1 host x 4 ranks, then
# in the namespace cluster on 2 hosts x 2 and 4 hosts x 2 (under the
# cluster's lock, taken down afterwards), then the table and the plot.
#   bench/autoselect_layouts.sh OUTDIR [--again EARLIER_OUTDIR] [autoselect options...]
# Writes OUTDIR/{1x4,2x2,4x2}.json, OUTDIR/table.txt and OUTDIR/scatter.png.
# --again: an earlier run of the study, whose times judge this run's picks
# and this run's times the earlier one's (autoselect_report.py --again).
# Two models judged by the same measurements: the profile (--profile) is
# share/profiles/cluster-2hosts-4ranks.json for the cluster layouts and
# share/profiles/vm-1host-4ranks-rpn2.json on one host, the library's model
# as it is; the baseline (--baseline-profile) is the same profile with its
# busy steps set to 0, the model without them (docs/MODEL.md).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:?usage: bench/autoselect_layouts.sh OUTDIR [options]}"
shift
mkdir -p "$out"
out="$(cd "$out" && pwd)"
again=()
if [ "${1:-}" = --again ]; then
  earlier="${2:?--again needs the OUTDIR of an earlier run}"
  again=(--again "$earlier"/1x4.json "$earlier"/2x2.json "$earlier"/4x2.json)
  shift 2
fi
cluster="$root/share/profiles/cluster-2hosts-4ranks.json"
host="$root/share/profiles/vm-1host-4ranks-rpn2.json"
for p in "$cluster" "$host"; do
  /usr/bin/python3 - "$p" "$out/$(basename "$p" .json)-no-busy-step.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
for c in ("same_node", "other_node"):
    p["postal"][c]["busy_step"] = 0
json.dump(p, open(sys.argv[2], "w"), indent=2)
PY
done
args=(--profile "$cluster" --baseline-profile "$out/cluster-2hosts-4ranks-no-busy-step.json" "$@")
"$root/scripts/bench" autoselect --ranks 4 --json "$out/1x4.json" --profile "$host" \
  --baseline-profile "$out/vm-1host-4ranks-rpn2-no-busy-step.json" "$@" | tee "$out/1x4.txt"
flock /tmp/stf-cluster-use.lock bash -c '
  root="$1"; out="$2"; shift 2
  "$root/scripts/cluster" up 4 >/dev/null &&
  { "$root/scripts/bench" autoselect --hosts 2 --ranks 4 --json "$out/2x2.json" "$@" | tee "$out/2x2.txt";
    "$root/scripts/bench" autoselect --hosts 4 --ranks 8 --json "$out/4x2.json" "$@" | tee "$out/4x2.txt"; }
  rc=$?; "$root/scripts/cluster" down; exit $rc' _ "$root" "$out" "${args[@]}"
/usr/bin/python3 "$root/bench/autoselect_report.py" "$out"/1x4.json "$out"/2x2.json "$out"/4x2.json \
  "${again[@]}" --plot "$out/scatter.png" | tee "$out/table.txt"
