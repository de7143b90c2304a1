// The .vkcnn format's checksum and source-file hash: XXH64 (seed 0), written here rather than
// linked (libvkcnn links nothing but the C and C++ runtimes), and bit-compatible with the
// published algorithm so that other tools can check a file (docs/model-format.md). Chosen over
// FNV-1a, which the cache files use (vulkan/cache_file.h), for speed: FNV-1a's byte-serial
// multiply runs at about 1 GB/s, a tenth of a cold load's budget for resnet50's 100 MB of
// weights; XXH64's four independent lanes run several times faster.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "vkcnn/export.h"

namespace vkcnn::archive {

VKCNN_API uint64_t xxh64(std::span<const uint8_t> bytes, uint64_t seed = 0);

}  // namespace vkcnn::archive
