# Entry points for users and CI. Everything real lives in CMake; this file
# only installs dependencies, configures, builds and runs.
BUILD ?= build
ASAN_BUILD ?= build-asan
JOBS ?= 2
MPIENV = . scripts/mpienv.sh
# A plain CMake configure builds the library alone; make's builds add the
# tests, the benchmarks and examples, and the CUDA backend wherever nvcc is
# (compiled without a GPU; its logic runs on the emulated device).
NVCC := $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
DEV = -DSTF_BUILD_TESTS=ON -DSTF_BUILD_BENCH=ON $(if $(NVCC),-DSTF_CUDA=ON)

.PHONY: all deps build test test-python test-fortran test-petsc test-cluster test-cluster-mpich test-sanitize test-device-tsan test-mpich test-fuzz smpi test-smpi demo bench-petsc clean

all: build

deps:
	@scripts/install-deps.sh --dev

# Configured every time, so that a library-only build directory gains the tests.
build: deps
	cmake -S . -B $(BUILD) $(DEV) > /dev/null
	cmake --build $(BUILD) -j $(JOBS)

# Every test on this host: unit tests and the MPI oracle suite on 1..8 ranks.
test: build
	$(MPIENV); ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) -LE cluster

# The PetscSF plug-in (petsc/): installs Debian's PETSc and its examples
# when missing (scripts/install-petsc.sh), builds the plug-in and its tests
# in the build tree, runs them (label petsc), then PETSc's own star-forest,
# VecScatter and tutorial tests with PETSc's type and through the plug-in
# (petsc/tests/petsc-suite: counts, skips and their reasons).
PETSC_VARIANTS ?= petsc,starforest:basic,starforest:neighbor,starforest:putsignal,starforest:3step,starforest:auto
test-petsc: deps
	scripts/install-petsc.sh --examples
	cmake -S . -B $(BUILD) $(DEV) -DSTF_PETSC=ON > /dev/null
	cmake --build $(BUILD) -j $(JOBS) --target starforest_petsc petsc_test_plugin petsc_test_dll
	$(MPIENV); ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) -L petsc
	$(MPIENV); petsc/tests/petsc-suite --build $(BUILD)/petsc-suite --plugin $(BUILD)/petsc/libstarforest_petsc.so \
	  --variant $(PETSC_VARIANTS)

# The suite across hosts (label cluster): a cluster of network namespaces
# that the tests bring up and take down (scripts/cluster; needs root, else
# the tests report themselves skipped).
test-cluster: build
	$(MPIENV); ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) -L cluster

# The same with the MPICH build of make test-mpich (run that first).
test-cluster-mpich:
	cmake --build $(MPICH_BUILD) -j $(JOBS)
	ctest --test-dir $(MPICH_BUILD) --output-on-failure -j $(JOBS) -L cluster

# The Python package (python/): built by pip into the build tree's virtual
# environment ($(BUILD)/pyenv, made by scripts/python-env), then its pytest
# suite under mpiexec on 1, 2 and 4 ranks and the examples (scripts/test-python).
test-python: deps
	STF_BUILD=$(BUILD) scripts/test-python

# The Fortran module's tests (also part of `make test`), with the module
# required, so that a machine without gfortran fails here instead of skipping.
test-fortran: deps
	cmake -S . -B $(BUILD) $(DEV) -DSTF_FORTRAN=ON
	cmake --build $(BUILD) -j $(JOBS) --target fortran_test_fortran fortran_readme_example
	$(MPIENV); ctest --test-dir $(BUILD) --output-on-failure -L fortran

