// Files vkcnn keeps beside each other in the cache directory (the pipeline cache, the convolution
// tuning file): their checksum, and how they are written so that no reader, in this process or
// another, ever sees half a file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>

#include "platform/platform.h"

namespace vkcnn::detail {

inline uint64_t fnv1a(const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  uint64_t hash = 1469598103934665603ull;
  for (size_t i = 0; i < size; ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
  return hash;
}

// Writes `parts` one after another into a file of its own beside `path`, then renames it over
// `path`. The aside file is named after the process and the thread, so that two Contexts saving
// at once (in two processes, or on two threads of one) never write into the same file. Returns
// an empty string, or why the file was not written.
inline std::string writeFileAside(const std::string& path,
                                  std::initializer_list<std::string_view> parts) {
  std::error_code ec;
  const std::filesystem::path target(path);
  std::filesystem::create_directories(target.parent_path(), ec);
  std::filesystem::path aside = target;
  aside += ".tmp" + std::to_string(platform::processId()) + "-" +
           std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
  {
    std::ofstream out(aside, std::ios::binary | std::ios::trunc);
    for (std::string_view part : parts) out.write(part.data(), std::streamsize(part.size()));
    if (!out) {
      std::filesystem::remove(aside, ec);
      return "cannot write " + aside.string();
    }
  }
  std::filesystem::rename(aside, target, ec);
  if (ec) {
    std::filesystem::remove(aside, ec);
    return ec.message();
  }
  return {};
}

}  // namespace vkcnn::detail
