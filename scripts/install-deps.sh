#!/usr/bin/env bash
# Install what starforest needs to build and test, on Debian/Ubuntu, and the
# packages named as arguments (e.g. `mpich libmpich-dev` for the MPICH
# build). Does nothing when everything is already there.
set -euo pipefail

packages=(cmake make g++ gfortran openmpi-bin libopenmpi-dev libgtest-dev pkg-config zlib1g-dev "$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
