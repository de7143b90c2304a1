/* Symbol visibility of the public API (C and C++). */
#pragma once

#if defined(VKCNN_BUILDING_LIBRARY)
#define VKCNN_API __attribute__((visibility("default")))
#else
#define VKCNN_API
#endif
