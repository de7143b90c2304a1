// Compute pipelines, created lazily and thread-safely on first use, with descriptor-set layouts
// built from each module's SPIR-V reflection.
#pragma once

#include <vulkan/vulkan_core.h>

#include <array>
#include <memory>
#include <mutex>

#include "vkcnn_shader_ids.h"
#include "vulkan/shader_module_info.h"

namespace vkcnn::detail {

class ContextImpl;

const ShaderModuleInfo& shaderModule(ShaderId id, ShaderVariant variant);

struct Pipeline {
  const ShaderModuleInfo* module = nullptr;
  VkDescriptorSetLayout setLayout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
};

class PipelineRegistry {
 public:
  explicit PipelineRegistry(ContextImpl& context);
  ~PipelineRegistry();
  const Pipeline& get(ShaderId id, ShaderVariant variant);
  uint32_t pipelinesCreated() const;

 private:
  Pipeline create(ShaderId id, ShaderVariant variant);

  ContextImpl& context_;
  mutable std::mutex mutex_;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  std::array<std::array<std::unique_ptr<Pipeline>, kShaderVariantCount>, kShaderIdCount> pipelines_;
};

}  // namespace vkcnn::detail
