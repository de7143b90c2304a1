# What a Windows cross build (cmake/mingw-w64-x86_64.cmake) needs from the build machine, and what
# its programs need to start. Included by the top CMakeLists.txt before anything is found.
#  - Header-only dependencies (Vulkan's headers, volk, doctest, stb) are the host's Debian packages,
#    linked one by one into a staging folder that the cross build searches: never the host's whole
#    /usr/include, whose C library would shadow MinGW's.
#  - find_package(Vulkan) needs an import library for vulkan-1.dll; dlltool makes one from the core
#    commands (Vulkan 1.0-1.3) that vulkan_core.h declares. vkcnn itself opens the loader at run
#    time and links nothing; the loader is the system's (under Wine, Wine's own vulkan-1.dll).
#  - Programs and DLLs go into bin/ with MinGW's runtime DLLs (libstdc++, libgcc, winpthread), so
#    that they start where they were built: Windows looks for DLLs beside the program. The runtime
#    DLLs are installed beside the CLI too.

set(stage ${CMAKE_BINARY_DIR}/windows-sysroot)
file(MAKE_DIRECTORY ${stage}/include ${stage}/lib)
foreach(header vulkan/vulkan_core.h vk_video/vulkan_video_codecs_common.h volk.h volk.c
               doctest/doctest.h stb/stb_image.h)
  string(MAKE_C_IDENTIFIER ${header} id)
  find_path(VKCNN_HOST_INCLUDE_${id} ${header} PATHS /usr/include NO_DEFAULT_PATH
            NO_CMAKE_FIND_ROOT_PATH)
  if(NOT VKCNN_HOST_INCLUDE_${id})
    message(FATAL_ERROR "${header} not found on the build machine: run scripts/install-deps.sh")
  endif()
  # The folder (vulkan/, stb/) or the file itself (volk.h).
  string(REGEX REPLACE "/.*" "" entry ${header})
  if(NOT EXISTS ${stage}/include/${entry})
    file(CREATE_LINK ${VKCNN_HOST_INCLUDE_${id}}/${entry} ${stage}/include/${entry} SYMBOLIC)
  endif()
endforeach()
list(APPEND CMAKE_FIND_ROOT_PATH ${stage})

# The import library: the core commands are those declared between "#define VK_VERSION_1_x 1" and
# the next feature or extension's "#define VK_... 1".
set(vulkan_core ${VKCNN_HOST_INCLUDE_vulkan_vulkan_core_h}/vulkan/vulkan_core.h)
set(vulkan_def ${stage}/lib/vulkan-1.def)
set(vulkan_import ${stage}/lib/libvulkan-1.dll.a)
if(NOT EXISTS ${vulkan_import} OR ${vulkan_core} IS_NEWER_THAN ${vulkan_import})
  file(STRINGS ${vulkan_core} lines REGEX "^#define VK_[A-Za-z0-9_]+ 1$|VKAPI_CALL vk[A-Za-z0-9]+\\(")
  set(core OFF)
  set(exports "LIBRARY vulkan-1.dll\nEXPORTS\n")
  foreach(line IN LISTS lines)
    if(line MATCHES "^#define VK_VERSION_1_[0-9] 1$")
      set(core ON)
    elseif(line MATCHES "^#define VK_")
      set(core OFF)
    elseif(core AND line MATCHES "VKAPI_CALL (vk[A-Za-z0-9]+)\\(")
      string(APPEND exports "  ${CMAKE_MATCH_1}\n")
    endif()
  endforeach()
  file(WRITE ${vulkan_def} "${exports}")
  find_program(VKCNN_DLLTOOL NAMES ${CMAKE_CXX_COMPILER_TARGET}-dlltool x86_64-w64-mingw32-dlltool
               dlltool)
  if(NOT VKCNN_DLLTOOL)
    message(FATAL_ERROR "dlltool not found: install binutils-mingw-w64-x86-64")
  endif()
  execute_process(COMMAND ${VKCNN_DLLTOOL} -d ${vulkan_def} -l ${vulkan_import} -D vulkan-1.dll
                  RESULT_VARIABLE failed)
  if(failed)
    message(FATAL_ERROR "${VKCNN_DLLTOOL} could not make ${vulkan_import}")
  endif()
endif()
set(Vulkan_INCLUDE_DIR ${stage}/include CACHE PATH "")
set(Vulkan_LIBRARY ${vulkan_import} CACHE FILEPATH "")

# zlib (libz-mingw-w64-dev, for the Fashion-MNIST sample's data) linked in: one DLL fewer to ship.
set(ZLIB_USE_STATIC_LIBS ON)

set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
set(VKCNN_WINDOWS_RUNTIME)
foreach(dll libstdc++-6.dll libgcc_s_seh-1.dll libwinpthread-1.dll)
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${dll}
                  OUTPUT_VARIABLE path OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT IS_ABSOLUTE "${path}" OR NOT EXISTS "${path}")
    message(FATAL_ERROR "${dll} not found beside ${CMAKE_CXX_COMPILER}")
  endif()
  file(COPY ${path} DESTINATION ${CMAKE_RUNTIME_OUTPUT_DIRECTORY})
  list(APPEND VKCNN_WINDOWS_RUNTIME ${path})
endforeach()
install(FILES ${VKCNN_WINDOWS_RUNTIME} DESTINATION ${CMAKE_INSTALL_BINDIR})
