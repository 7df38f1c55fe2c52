#!/usr/bin/env bash
# Install what starforest needs to build and test, on Debian/Ubuntu.
# Does nothing when everything is already there. --mpich adds MPICH (Hydra),
# which installs beside Open MPI (mpicc.mpich, mpiexec.mpich), for a second
# build directory and the cluster runs with `scripts/cluster run --mpi mpich`;
# other arguments are more Debian packages (scripts/python-env's).
set -euo pipefail

packages=(cmake make g++ gfortran openmpi-bin libopenmpi-dev libgtest-dev pkg-config zlib1g-dev)
for a in "$@"; do
  case "$a" in
    --mpich) packages+=(mpich libmpich-dev) ;;
    *) packages+=("$a") ;;
  esac
done
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
