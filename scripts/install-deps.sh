#!/usr/bin/env bash
# Install what starforest needs to build and test, on Debian/Ubuntu.
# Does nothing when everything is already there. --mpich adds MPICH (Hydra),
# which installs beside Open MPI (mpicc.mpich, mpiexec.mpich), for a second
# build directory and the cluster runs with `scripts/cluster run --mpi mpich`;
# --fuzz adds clang and its libFuzzer runtime (make test-fuzz); other
# arguments are more Debian packages (scripts/python-env's).
# Where a CUDA toolkit is (nvcc), also NVSHMEM's pip wheel, into .deps/nvshmem
# of this checkout (pip --target: not into any Python), where CMake looks
# for it (cmake/StfNvshmem.cmake); STF_NO_NVSHMEM=1 skips it.
set -euo pipefail
cd "$(dirname "$0")/.."

nvshmem_wheel=nvidia-nvshmem-cu13==3.8.0  # CUDA 13 (cmake/StfCuda.cmake finds the toolkit)
nvshmem_dir=.deps/nvshmem
want_nvshmem=0
if [ "${STF_NO_NVSHMEM:-0}" != 1 ] && { command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; }; then
  want_nvshmem=1
fi

packages=(cmake make g++ gfortran openmpi-bin libopenmpi-dev libgtest-dev pkg-config zlib1g-dev)
for a in "$@"; do
  case "$a" in
    --mpich) packages+=(mpich libmpich-dev) ;;
    --fuzz) packages+=(clang libclang-rt-dev) ;;  # libclang-rt-dev: the default clang's libFuzzer
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
