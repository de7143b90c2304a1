// vkcnn's version: the one place it is written (CMakeLists.txt's project() version must match;
// the packaging may generate this header from it).
#pragma once

#define VKCNN_VERSION_MAJOR 0
#define VKCNN_VERSION_MINOR 1
#define VKCNN_VERSION_PATCH 0
#define VKCNN_VERSION "0.1.0"
