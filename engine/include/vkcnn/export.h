/* Symbol visibility of the public API (C and C++). ELF: the library hides everything but what is
 * marked (visibility "default"). Windows: marked symbols are exported from vkcnn.dll and imported
 * by whoever uses it. VKCNN_BUILDING_LIBRARY is defined only while the library itself is built. */
#pragma once

#if defined(_WIN32) || defined(__CYGWIN__)
#if defined(VKCNN_BUILDING_LIBRARY)
#define VKCNN_API __declspec(dllexport)
#else
#define VKCNN_API __declspec(dllimport)
#endif
#elif defined(VKCNN_BUILDING_LIBRARY)
#define VKCNN_API __attribute__((visibility("default")))
#else
#define VKCNN_API
#endif
