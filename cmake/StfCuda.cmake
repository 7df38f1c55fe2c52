# The CUDA device backend (src/device/cuda). STF_CUDA: AUTO builds it when
# CMake finds a CUDA compiler and this machine has a GPU (nvidia-smi lists
# one), ON whenever there is a compiler (CI compiles it without a GPU; an
# error without one), OFF never. Compiling needs the toolkit only, no GPU
# (nvcc takes most of a minute on 2 cores). Sets STF_HAVE_CUDA.
set(STF_CUDA AUTO CACHE STRING "Build the CUDA device backend: AUTO, ON or OFF")
set_property(CACHE STF_CUDA PROPERTY STRINGS AUTO ON OFF)
set(STF_HAVE_CUDA OFF)
set(stf_want_cuda ${STF_CUDA})
if(STF_CUDA STREQUAL "AUTO")
  set(stf_gpus "")
  find_program(STF_NVIDIA_SMI nvidia-smi)
  if(STF_NVIDIA_SMI)
    execute_process(COMMAND ${STF_NVIDIA_SMI} -L OUTPUT_VARIABLE stf_gpus ERROR_QUIET TIMEOUT 20)
  endif()
  if(NOT stf_gpus MATCHES "GPU [0-9]")
    set(stf_want_cuda OFF)
    message(STATUS "starforest CUDA backend: not built (no GPU here; -DSTF_CUDA=ON builds it anyway)")
  endif()
endif()
if(NOT stf_want_cuda STREQUAL "OFF")
  # nvcc off PATH: the toolkit's usual home.
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(ENV{CUDACXX} /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # One architecture unless told otherwise: `native` fails without a GPU,
    # and each one more multiplies nvcc's time (PTX is embedded, so newer
    # GPUs JIT-compile it).
    set(CMAKE_CUDA_ARCHITECTURES 80 CACHE STRING "CUDA architectures of the device kernels")
    if(CMAKE_CXX_COMPILER_LAUNCHER AND NOT CMAKE_CUDA_COMPILER_LAUNCHER)
      set(CMAKE_CUDA_COMPILER_LAUNCHER ${CMAKE_CXX_COMPILER_LAUNCHER})
    endif()
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    set(STF_HAVE_CUDA ON)
  elseif(STF_CUDA STREQUAL "ON")
    message(FATAL_ERROR "STF_CUDA=ON but CMake found no CUDA compiler (put nvcc on PATH or set CMAKE_CUDA_COMPILER)")
  endif()
endif()
message(STATUS "starforest CUDA backend: ${STF_HAVE_CUDA}")

# Whether MPI says at run time if it takes device pointers (Open MPI's
# MPIX_Query_cuda_support in mpi-ext.h); without it the backend assumes not.
if(STF_HAVE_CUDA)
  set(CMAKE_REQUIRED_LIBRARIES MPI::MPI_C)
  check_c_source_compiles("#include <mpi.h>
#include <mpi-ext.h>
int main(void) { return MPIX_Query_cuda_support(); }" STF_HAVE_MPIX_QUERY_CUDA_SUPPORT)
  unset(CMAKE_REQUIRED_LIBRARIES)
endif()

# Settings of the device layer's object library when it holds the backend
# (src/device/cuda); the library links CUDA::cudart.
function(stf_cuda_settings target)
  target_link_libraries(${target} PRIVATE CUDA::cudart)
  target_compile_definitions(${target} PRIVATE STF_HAVE_CUDA=1)
  if(STF_HAVE_MPIX_QUERY_CUDA_SUPPORT)
    target_compile_definitions(${target} PRIVATE STF_HAVE_MPIX_QUERY_CUDA_SUPPORT=1)
  endif()
endfunction()
