# pkg-config files of the installed libraries: starforest.pc and
# starforest_apps.pc (cmake/*.pc.in). They carry the MPI this build found
# (its include directories, definitions and libraries), so a plain C
# compiler builds an application with `pkg-config --cflags --libs
# starforest`; with that MPI's compiler wrapper the MPI flags are repeated,
# which does no harm. The prefix is found from the .pc file's own place,
# whatever depth the library directory has (lib, lib64, lib/x86_64-linux-gnu),
# so an installed tree may move.

# "${pcfiledir}/.." once per component of dir (relative to the prefix).
function(stf_pc_prefix dir out)
  string(REGEX MATCHALL "[^/]+" parts "${dir}")
  set(up "\${pcfiledir}")
  foreach(part ${parts})
    string(APPEND up "/..")
  endforeach()
  set(${out} "${up}" PARENT_SCOPE)
endfunction()

# An install directory as the .pc file names it: under ${prefix}, or absolute.
function(stf_pc_dir dir out)
  if(IS_ABSOLUTE "${dir}")
    set(${out} "${dir}" PARENT_SCOPE)
  else()
    set(${out} "\${prefix}/${dir}" PARENT_SCOPE)
  endif()
endfunction()

# A list of libraries (full paths, -l flags or names) as -L/-l flags.
function(stf_pc_libs libs out)
  set(flags "")
  foreach(lib ${libs})
    if(lib MATCHES "^(.*)/lib([^/]+)\\.(so|a|dylib)(\\.[0-9.]*)?$")
      list(APPEND flags "-L${CMAKE_MATCH_1}" "-l${CMAKE_MATCH_2}")
    elseif(lib MATCHES "^-")
      list(APPEND flags "${lib}")
    elseif(lib)
      list(APPEND flags "-l${lib}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES flags)
  string(REPLACE ";" " " flags "${flags}")
  set(${out} "${flags}" PARENT_SCOPE)
endfunction()

if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(STF_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  stf_pc_prefix("${CMAKE_INSTALL_LIBDIR}/pkgconfig" STF_PC_PREFIX)
endif()
stf_pc_dir("${CMAKE_INSTALL_LIBDIR}" STF_PC_LIBDIR)
stf_pc_dir("${CMAKE_INSTALL_INCLUDEDIR}" STF_PC_INCLUDEDIR)

set(STF_PC_MPI_CFLAGS "")
foreach(dir ${MPI_C_INCLUDE_DIRS})
  string(APPEND STF_PC_MPI_CFLAGS " -I${dir}")
endforeach()
foreach(def ${MPI_C_COMPILE_DEFINITIONS})
  string(APPEND STF_PC_MPI_CFLAGS " -D${def}")
endforeach()
foreach(opt ${MPI_C_COMPILE_OPTIONS})
  string(APPEND STF_PC_MPI_CFLAGS " ${opt}")
endforeach()
stf_pc_libs("${MPI_C_LIBRARIES}" STF_PC_MPI_LIBS)
string(STRIP "${MPI_C_LINK_FLAGS} ${STF_PC_MPI_LIBS}" STF_PC_MPI_LIBS)

# What a static library needs besides: the C++ runtime (STF_CXX_RUNTIME),
# threads, the node-aware strategies' registration, and the CUDA runtime in builds with the CUDA backend; zlib for
# the apps.
stf_pc_libs("${STF_CXX_RUNTIME};${CMAKE_THREAD_LIBS_INIT}" STF_PC_PRIVATE)
if(NOT BUILD_SHARED_LIBS)  # keeps the node-aware strategies (CMakeLists.txt)
  string(APPEND STF_PC_PRIVATE " -Wl,--undefined=stf_node_aware_methods")
endif()
if(STF_HAVE_CUDA)
  stf_pc_libs("${CUDA_cudart_LIBRARY}" cudart)
  string(APPEND STF_PC_PRIVATE " ${cudart}")
endif()
set(STF_PC_APPS_PRIVATE "")
if(STF_HAVE_ZLIB)
  stf_pc_libs("${STF_ZLIB_LIBRARIES}" STF_PC_APPS_PRIVATE)
endif()

foreach(pc starforest starforest_apps)
  configure_file(cmake/${pc}.pc.in ${PROJECT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
