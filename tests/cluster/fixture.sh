#!/usr/bin/env bash
# CTest fixture of the cluster tests (tests/cluster/CMakeLists.txt):
#   fixture.sh up H DIR    brings the cluster up with at least H hosts; skips (77)
#                          with the reason when this machine cannot make namespaces
#   fixture.sh down DIR    takes it down again if `up` made it (marker in DIR), so a
#                          cluster that was up before the tests stays up
set -euo pipefail
cluster="$(cd "$(dirname "$0")/../.." && pwd)/scripts/cluster"
marker="cluster-made-by-tests"

case "${1:-}" in
  up)
    hosts="$2" dir="$3"
    if ! why=$("$cluster" check 2>&1); then
      echo "cluster tests skipped: ${why#cluster: }"
      exit 77
    fi
    if "$cluster" status >/dev/null; then
      echo "cluster already up: the tests use it and leave it up"
    else
      touch "$dir/$marker"
    fi
    "$cluster" up "$hosts"
    ;;
  down)
    dir="$2"
    if [ -e "$dir/$marker" ]; then
      "$cluster" down
      rm -f "$dir/$marker"
    else
      echo "cluster left as it was before the tests"
    fi
    ;;
  *)
    echo "usage: fixture.sh up H DIR | down DIR" >&2
    exit 2
    ;;
esac
