#!/usr/bin/env bash
# The installed package, used as the README says: install the build into
# <build>/stage, build the guide's examples against it with find_package
# (CMake) and ghost_exchange and grid_halo with pkg-config and a plain C
# compiler, and run them. Where the Fortran module was built, also the
# Fortran README example from a Fortran-only CMake project and with a plain
# gfortran and pkg-config. The MPI is the build's own: CMake's package and
# the .pc files name it. A static build is linked with pkg-config --static.
# usage: check.sh BUILD_DIR MPIEXEC [MPIEXEC_FLAGS...]   (the flags end with the -n flag)
set -euo pipefail
build=$(cd "$1" && pwd)
shift
src=$(cd "$(dirname "$0")/../.." && pwd)
stage=$build/stage out=$build/consumers
rm -rf "$stage" "$out"
mkdir -p "$out/pkg-config"
run() { echo "+ $*"; "$@"; }

run cmake --install "$build" --prefix "$stage" > "$out/install.log"
run cmake -S "$src/docs/guide/examples" -B "$out/cmake" -DCMAKE_PREFIX_PATH="$stage" > "$out/cmake.log"
run cmake --build "$out/cmake" >> "$out/cmake.log"

pc=$(find "$stage" -name starforest.pc)
export PKG_CONFIG_PATH=$(dirname "$pc")
static=
ls "$(dirname "$(dirname "$pc")")"/libstarforest.so* > /dev/null 2>&1 || static=--static
libdir=$(pkg-config --variable=libdir starforest)
echo "pkg-config: $pc ($([ -n "$static" ] && echo static || echo shared)): $(pkg-config $static --cflags --libs starforest_apps)"
for app in ghost_exchange grid_halo; do
  # shellcheck disable=SC2046
  run cc -std=c99 -o "$out/pkg-config/$app" "$src/docs/guide/examples/$app.c" \
    $(pkg-config $static --cflags --libs starforest_apps) -Wl,-rpath,"$libdir"
done

fortran=
if [ -f "$(dirname "$pc")/starforest_fortran.pc" ]; then
  fortran=$src/fortran/examples/readme_example.f90
  run cmake -S "$src/tests/install/fortran" -B "$out/fortran-cmake" -DCMAKE_PREFIX_PATH="$stage" \
    -DSTF_EXAMPLE="$fortran" > "$out/fortran-cmake.log"
  run cmake --build "$out/fortran-cmake" >> "$out/fortran-cmake.log"
  # shellcheck disable=SC2046
  run gfortran -o "$out/pkg-config/readme_example_f" "$fortran" \
    $(pkg-config $static --cflags --libs starforest_fortran) -Wl,-rpath,"$libdir"
fi

run "$@" 3 "$out/cmake/ghost_exchange"
run "$@" 4 "$out/cmake/grid_halo"
run "$@" 3 "$out/pkg-config/ghost_exchange"
run "$@" 4 "$out/pkg-config/grid_halo"
if [ -n "$fortran" ]; then
  run "$@" 2 "$out/fortran-cmake/readme_example"
  run "$@" 2 "$out/pkg-config/readme_example_f"
fi
echo "install check passed: $stage"