# The MPI suite under AddressSanitizer + UndefinedBehaviorSanitizer: 1 and 2
# ranks, and 4 where a test runs on no fewer (the node-aware strategies,
# putsignal across nodes); not the real matrices' tests (slow under ASan;
# their reader is fuzzed), nor the 2.1 GiB messages of the window's lock and
# pscw synchronisation (fence's moves the same data the same way) and of
# 2step (basic's messages), as under MPICH. Without the PETSc plug-in: PETSc is not built with ASan.
# NP4_TWICE: the 4-rank runs of tests that also run on 1 or 2 ranks, whose
# paths those cover; left out where time counts (here and under MPICH).
NP4_TWICE = ^(ops|ops_nopt|ops_neighbor|ops_collective|ops_putsignal|device|device_model[AC]|device_staged|device_ipc|threads|pack_opt|many_sfs)_np4$$
test-sanitize: deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DSTF_SANITIZE=ON -DSTF_BUILD_TESTS=ON -DSTF_PETSC=OFF
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	$(MPIENV); export ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1; \
	  ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS) -R '_np(1|2|4)$$' \
	    -E '^csr(_device)?_np(1|2|4)$$|^bigmsg_(window_lock|window_pscw|2step)_np2$$|$(NP4_TWICE)'

# The emulated device's tests (ipc's too) and the two-thread test under ThreadSanitizer
# (part of .ci/run): only the targets they need. Expect no report (but those
# inside Open MPI that tests/tsan.supp names). Built
# without zlib (as if it were missing), so the Matrix Market reader's
# plain-file path and its refusal of gzip files are tested too.
TSAN_BUILD ?= build-tsan
test-device-tsan: deps
	cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DSTF_BUILD_TESTS=ON -DCMAKE_DISABLE_FIND_PACKAGE_ZLIB=ON \
	  -DCMAKE_CXX_FLAGS="-fsanitize=thread -O1" -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread \
	  -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target test_device test_ipc stf_unit test_threads
	$(MPIENV); export TSAN_OPTIONS="halt_on_error=1 history_size=7 suppressions=$(CURDIR)/tests/tsan.supp"; \
	  ctest --test-dir $(TSAN_BUILD) --output-on-failure \
	    -R '^(unit|device|device_modelC|device_staged|device_putsignal|device_ipc|ipc|threads)_np(1|2)$$'

# The whole suite again, built with Debian's MPICH 4.0 beside Open MPI
# (installed when missing): its own build directory, mpicc.mpich and
# mpiexec.mpich. This build is also the other packaging case: static
# libraries and a multiarch library directory (lib/<triplet>), which the
# installed-package test checks. Every test runs, at every rank count but
# NP4_TWICE's and the real matrices' 4 ranks, and 3 ranks only where it is
# a test's sole count (label np3_beside_others); the 2.1 GiB messages (label
# bigmem) too, but for the window transport's lock and pscw synchronisation
# (fence's run moves the same data the same way), 2step (basic's messages)
# and putsignal (our own chunking, the same under any MPI):
# under 5 minutes on 2 cores, as the test runs preload a wrapper that lets
# MPICH's waits yield the core (tests/mpich/ucx_yield.c; without it 3 or 4
# ranks took minutes per test). The Fortran module and its tests too, on
# MPICH's mpi_f08 (configured as the README says: the C wrapper named, CMake
# picks mpif90.mpich), and the Python package's tests and examples
# (scripts/test-python --mpich), the bindings linked with this build's
# static library (make test-python compiles the library into them). The
# cluster's tests are make test-cluster-mpich.
MPICH_BUILD ?= build-mpich
test-mpich:
	@scripts/install-deps.sh --mpich
	cmake -S . -B $(MPICH_BUILD) -DCMAKE_BUILD_TYPE=Release -DSTF_BUILD_TESTS=ON -DSTF_CUDA=OFF \
	  -DMPI_C_COMPILER=mpicc.mpich -DMPI_CXX_COMPILER=mpicxx.mpich -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.mpich \
	  -DSTF_MPIEXEC_FLAGS= -DBUILD_SHARED_LIBS=OFF -DCMAKE_INSTALL_LIBDIR=lib/$$(gcc -print-multiarch) \
	  -DSTF_FORTRAN=ON
	cmake --build $(MPICH_BUILD) -j $(JOBS)
	ctest --test-dir $(MPICH_BUILD) --output-on-failure -j $(JOBS) -LE 'cluster|np3_beside_others' \
	  -E '^bigmsg_(window_lock|window_pscw|2step|putsignal)_np2$$|^csr(_device)?_np4$$|$(NP4_TWICE)'
	STF_BUILD=$(MPICH_BUILD) STF_PYTHON_LIBRARY=$(CURDIR)/$(MPICH_BUILD) scripts/test-python --mpich

