# The SPIR-V embedder (engine/tools/spirv_embed.cpp): reflects every compiled shader with Debian's
# SPIRV-Cross C API and writes the tables compiled into libvkcnn. It runs at build time, so it is
# built for the machine that builds: by engine/CMakeLists.txt in a native build, by
# cmake/host-tools (through cmake/VkcnnHostTools.cmake) in a cross build.
#   vkcnn_add_spirv_embed(SOURCE_DIR) defines the executable target vkcnn_spirv_embed.

function(vkcnn_add_spirv_embed source_dir)
  find_path(SPIRV_CROSS_INCLUDE_DIR spirv_cross_c.h PATH_SUFFIXES spirv_cross)
  find_library(SPIRV_CROSS_C_LIBRARY spirv-cross-c-shared)
  if(NOT SPIRV_CROSS_INCLUDE_DIR OR NOT SPIRV_CROSS_C_LIBRARY)
    message(FATAL_ERROR
      "SPIRV-Cross C API not found: install libspirv-cross-c-shared-dev (scripts/install-deps.sh)")
  endif()
  add_executable(vkcnn_spirv_embed ${source_dir}/engine/tools/spirv_embed.cpp)
  target_include_directories(vkcnn_spirv_embed PRIVATE ${source_dir}/engine/src
                                                       ${SPIRV_CROSS_INCLUDE_DIR})
  target_link_libraries(vkcnn_spirv_embed PRIVATE ${SPIRV_CROSS_C_LIBRARY})
  target_compile_features(vkcnn_spirv_embed PRIVATE cxx_std_20)
endfunction()
