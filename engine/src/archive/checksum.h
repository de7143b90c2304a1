// The .vkcnn format's checksum and source-file hash: XXH64 (seed 0), written here rather than
// linked (libvkcnn links nothing but the C and C++ runtimes), and bit-compatible with the
// published algorithm so that other tools can check a file (docs/model-format.md). Chosen over
// FNV-1a, which the cache files use (vulkan/cache_file.h), for speed: over 100 MiB FNV-1a's
// byte-serial multiply took 324 ms, XXH64's four independent lanes 13 to 16 ms (a busy 2-core
// machine; docs/model-format.md#checksum).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "vkcnn/export.h"

namespace vkcnn::archive {

VKCNN_API uint64_t xxh64(std::span<const uint8_t> bytes, uint64_t seed = 0);

}  // namespace vkcnn::archive
