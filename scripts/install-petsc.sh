#!/usr/bin/env bash
# Install PETSc (Debian/Ubuntu package petsc-dev) for the optional PETSc
# comparison benchmarks (bench/petsc). Does nothing when pkg-config already
# finds PETSc. Nothing else in starforest needs PETSc.
set -euo pipefail

if pkg-config --exists PETSc 2>/dev/null; then
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "install-petsc: no apt-get here; install PETSc so that 'pkg-config PETSc' finds it" >&2
  exit 1
fi
echo "install-petsc: installing petsc-dev (large: several hundred MB)"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends petsc-dev pkg-config
pkg-config --exists PETSc || { echo "install-petsc: petsc-dev installed but pkg-config does not find PETSc" >&2; exit 1; }
