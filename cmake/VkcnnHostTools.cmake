# In a cross build, the tools that run during the build (the SPIR-V embedder) are built for the
# host by a sub-build of cmake/host-tools, with the host's C++ compiler and no toolchain file, and
# stand here as the imported executable vkcnn_spirv_embed. glslangValidator is the host's already
# (CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER). A tool built elsewhere can be given instead:
#   -DVKCNN_HOST_SPIRV_EMBED=/path/to/vkcnn_spirv_embed

include(ExternalProject)

set(VKCNN_HOST_SPIRV_EMBED "" CACHE FILEPATH
  "A host build of vkcnn_spirv_embed for a cross build (empty: built by cmake/host-tools)")
if(VKCNN_HOST_SPIRV_EMBED)
  add_executable(vkcnn_spirv_embed IMPORTED GLOBAL)
  set_target_properties(vkcnn_spirv_embed PROPERTIES IMPORTED_LOCATION ${VKCNN_HOST_SPIRV_EMBED})
  return()
endif()

find_program(VKCNN_HOST_CXX NAMES c++ g++ clang++ NO_CMAKE_FIND_ROOT_PATH)
if(NOT VKCNN_HOST_CXX)
  message(FATAL_ERROR "a cross build needs a C++ compiler for the build machine (install g++)")
endif()
set(host_args -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${VKCNN_HOST_CXX})
if(CMAKE_CXX_COMPILER_LAUNCHER)
  list(APPEND host_args -DCMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER})
endif()
set(host_dir ${CMAKE_BINARY_DIR}/host-tools)
set(host_embed ${host_dir}/vkcnn_spirv_embed)
ExternalProject_Add(vkcnn_host_tools
  SOURCE_DIR ${PROJECT_SOURCE_DIR}/cmake/host-tools
  BINARY_DIR ${host_dir}
  CMAKE_ARGS ${host_args}
  BUILD_BYPRODUCTS ${host_embed}
  INSTALL_COMMAND ""
  # Rebuilt when the tool's source changes (the sub-build tracks its own dependencies).
  BUILD_ALWAYS ON)
add_executable(vkcnn_spirv_embed IMPORTED GLOBAL)
set_target_properties(vkcnn_spirv_embed PROPERTIES IMPORTED_LOCATION ${host_embed})
# (An imported target takes no dependencies: vkcnn_embed_shaders orders vkcnn_host_tools first.)
