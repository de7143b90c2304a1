// Reflection of one embedded SPIR-V module, generated at build time by
// engine/tools/spirv_embed.cpp.
#pragma once

#include <vulkan/vulkan_core.h>

#include <cstddef>
#include <cstdint>

namespace vkcnn::detail {

enum class BindingType : uint32_t { sampledImage, storageImage, storageBuffer, uniformBuffer };

// The descriptor type a reflected binding takes in a set layout.
inline VkDescriptorType descriptorType(BindingType type) {
  switch (type) {
    case BindingType::sampledImage:
      return VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    case BindingType::storageImage:
      return VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
    case BindingType::storageBuffer:
      return VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    case BindingType::uniformBuffer:
      return VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
  }
  return VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
}

// One variant per storage format a kernel may write; arithmetic is float32 in all of them.
// f16bits is f16 writing its destinations' bits through rg32ui views: kernels ask for f16 and
// the DispatchRecorder takes f16bits where every destination has such a view
// (DeviceCapabilities::float16BitStores).
enum class ShaderVariant : uint32_t { f16 = 0, f32 = 1, u8 = 2, f16bits = 3 };
inline constexpr uint32_t kShaderVariantCount = 4;

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
  // Bytes of workgroup (shared) memory with the specialization constants at their defaults.
  uint32_t sharedMemorySize;

  // What its workgroup takes of the device's limits (maxComputeWorkGroupInvocations,
  // maxPerStageDescriptorStorageImages).
  uint32_t invocations() const { return localSize[0] * localSize[1] * localSize[2]; }
  uint32_t storageImages() const {
    uint32_t n = 0;
    for (uint32_t i = 0; i < bindingCount; ++i)
      if (bindings[i].type == BindingType::storageImage)
        n += bindings[i].arraySize ? bindings[i].arraySize : 1;
    return n;
  }
};

}  // namespace vkcnn::detail
