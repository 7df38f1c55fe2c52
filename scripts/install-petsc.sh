#!/usr/bin/env bash
# Install PETSc (Debian/Ubuntu package petsc-dev) for the PETSc plug-in
# (petsc/) and the comparison benchmarks (bench/petsc); with --examples also
# PETSc's examples and tests (libpetscX.Y-dev-examples), which
# `make test-petsc` runs through the plug-in. Installs nothing that
# pkg-config (and, with --examples, the examples directory) already shows.
set -euo pipefail

examples=0
[ "${1:-}" = "--examples" ] && examples=1

# The examples of the PETSc that pkg-config finds (Debian's layout).
examples_dir() {
  local v
  v=$(pkg-config --modversion PETSc 2>/dev/null) || return 1
  echo "/usr/share/petsc/${v%.*}/share/petsc/examples/src"
}

want=()
pkg-config --exists PETSc 2>/dev/null || want+=(petsc-dev pkg-config)
if [ ${#want[@]} -eq 0 ] && [ $examples = 0 ]; then exit 0; fi
if [ ${#want[@]} -eq 0 ] && [ -d "$(examples_dir)" ]; then exit 0; fi
if ! command -v apt-get >/dev/null; then
  echo "install-petsc: no apt-get here; install PETSc so that 'pkg-config PETSc' finds it" >&2
  exit 1
fi
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
if [ ${#want[@]} -gt 0 ]; then
  echo "install-petsc: installing petsc-dev (large: several hundred MB)"
  $sudo apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
  pkg-config --exists PETSc || { echo "install-petsc: petsc-dev installed but pkg-config does not find PETSc" >&2; exit 1; }
fi
if [ $examples = 1 ] && [ ! -d "$(examples_dir)" ]; then
  v=$(pkg-config --modversion PETSc)
  echo "install-petsc: installing libpetsc${v%.*}-dev-examples"
  $sudo apt-get install -y -qq --no-install-recommends "libpetsc${v%.*}-dev-examples" >/dev/null
  [ -d "$(examples_dir)" ] || { echo "install-petsc: no examples at $(examples_dir)" >&2; exit 1; }
fi
