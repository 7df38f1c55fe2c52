# The NVSHMEM plug-in of the nvshmem transport (src/transport/nvshmem):
# libstarforest_nvshmem.so, beside libstarforest, which loads it (dlopen)
# when an SF chooses -stf_type nvshmem; libstarforest itself never links
# NVSHMEM (src/transport/nvshmem.cpp says why). STF_NVSHMEM: AUTO builds it
# where the CUDA backend is built and NVSHMEM is found, ON requires both, OFF
# never. NVSHMEM is looked for in NVSHMEM_HOME (CMake or environment
# variable), then .deps/nvshmem (where scripts/install-deps.sh puts the pip
# wheel nvidia-nvshmem-cu13), then python3's nvidia.nvshmem package, then
# the usual places. Host API only: no device code, no -rdc, and NVSHMEM's
# device library is not linked. Compiling needs no GPU. Sets STF_HAVE_NVSHMEM.
set(STF_NVSHMEM AUTO CACHE STRING "Build the NVSHMEM transport plug-in: AUTO, ON or OFF")
set_property(CACHE STF_NVSHMEM PROPERTY STRINGS AUTO ON OFF)
set(STF_HAVE_NVSHMEM OFF)
if(NOT STF_NVSHMEM STREQUAL "OFF" AND STF_HAVE_CUDA)
  set(hints ${NVSHMEM_HOME} $ENV{NVSHMEM_HOME} ${PROJECT_SOURCE_DIR}/.deps/nvshmem/nvidia/nvshmem)
  find_program(STF_PYTHON3 python3)
  if(STF_PYTHON3)
    execute_process(COMMAND ${STF_PYTHON3} -c "import nvidia.nvshmem, os; print(os.path.dirname(nvidia.nvshmem.__file__))"
      OUTPUT_VARIABLE pip_home OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    list(APPEND hints ${pip_home})
  endif()
  find_path(STF_NVSHMEM_INCLUDE_DIR nvshmemx.h HINTS ${hints} PATH_SUFFIXES include include/nvshmem)
  # The wheel has only the versioned file (no libnvshmem_host.so link).
  find_library(STF_NVSHMEM_HOST_LIBRARY NAMES nvshmem_host libnvshmem_host.so.3 HINTS ${hints}
    PATH_SUFFIXES lib lib64)
endif()
if(STF_NVSHMEM_INCLUDE_DIR AND STF_NVSHMEM_HOST_LIBRARY AND STF_HAVE_CUDA AND NOT STF_NVSHMEM STREQUAL "OFF")
  set(STF_HAVE_NVSHMEM ON)
elseif(STF_NVSHMEM STREQUAL "ON")
  message(FATAL_ERROR "STF_NVSHMEM=ON needs the CUDA backend and NVSHMEM (set NVSHMEM_HOME, or run "
                      "scripts/install-deps.sh); found headers '${STF_NVSHMEM_INCLUDE_DIR}', library "
                      "'${STF_NVSHMEM_HOST_LIBRARY}', CUDA ${STF_HAVE_CUDA}")
endif()
message(STATUS "starforest NVSHMEM plug-in: ${STF_HAVE_NVSHMEM} ${STF_NVSHMEM_HOST_LIBRARY}")

# After the starforest target: its transport layer loads the plug-in.
function(stf_add_nvshmem_plugin)
  if(NOT STF_HAVE_NVSHMEM)
    return()
  endif()
  target_compile_definitions(stf_transport PRIVATE STF_HAVE_NVSHMEM=1)
  target_link_libraries(starforest PRIVATE ${CMAKE_DL_LIBS})
  add_library(stf_nvshmem_host SHARED IMPORTED)
  set_target_properties(stf_nvshmem_host PROPERTIES IMPORTED_LOCATION ${STF_NVSHMEM_HOST_LIBRARY}
    IMPORTED_SONAME libnvshmem_host.so.3 INTERFACE_INCLUDE_DIRECTORIES ${STF_NVSHMEM_INCLUDE_DIR})
  add_library(starforest_nvshmem MODULE ${PROJECT_SOURCE_DIR}/src/transport/nvshmem/nvshmem_putsignal.cu
    ${PROJECT_SOURCE_DIR}/src/transport/nvshmem/runtime.cu)
  stf_layer_include_dir(transport dir)
  target_include_directories(starforest_nvshmem PRIVATE ${dir} ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(starforest_nvshmem PRIVATE stf_nvshmem_host CUDA::cudart MPI::MPI_C)
  target_compile_definitions(starforest_nvshmem PRIVATE OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)
  target_compile_options(starforest_nvshmem PRIVATE -Xcompiler=-Wall,-Wextra)
  # Self-contained: nothing of libstarforest (plugin.h), so static builds load it too.
  # Linked by the C++ compiler, which takes the sanitizer builds' link flags (nvcc does not).
  target_link_options(starforest_nvshmem PRIVATE -Wl,--no-undefined)
  set_target_properties(starforest_nvshmem PROPERTIES LINKER_LANGUAGE CXX)
  get_filename_component(nvshmem_lib_dir ${STF_NVSHMEM_HOST_LIBRARY} DIRECTORY)
  set_target_properties(starforest_nvshmem PROPERTIES
    INSTALL_RPATH "${nvshmem_lib_dir};${CUDAToolkit_LIBRARY_DIR}")
  add_dependencies(starforest starforest_nvshmem)  # built with the library, found beside it
  install(TARGETS starforest_nvshmem LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  if(STF_BUILD_BENCH)  # the transport's steps and the bare protocol, timed (a GPU benchmark)
    add_executable(nvshmem_steps ${PROJECT_SOURCE_DIR}/bench/nvshmem_steps.cu)
    target_link_libraries(nvshmem_steps PRIVATE stf_nvshmem_host CUDA::cudart MPI::MPI_C)
    target_compile_definitions(nvshmem_steps PRIVATE OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)
    set_target_properties(nvshmem_steps PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench
      LINKER_LANGUAGE CXX BUILD_RPATH "${nvshmem_lib_dir}")
  endif()
endfunction()
