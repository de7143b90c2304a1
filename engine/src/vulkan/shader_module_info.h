// Reflection of one embedded SPIR-V module, generated at build time by
// engine/tools/spirv_embed.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

namespace vkcnn::detail {

enum class BindingType : uint32_t { sampledImage, storageImage, storageBuffer, uniformBuffer };

// One variant per storage format a kernel may write; arithmetic is float32 in all of them.
enum class ShaderVariant : uint32_t { f16 = 0, f32 = 1, u8 = 2 };
inline constexpr uint32_t kShaderVariantCount = 3;

struct ShaderBinding {
  uint32_t set;
  uint32_t binding;
  BindingType type;
  uint32_t imageFormat;  // VkFormat of a storage image, 0 when none is declared
  uint32_t dimension;    // SpvDim: 1 is 2D
  bool arrayed;
  uint32_t arraySize;
  const char* name;
};

struct ShaderModuleInfo {
  const char* name;  // "<family>_<variant>"
  const uint32_t* code;
  size_t codeWords;
  const ShaderBinding* bindings;
  uint32_t bindingCount;
  uint32_t pushConstantSize;
  uint32_t localSize[3];
};

}  // namespace vkcnn::detail
