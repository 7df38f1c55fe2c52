#!/usr/bin/env bash
# Install what starforest needs to build, on Debian/Ubuntu: compilers,
# CMake, Open MPI, zlib. Does nothing when everything is already there.
# --dev adds what the tests and the Fortran module need (GoogleTest,
# gfortran: make test, make demo and CI ask for it). --mpich adds MPICH (Hydra),
# which installs beside Open MPI (mpicc.mpich, mpiexec.mpich), for a second
# build directory and the cluster runs with `scripts/cluster run --mpi mpich`;
# --fuzz adds clang and its libFuzzer runtime (make test-fuzz); --smpi
# SimGrid (smpicc, smpicxx, smpirun: make smpi); other
# arguments are more Debian packages (scripts/python-env's).
# With --dev where a CUDA toolkit is (nvcc), also NVSHMEM's pip wheel (257
# MB), into .deps/nvshmem of this checkout (pip --target: not into any
# Python), where CMake looks for it (cmake/StfNvshmem.cmake).
set -euo pipefail
cd "$(dirname "$0")/.."

nvshmem_wheel=nvidia-nvshmem-cu13==3.8.0  # CUDA 13 (cmake/StfCuda.cmake finds the toolkit)
nvshmem_dir=.deps/nvshmem
want_nvshmem=0
packages=(cmake make g++ openmpi-bin libopenmpi-dev pkg-config zlib1g-dev)
for a in "$@"; do
  case "$a" in
    --dev)
      packages+=(libgtest-dev gfortran)
      if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then want_nvshmem=1; fi ;;
    --mpich) packages+=(mpich libmpich-dev) ;;
    --fuzz) packages+=(clang libclang-rt-dev) ;;  # libclang-rt-dev: the default clang's libFuzzer
    --smpi) packages+=(libsimgrid-dev) ;;
    *) packages+=("$a") ;;
  esac
done
[ $want_nvshmem = 1 ] && ! python3 -m pip --version >/dev/null 2>&1 && packages+=(python3-pip)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ $want_nvshmem = 1 ] && [ ! -e $nvshmem_dir/nvidia/nvshmem/lib/libnvshmem_host.so.3 ]; then
  echo "install-deps: installing $nvshmem_wheel into $nvshmem_dir"
  rm -rf $nvshmem_dir
  PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --no-deps --target $nvshmem_dir "$nvshmem_wheel"
fi
