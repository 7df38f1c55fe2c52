#!/usr/bin/env bash
# One cluster test: scripts/cluster run with the given arguments, or a skip
# (77, with the reason) when this machine cannot make network namespaces.
# A cluster that should be up and is not (the fixture failed) is a failure.
set -euo pipefail
cluster="$(cd "$(dirname "$0")/../.." && pwd)/scripts/cluster"
if ! why=$("$cluster" check 2>&1); then
  echo "skipped: ${why#cluster: }"
  exit 77
fi
if ! "$cluster" status >/dev/null; then
  echo "the cluster is down (its fixture, cluster_up, should have brought it up)" >&2
  exit 1
fi
exec "$cluster" run "$@"
