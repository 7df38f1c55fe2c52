# PETSc, for the PetscSF plug-in (petsc/) and the comparison benchmarks
# (bench/petsc): found by pkg-config (Debian: petsc-dev), and usable only
# when it was built with the MPI this build uses (petscsys.h refuses
# another MPI's mpi.h, so a test compile tells: an MPICH build beside
# Debian's Open MPI PETSc skips it). Sets STF_PETSC_USABLE and the target
# PkgConfig::PETSC.
function(stf_find_petsc)
  # Looked for again on every configure until found, so that installing
  # PETSc later and reconfiguring finds it.
  set(usable OFF)
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(PETSC QUIET IMPORTED_TARGET GLOBAL PETSc)
  endif()
  if(PETSC_FOUND)
    include(CheckCSourceCompiles)
    set(CMAKE_REQUIRED_LIBRARIES MPI::MPI_C PkgConfig::PETSC)
    set(CMAKE_REQUIRED_QUIET ON)
    check_c_source_compiles("#include <petscsys.h>
int main(void) { return PetscInitializeNoArguments() != 0; }" STF_PETSC_MATCHES_MPI)
    unset(CMAKE_REQUIRED_LIBRARIES)
    if(STF_PETSC_MATCHES_MPI)
      set(usable ON)
    endif()
  endif()
  if(NOT STF_PETSC_REPORTED STREQUAL "${PETSC_FOUND}${usable}")
    if(usable)
      message(STATUS "PETSc ${PETSC_VERSION} found, built with this MPI")
    elseif(PETSC_FOUND)
      message(STATUS "PETSc ${PETSC_VERSION} found but built with another MPI: not used")
    else()
      message(STATUS "PETSc not found (scripts/install-petsc.sh installs it)")
    endif()
    set(STF_PETSC_REPORTED "${PETSC_FOUND}${usable}" CACHE INTERNAL "")
  endif()
  set(STF_PETSC_USABLE ${usable} PARENT_SCOPE)
endfunction()
