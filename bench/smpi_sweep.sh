#!/usr/bin/env bash
# A benchmark of the SMPI build (make smpi SMPI_TARGETS=PROGRAM) on simulated
# clusters (docs/design/simulation.md): platforms made from a machine profile,
# one run for each node count and ranks per node given.
#   bench/smpi_sweep.sh PROGRAM PROFILE "NODES..." "RANKS_PER_NODE..." [PROGRAM's options...]
# e.g. PROGRAM nodeaware (the node-aware strategies) or setup_cost (set-up at
# scale). SMPIRUN_FLAGS passes more --cfg options to smpirun.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 4 ] || { echo "usage: bench/smpi_sweep.sh PROGRAM PROFILE \"NODES...\" \"RANKS_PER_NODE...\" [options]" >&2; exit 2; }
program=$1 profile=$2 nodes=$3 per_node=$4
shift 4
bench=${STF_SMPI_BUILD:-$root/build-smpi}/bench/$program
[ -x "$bench" ] || { echo "smpi_sweep: $bench is missing (make smpi SMPI_TARGETS=$program)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for k in $per_node; do
  for n in $nodes; do
    "$root/scripts/platform" "$profile" "$n" "$k" "$work/p" >/dev/null
    echo "# $n nodes x $k ranks ($(basename "$profile"))"
    "$root/scripts/smpirun" "$work/p" $((n * k)) "$bench" "$@"
  done
done
