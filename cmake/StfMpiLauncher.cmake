# Which MPI launcher MPIEXEC_EXECUTABLE is, for the test harness:
#   STF_MPI_LAUNCHER   openmpi (ORTE's mpiexec), mpich (Hydra) or unknown
#   stf_mpiexec_flags(<var>)  STF_MPIEXEC_FLAGS as a list, without the flags
#                      this launcher rejects (Hydra has no --oversubscribe:
#                      it places any number of ranks on a host anyway)
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

function(stf_mpiexec_flags out)
  separate_arguments(flags UNIX_COMMAND "${STF_MPIEXEC_FLAGS}")
  if(STF_MPI_LAUNCHER STREQUAL "mpich")
    list(REMOVE_ITEM flags --oversubscribe)
  endif()
  set(${out} ${flags} PARENT_SCOPE)
endfunction()
