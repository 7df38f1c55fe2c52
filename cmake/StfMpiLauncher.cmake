# Which MPI launcher MPIEXEC_EXECUTABLE is, for the test harness:
#   STF_MPI_LAUNCHER   openmpi (ORTE's mpiexec), mpich (Hydra) or unknown
#   stf_mpiexec_flags(<var>)  the test runs' launcher flags: STF_MPIEXEC_FLAGS
#                      as a list, without the flags this launcher rejects
#                      (Hydra has no --oversubscribe: it places any number
#                      of ranks on a host anyway), and with MPICH the
#                      preload of stf_mpich_preload
if(NOT DEFINED STF_MPI_LAUNCHER_OF OR NOT STF_MPI_LAUNCHER_OF STREQUAL "${MPIEXEC_EXECUTABLE}")
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _stf_out ERROR_VARIABLE _stf_out
                  TIMEOUT 30)
  if(_stf_out MATCHES "HYDRA")
    set(_stf_launcher mpich)
  elseif(_stf_out MATCHES "Open MPI|OpenRTE")
    set(_stf_launcher openmpi)
  else()
    set(_stf_launcher unknown)
  endif()
  set(STF_MPI_LAUNCHER ${_stf_launcher} CACHE INTERNAL "MPI launcher kind of MPIEXEC_EXECUTABLE")
  set(STF_MPI_LAUNCHER_OF "${MPIEXEC_EXECUTABLE}" CACHE INTERNAL "MPIEXEC_EXECUTABLE that STF_MPI_LAUNCHER describes")
  message(STATUS "MPI launcher: ${STF_MPI_LAUNCHER} (${MPIEXEC_EXECUTABLE})")
endif()

# MPICH's test runs preload two workarounds for Debian's MPICH 4.0.2 over
# UCX: waits that yield the core (tests/mpich/ucx_yield.c: they never do,
# and tests with more ranks than cores crawl) and a finalize that cannot
# hang after TCP traffic (tests/mpich/ucx_finalize.c). Not in sanitizer
# builds, whose runtime must be the first library loaded.
if(STF_MPI_LAUNCHER STREQUAL "mpich" AND NOT STF_SANITIZE AND NOT TARGET stf_mpich_preload)
  add_library(stf_mpich_preload SHARED ${PROJECT_SOURCE_DIR}/tests/mpich/ucx_yield.c
                                       ${PROJECT_SOURCE_DIR}/tests/mpich/ucx_finalize.c)
  target_link_libraries(stf_mpich_preload PRIVATE ${CMAKE_DL_LIBS})
  set_target_properties(stf_mpich_preload PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON
                                                     C_VISIBILITY_PRESET default)
endif()

function(stf_mpiexec_flags out)
  separate_arguments(flags UNIX_COMMAND "${STF_MPIEXEC_FLAGS}")
  if(STF_MPI_LAUNCHER STREQUAL "mpich")
    list(REMOVE_ITEM flags --oversubscribe)
  endif()
  if(TARGET stf_mpich_preload)
    list(APPEND flags -genv LD_PRELOAD $<TARGET_FILE:stf_mpich_preload>)
  endif()
  set(${out} ${flags} PARENT_SCOPE)
endfunction()
