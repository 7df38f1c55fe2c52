#!/usr/bin/env bash
# scripts/plot on two small record files: with matplotlib it writes the PNGs
# named after both inputs; without, it fails saying how to get matplotlib,
# and installs nothing.
# usage: plot_check.sh SOURCE_DIR   (exit 77, skipped, without python3)
set -euo pipefail
command -v python3 > /dev/null || { echo "plot_check: no python3 here"; exit 77; }
plot=$1/scripts/plot
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
rec() {  # rec IMPL SIZE US
  printf '{"benchmark": "demo", "impl": "%s", "size": %s, "ranks": 2, "us": %s, "min_us": %s, "max_us": %s, '\
'"iterations": 10, "machine": "testhost", "date": "2025-01-01"}' "$1" "$2" "$3" "$3" "$3"
}
echo "[$(rec mpi 8 1.0), $(rec starforest 8 1.5), $(rec mpi 64 2.0)]" > "$dir/a.json"
echo "[$(rec starforest 64 2.5)]" > "$dir/b.json"
if python3 -c "import matplotlib" 2> /dev/null; then
  python3 "$plot" "$dir/a.json" "$dir/b.json" --out "$dir/out"
  test -s "$dir/out/a+b-demo-latency.png"
  echo "plot_check: PNG written"
else
  if python3 "$plot" "$dir/a.json" 2> "$dir/err"; then
    echo "plot succeeded without matplotlib?"
    exit 1
  fi
  cat "$dir/err"
  grep -q "get it with" "$dir/err"
  python3 -c "import matplotlib" 2> /dev/null && { echo "plot installed matplotlib"; exit 1; }
  echo "plot_check: refused without matplotlib, nothing installed"
fi
