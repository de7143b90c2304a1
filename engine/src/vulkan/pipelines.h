// Compute pipelines, created lazily and thread-safely on first use, with descriptor-set layouts
// built from each module's SPIR-V reflection.
#pragma once

#include <vulkan/vulkan_core.h>

#include <array>
#include <map>
#include <memory>
#include <span>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "vkcnn_shader_ids.h"
#include "vulkan/shader_module_info.h"

namespace vkcnn::detail {

class ContextImpl;
struct Overrides;

const ShaderModuleInfo& shaderModule(ShaderId id, ShaderVariant variant);
// Where pipelines persist for this device: VKCNN_PIPELINE_CACHE_DIR, else $XDG_CACHE_HOME/vkcnn,
// else ~/.cache/vkcnn; empty when VKCNN_PIPELINE_CACHE=0.
std::string defaultPipelineCacheFile(const VkPhysicalDeviceProperties& properties,
                                     const Overrides& overrides);

struct Pipeline {
  const ShaderModuleInfo* module = nullptr;
  VkDescriptorSetLayout setLayout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
};

// Pipelines are created through a VkPipelineCache that persists on disk between runs, so the second
// start of an application skips shader compilation. The file carries its own header (device,
// driver, cache UUID, size and checksum) and is ignored unless all of it matches.
class PipelineRegistry {
 public:
  // `cacheFile` empty: no persistence.
  PipelineRegistry(ContextImpl& context, std::string cacheFile);
  ~PipelineRegistry();
  // Writes the cache file now (also done at destruction when pipelines were added).
  void save();
  const std::string& cacheFile() const { return cacheFile_; }
  bool loadedFromDisk() const { return loaded_; }
  // `specialization`: the values of the shader's specialization constants 0, 1, ... (int32), one
  // pipeline per distinct list (the matrix-unit convolution's tiles, convolution_tiles.h).
  const Pipeline& get(ShaderId id, ShaderVariant variant,
                      std::span<const int32_t> specialization = {});
  uint32_t pipelinesCreated() const;

 private:
  Pipeline create(ShaderId id, ShaderVariant variant, std::span<const int32_t> specialization);
  // Throws where `module` needs more than the Context's limits (as its device profile clamps
  // them): shared memory, workgroup invocations (both of the default specialization), storage
  // images.
  void checkLimits(const ShaderModuleInfo& module, bool specialized) const;
  void destroy(Pipeline& p);

  std::vector<uint8_t> loadCacheFile() const;

  ContextImpl& context_;
  mutable std::mutex mutex_;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  std::string cacheFile_;
  bool loaded_ = false;
  bool dirty_ = false;
  std::array<std::array<std::unique_ptr<Pipeline>, kShaderVariantCount>, kShaderIdCount> pipelines_;
  std::map<std::tuple<ShaderId, ShaderVariant, std::vector<int32_t>>, std::unique_ptr<Pipeline>>
      specialized_;
};

}  // namespace vkcnn::detail
