#!/usr/bin/env bash
# The node-aware strategies on simulated clusters (docs/design/simulation.md):
# bench/nodeaware of the SMPI build (make smpi SMPI_TARGETS=nodeaware) on
# platforms made from a machine profile, for each node count and ranks per
# node given.
#   bench/smpi_nodeaware.sh PROFILE "NODES..." "RANKS_PER_NODE..." [nodeaware options...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
profile=$1 nodes=$2 per_node=$3
shift 3
bench=${STF_SMPI_BUILD:-$root/build-smpi}/bench/nodeaware
[ -x "$bench" ] || { echo "smpi_nodeaware: $bench is missing (see the header)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for k in $per_node; do
  for n in $nodes; do
    "$root/scripts/platform" "$profile" "$n" "$k" "$work/p" >/dev/null
    echo "# $n nodes x $k ranks ($(basename "$profile"))"
    "$root/scripts/smpirun" "$work/p" $((n * k)) "$bench" "$@"
  done
done
