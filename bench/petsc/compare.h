// petsc_compare: the same communication patterns through starforest and
// through PETSc's own objects (PetscSF, DMDA, VecScatter, MatMult), in one
// run, so that the tables show starforest / PETSc ratios. Optional: built
// only where pkg-config finds PETSc (bench/CMakeLists.txt).
#pragma once

#include <petscdmda.h>
#include <petscmat.h>
#include <petscsf.h>
#include <petscvec.h>

#include <string>
#include <vector>

#include "bench_common.h"

// Every PETSc call is checked: a benchmark of a failing call reports nonsense.
#define CHECK_PETSC(call) PetscCallAbort(PETSC_COMM_WORLD, call)

struct CompareOptions {
  long max_size = 1L << 20;  // pingpong: largest message in bytes
  double iters_scale = 1.0;  // pingpong: osu-style counts times this
  int n2d = 1024;            // dmda: global points per direction
  int iters = 200, rounds = 7;
  std::string dir;                    // matrix directory
  std::vector<std::string> matrices;  // scatter: names or paths
};

// Each prints a table on rank 0 and adds its records to log.
void compare_pingpong(const CompareOptions &o, bench::JsonLog &log);
void compare_dmda(const CompareOptions &o, bench::JsonLog &log);
void compare_scatter(const CompareOptions &o, bench::JsonLog &log);
