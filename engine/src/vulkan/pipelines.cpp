#include "vulkan/pipelines.h"

#include <string>
#include <vector>

#include "vulkan/context_impl.h"

namespace vkcnn::detail {

extern const ShaderModuleInfo kShaderModules[][kShaderVariantCount];

const ShaderModuleInfo& shaderModule(ShaderId id, ShaderVariant variant) {
  return kShaderModules[uint32_t(id)][uint32_t(variant)];
}

namespace {
VkDescriptorType descriptorType(BindingType type) {
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
}  // namespace

PipelineRegistry::PipelineRegistry(ContextImpl& context) : context_(context) {
  VkPipelineCacheCreateInfo info{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  context_.check(context_.vk().vkCreatePipelineCache(context_.device(), &info, nullptr, &cache_),
                 "vkCreatePipelineCache");
  context_.setName(VK_OBJECT_TYPE_PIPELINE_CACHE, cache_, "vkcnn pipeline cache");
}

PipelineRegistry::~PipelineRegistry() {
  const auto& vk = context_.vk();
  VkDevice device = context_.device();
  for (auto& variants : pipelines_)
    for (auto& p : variants)
      if (p) {
        vk.vkDestroyPipeline(device, p->pipeline, nullptr);
        vk.vkDestroyPipelineLayout(device, p->layout, nullptr);
        vk.vkDestroyDescriptorSetLayout(device, p->setLayout, nullptr);
      }
  vk.vkDestroyPipelineCache(device, cache_, nullptr);
}

uint32_t PipelineRegistry::pipelinesCreated() const {
  std::lock_guard lock(mutex_);
  uint32_t n = 0;
  for (auto& variants : pipelines_)
    for (auto& p : variants) n += p != nullptr;
  return n;
}

const Pipeline& PipelineRegistry::get(ShaderId id, ShaderVariant variant) {
  std::lock_guard lock(mutex_);
  auto& slot = pipelines_[uint32_t(id)][uint32_t(variant)];
  if (!slot) slot = std::make_unique<Pipeline>(create(id, variant));
  return *slot;
}

Pipeline PipelineRegistry::create(ShaderId id, ShaderVariant variant) {
  const auto& vk = context_.vk();
  VkDevice device = context_.device();
  const ShaderModuleInfo& module = shaderModule(id, variant);
  Pipeline p;
  p.module = &module;
  // A failing step must not leave the objects of the earlier ones behind.
  struct Partial {
    const VolkDeviceTable& vk;
    VkDevice device;
    Pipeline& p;
    bool done = false;
    ~Partial() {
      if (done) return;
      if (p.layout) vk.vkDestroyPipelineLayout(device, p.layout, nullptr);
      if (p.setLayout) vk.vkDestroyDescriptorSetLayout(device, p.setLayout, nullptr);
    }
  } partial{vk, device, p};

  std::vector<VkDescriptorSetLayoutBinding> bindings;
  for (uint32_t i = 0; i < module.bindingCount; ++i) {
    const ShaderBinding& b = module.bindings[i];
    if (b.set != 0)
      throw Error(ErrorCode::vulkan, std::string(module.name) + ": binding '" + b.name +
                                         "' is in descriptor set " + std::to_string(b.set) +
                                         "; vkcnn shaders use set 0 only");
    VkDescriptorSetLayoutBinding lb{};
    lb.binding = b.binding;
    lb.descriptorType = descriptorType(b.type);
    lb.descriptorCount = b.arraySize;
    lb.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    bindings.push_back(lb);
  }
  VkDescriptorSetLayoutCreateInfo setInfo{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  setInfo.bindingCount = uint32_t(bindings.size());
  setInfo.pBindings = bindings.data();
  context_.check(vk.vkCreateDescriptorSetLayout(device, &setInfo, nullptr, &p.setLayout),
                 "vkCreateDescriptorSetLayout");
  context_.setName(VK_OBJECT_TYPE_DESCRIPTOR_SET_LAYOUT, p.setLayout, module.name);

  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, module.pushConstantSize};
  VkPipelineLayoutCreateInfo layoutInfo{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  layoutInfo.setLayoutCount = 1;
  layoutInfo.pSetLayouts = &p.setLayout;
  layoutInfo.pushConstantRangeCount = module.pushConstantSize ? 1 : 0;
  layoutInfo.pPushConstantRanges = &range;
  context_.check(vk.vkCreatePipelineLayout(device, &layoutInfo, nullptr, &p.layout),
                 "vkCreatePipelineLayout");
  context_.setName(VK_OBJECT_TYPE_PIPELINE_LAYOUT, p.layout, module.name);

  VkShaderModuleCreateInfo moduleInfo{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  moduleInfo.codeSize = module.codeWords * 4;
  moduleInfo.pCode = module.code;
  VkShaderModule shader = VK_NULL_HANDLE;
  context_.check(vk.vkCreateShaderModule(device, &moduleInfo, nullptr, &shader),
                 "vkCreateShaderModule");
  VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = shader;
  info.stage.pName = "main";
  info.layout = p.layout;
  VkResult result = vk.vkCreateComputePipelines(device, cache_, 1, &info, nullptr, &p.pipeline);
  vk.vkDestroyShaderModule(device, shader, nullptr);
  context_.check(result, (std::string("vkCreateComputePipelines ") + module.name).c_str());
  context_.setName(VK_OBJECT_TYPE_PIPELINE, p.pipeline, module.name);
  partial.done = true;
  return p;
}

}  // namespace vkcnn::detail
