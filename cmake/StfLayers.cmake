# The library's layers (docs/ARCHITECTURE.md): each folder of src/ is one
# object library whose include path holds only itself and the layers it may
# use, so that including a higher layer's header fails to compile. The
# include path of layer L is a folder of links made here:
# ${PROJECT_BINARY_DIR}/layers/L/{L, each lower layer it uses} -> src/...
set(STF_LAYERS core model kernels device graph plan transport ops sf nodeaware algebra)
set(STF_LAYER_core_USES "")
set(STF_LAYER_model_USES core)
set(STF_LAYER_kernels_USES core)
set(STF_LAYER_device_USES core kernels)
set(STF_LAYER_graph_USES core)
set(STF_LAYER_plan_USES core kernels graph)
set(STF_LAYER_transport_USES core kernels device graph plan)
set(STF_LAYER_ops_USES core kernels device graph plan transport)
set(STF_LAYER_sf_USES core model kernels device graph plan transport ops)
set(STF_LAYER_nodeaware_USES core model kernels device graph plan transport ops sf)
set(STF_LAYER_algebra_USES core model kernels device graph plan transport ops sf)
# Subfolders whose sources belong to their layer's library (a folder per
# part too large for one file); other subfolders hold optional backends,
# added by hand (CMakeLists.txt, StfNvshmem.cmake).
set(STF_LAYER_transport_FOLDERS putsignal)
# A header of each layer, for the checks below.
set(STF_LAYER_core_HEADER core/error.h)
set(STF_LAYER_model_HEADER model/model.h)
set(STF_LAYER_kernels_HEADER kernels/kernels.h)
set(STF_LAYER_device_HEADER device/device.h)
set(STF_LAYER_graph_HEADER graph/graph.h)
set(STF_LAYER_plan_HEADER plan/plan.h)
set(STF_LAYER_transport_HEADER transport/transport.h)
set(STF_LAYER_ops_HEADER ops/request.h)
set(STF_LAYER_sf_HEADER sf/sf.h)
set(STF_LAYER_nodeaware_HEADER nodeaware/steps.h)
set(STF_LAYER_algebra_HEADER algebra/algebra.h)
# The ops layer's files that hold no device code (the layering tests check it).
set(STF_OPS_HOST_SOURCES exchange host_space fetch operation request_pool deferred_sends)

function(stf_layer_include_dir layer out)
  set(dir ${PROJECT_BINARY_DIR}/layers/${layer})
  file(MAKE_DIRECTORY ${dir})
  foreach(seen ${layer} ${STF_LAYER_${layer}_USES})
    if(NOT EXISTS ${dir}/${seen})
      file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${seen} ${dir}/${seen} SYMBOLIC)
    endif()
  endforeach()
  set(${out} ${dir} PARENT_SCOPE)
endfunction()

# Object library stf_<layer> from src/<layer>/*.cpp and its folders' *.cpp;
# extra sources (CUDA) may follow.
function(stf_add_layer layer)
  set(globs ${PROJECT_SOURCE_DIR}/src/${layer}/*.cpp)
  foreach(folder ${STF_LAYER_${layer}_FOLDERS})
    list(APPEND globs ${PROJECT_SOURCE_DIR}/src/${layer}/${folder}/*.cpp)
  endforeach()
  file(GLOB sources CONFIGURE_DEPENDS ${globs})
  add_library(stf_${layer} OBJECT ${sources} ${ARGN})
  stf_layer_include_dir(${layer} dir)
  target_include_directories(stf_${layer} PRIVATE ${dir} ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(stf_${layer} PUBLIC MPI::MPI_C)
  target_compile_definitions(stf_${layer} PUBLIC OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)
  if(NOT STF_TIMINGS)
    target_compile_definitions(stf_${layer} PRIVATE STF_NO_TIMINGS=1)
  endif()
  target_compile_options(stf_${layer} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:-Wall;-Wextra>"
                                              "$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>")
  if(STF_NO_INTERPOSITION)  # CMakeLists.txt says why
    target_compile_options(stf_${layer} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:-fno-semantic-interposition>")
  endif()
  if(STF_ALIGN_BRANCHES)  # CMakeLists.txt says why
    target_compile_options(stf_${layer} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:-Wa,-mbranches-within-32B-boundaries>")
  endif()
endfunction()

# CTest: each layer sees the layers it uses, and an include of any other
# (higher) layer fails with "No such file". Compiles one include per pair.
function(stf_add_layering_tests)
  get_target_property(mpi_includes MPI::MPI_CXX INTERFACE_INCLUDE_DIRECTORIES)
  set(flags -std=c++17 -fsyntax-only -DOMPI_SKIP_MPICXX=1 -DMPICH_SKIP_MPICXX=1 -I${PROJECT_SOURCE_DIR}/include)
  foreach(inc ${mpi_includes})
    list(APPEND flags -I${inc})
  endforeach()
  set(probes ${PROJECT_BINARY_DIR}/layering)
  file(MAKE_DIRECTORY ${probes})
  foreach(layer ${STF_LAYERS})
    stf_layer_include_dir(${layer} dir)
    foreach(other ${STF_LAYERS})
      set(probe ${probes}/${layer}_includes_${other}.cpp)
      file(WRITE ${probe} "#include \"${STF_LAYER_${other}_HEADER}\"\n")
      set(name layering_${layer}_includes_${other})
      add_test(NAME ${name} COMMAND ${CMAKE_CXX_COMPILER} ${flags} -I${dir} ${probe})
      list(FIND STF_LAYER_${layer}_USES ${other} allowed)
      if(allowed EQUAL -1 AND NOT other STREQUAL layer)
        set_tests_properties(${name} PROPERTIES PASS_REGULAR_EXPRESSION "${STF_LAYER_${other}_HEADER}: No such file")
      endif()
    endforeach()
  endforeach()
  # The ops layer's host code compiles with the device layer off its include
  # path: only the device side of the memory seam (device_space.cpp,
  # memory.cpp, engine.cpp) includes a device header.
  set(host_dir ${PROJECT_BINARY_DIR}/layers/ops_host)
  file(MAKE_DIRECTORY ${host_dir})
  foreach(seen ops core kernels graph plan transport)
    if(NOT EXISTS ${host_dir}/${seen})
      file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${seen} ${host_dir}/${seen} SYMBOLIC)
    endif()
  endforeach()
  foreach(source ${STF_OPS_HOST_SOURCES})
    add_test(NAME layering_ops_host_${source} COMMAND ${CMAKE_CXX_COMPILER} ${flags} -I${host_dir}
             ${PROJECT_SOURCE_DIR}/src/ops/${source}.cpp)
  endforeach()
endfunction()