# The libFuzzer harnesses (tests/fuzz): clang (installed when missing;
# NVSHMEM is not needed) builds the libraries with ASan, UBSan and coverage
# feedback (CUDA and Fortran off), then each harness runs FUZZ_SECONDS on a
# copy of its seed corpus (scripts/fuzz); any finding fails, its input kept
# in $(FUZZ_BUILD)/fuzz/<harness>/.
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 40
test-fuzz:
	@scripts/install-deps.sh --fuzz
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
	  -DSTF_FUZZ=ON -DSTF_CUDA=OFF -DSTF_FORTRAN=OFF \
	  -DBUILD_SHARED_LIBS=OFF
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_mm fuzz_options fuzz_graph
	$(MPIENV); scripts/fuzz $(FUZZ_BUILD) $(FUZZ_SECONDS)

# SimGrid's SMPI (docs/design/simulation.md): the library (static: each
# simulated rank has its own copy of its globals), the programs that run
# on simulated platforms, and the plug-in scripts/smpirun loads, in
# $(SMPI_BUILD); test-smpi runs the tests of label smpi (part of .ci/run).
# Other benchmarks on request: SMPI_TARGETS replaces the list (make smpi
# SMPI_TARGETS="autoselect calibrate stf_locality_factors").
SMPI_BUILD ?= build-smpi
SMPI_TARGETS ?= test_ops nodeaware smpi_netcheck smpi_refusals stf_locality_factors
smpi:
	@scripts/install-deps.sh --smpi
	cmake -S . -B $(SMPI_BUILD) -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=smpicc -DCMAKE_CXX_COMPILER=smpicxx \
	  -DMPI_C_COMPILER=smpicc -DMPI_CXX_COMPILER=smpicxx -DBUILD_SHARED_LIBS=OFF -DSTF_BUILD_TESTS=ON \
	  -DSTF_BUILD_BENCH=ON -DSTF_CUDA=OFF -DSTF_FORTRAN=OFF -DSTF_PETSC=OFF > /dev/null
	cmake --build $(SMPI_BUILD) -j $(JOBS) --target $(SMPI_TARGETS)

test-smpi: smpi
	ctest --test-dir $(SMPI_BUILD) --output-on-failure -j $(JOBS) -L smpi

# A tour on 4 ranks (under 3 minutes): the README example, the halo exchange
# demo, then short runs of sf_pingpong, sf_dmda, matmult on one real matrix,
# halo3d, petsc_compare and PETSc tutorials on the PETSc plug-in, each
# against its baseline (scripts/demo); installs Debian's PETSc and its
# examples (the tutorials' sources) when missing.
demo: deps
	scripts/install-petsc.sh --examples
	$(MAKE) build
	STF_BUILD=$(BUILD) scripts/demo

# starforest side by side with PETSc (PetscSF, DMDA, VecScatter, MatMult):
# installs Debian's petsc-dev when missing, reconfigures so that CMake finds
# it (STF_BENCH_PETSC=AUTO), then runs bench/petsc on 2 and 4 ranks.
bench-petsc: deps
	scripts/install-petsc.sh
	cmake -S . -B $(BUILD) $(DEV) -DSTF_BENCH_PETSC=AUTO
	cmake --build $(BUILD) -j $(JOBS) --target petsc_compare
	$(MPIENV); cmake --build $(BUILD) --target bench-petsc

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(MPICH_BUILD) $(FUZZ_BUILD) $(SMPI_BUILD)
