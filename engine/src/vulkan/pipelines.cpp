#include "vulkan/pipelines.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "platform/platform.h"
#include "vulkan/context_impl.h"
#include "vulkan/device_profile.h"
#include "vulkan/cache_file.h"

namespace vkcnn::detail {

extern const ShaderModuleInfo kShaderModules[][kShaderVariantCount];

const ShaderModuleInfo& shaderModule(ShaderId id, ShaderVariant variant) {
  return kShaderModules[uint32_t(id)][uint32_t(variant)];
}

namespace {

constexpr char kMagic[8] = {'V', 'K', 'C', 'N', 'N', 'P', 'C', '1'};

struct CacheFileHeader {
  char magic[8];
  uint32_t vendorId, deviceId, driverVersion, reserved;
  uint8_t pipelineCacheUUID[VK_UUID_SIZE];
  uint64_t dataSize, checksum;
};

CacheFileHeader expectedHeader(const VkPhysicalDeviceProperties& p) {
  CacheFileHeader h{};
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  h.vendorId = p.vendorID;
  h.deviceId = p.deviceID;
  h.driverVersion = p.driverVersion;
  std::memcpy(h.pipelineCacheUUID, p.pipelineCacheUUID, VK_UUID_SIZE);
  return h;
}

}  // namespace

std::string defaultPipelineCacheFile(const VkPhysicalDeviceProperties& p,
                                     const Overrides& overrides) {
  if (!overrides.pipelineCache) return {};
  std::filesystem::path dir;
  if (!overrides.pipelineCacheDirectory.empty())
    dir = overrides.pipelineCacheDirectory;
  else if (const std::string user = platform::userCacheDirectory(); !user.empty())
    dir = std::filesystem::path(user) / "vkcnn";
  else
    return {};
  char uuid[2 * VK_UUID_SIZE + 1];
  for (uint32_t i = 0; i < VK_UUID_SIZE; ++i)
    std::snprintf(uuid + 2 * i, 3, "%02x", p.pipelineCacheUUID[i]);
  char name[128];
  std::snprintf(name, sizeof(name), "pipelines-%04x-%04x-%s.bin", p.vendorID, p.deviceID, uuid);
  return (dir / name).string();
}

std::vector<uint8_t> PipelineRegistry::loadCacheFile() const {
  if (cacheFile_.empty()) return {};
  std::ifstream in(cacheFile_, std::ios::binary);
  if (!in) return {};
  VkPhysicalDeviceProperties props;
  context_.vki().vkGetPhysicalDeviceProperties(context_.physicalDevice(), &props);
  const CacheFileHeader want = expectedHeader(props);
  CacheFileHeader have{};
  auto reject = [&](const char* why) {
    context_.log(LogSeverity::info, "pipeline cache " + cacheFile_ + " ignored: " + why);
    return std::vector<uint8_t>{};
  };
  if (!in.read(reinterpret_cast<char*>(&have), sizeof(have))) return reject("too short");
  if (std::memcmp(have.magic, want.magic, sizeof(kMagic)) || have.vendorId != want.vendorId ||
      have.deviceId != want.deviceId || have.driverVersion != want.driverVersion ||
      std::memcmp(have.pipelineCacheUUID, want.pipelineCacheUUID, VK_UUID_SIZE))
    return reject("written for another device or driver");
  if (have.dataSize > (uint64_t(256) << 20)) return reject("implausible size");
  std::vector<uint8_t> data(have.dataSize);
  if (!in.read(reinterpret_cast<char*>(data.data()), std::streamsize(data.size())))
    return reject("truncated");
  if (fnv1a(data.data(), data.size()) != have.checksum) return reject("checksum mismatch");
  // Vulkan's own header must match the device too (VkPipelineCacheHeaderVersionOne).
  if (data.size() < 32) return reject("no Vulkan header");
  uint32_t words[4];
  std::memcpy(words, data.data(), sizeof(words));
  if (words[1] != VK_PIPELINE_CACHE_HEADER_VERSION_ONE || words[2] != props.vendorID ||
      words[3] != props.deviceID ||
      std::memcmp(data.data() + 16, props.pipelineCacheUUID, VK_UUID_SIZE))
    return reject("Vulkan header does not match the device");
  return data;
}

void PipelineRegistry::save() {
  std::lock_guard lock(mutex_);
  if (cacheFile_.empty() || !cache_) return;
  size_t size = 0;
  if (context_.vk().vkGetPipelineCacheData(context_.device(), cache_, &size, nullptr) !=
          VK_SUCCESS ||
      !size)
    return;
  std::vector<uint8_t> data(size);
  if (context_.vk().vkGetPipelineCacheData(context_.device(), cache_, &size, data.data()) !=
      VK_SUCCESS)
    return;
  data.resize(size);
  VkPhysicalDeviceProperties props;
  context_.vki().vkGetPhysicalDeviceProperties(context_.physicalDevice(), &props);
  CacheFileHeader header = expectedHeader(props);
  header.dataSize = data.size();
  header.checksum = fnv1a(data.data(), data.size());
  const std::string failed =
      writeFileAside(cacheFile_, {{reinterpret_cast<const char*>(&header), sizeof(header)},
                                  {reinterpret_cast<const char*>(data.data()), data.size()}});
  if (!failed.empty()) {
    context_.log(LogSeverity::info, "could not write pipeline cache " + cacheFile_ + ": " + failed);
    return;
  }
  dirty_ = false;
}

PipelineRegistry::PipelineRegistry(ContextImpl& context, std::string cacheFile)
    : context_(context), cacheFile_(std::move(cacheFile)) {
  std::vector<uint8_t> initial = loadCacheFile();
  loaded_ = !initial.empty();
  VkPipelineCacheCreateInfo info{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  info.initialDataSize = initial.size();
  info.pInitialData = initial.empty() ? nullptr : initial.data();
  context_.check(context_.vk().vkCreatePipelineCache(context_.device(), &info, nullptr, &cache_),
                 "vkCreatePipelineCache");
  context_.setName(VK_OBJECT_TYPE_PIPELINE_CACHE, cache_, "vkcnn pipeline cache");
}

PipelineRegistry::~PipelineRegistry() {
  if (dirty_) save();
  for (auto& variants : pipelines_)
    for (auto& p : variants)
      if (p) destroy(*p);
  for (auto& [key, p] : specialized_) destroy(*p);
  context_.vk().vkDestroyPipelineCache(context_.device(), cache_, nullptr);
}

void PipelineRegistry::destroy(Pipeline& p) {
  const auto& vk = context_.vk();
  VkDevice device = context_.device();
  vk.vkDestroyPipeline(device, p.pipeline, nullptr);
  vk.vkDestroyPipelineLayout(device, p.layout, nullptr);
  vk.vkDestroyDescriptorSetLayout(device, p.setLayout, nullptr);
}

uint32_t PipelineRegistry::pipelinesCreated() const {
  std::lock_guard lock(mutex_);
  uint32_t n = 0;
  for (auto& variants : pipelines_)
    for (auto& p : variants) n += p != nullptr;
  return n + uint32_t(specialized_.size());
}

const Pipeline& PipelineRegistry::get(ShaderId id, ShaderVariant variant,
                                      std::span<const int32_t> specialization) {
  std::lock_guard lock(mutex_);
  if (!specialization.empty()) {
    auto& slot = specialized_[{id, variant, {specialization.begin(), specialization.end()}}];
    if (!slot) {
      slot = std::make_unique<Pipeline>(create(id, variant, specialization));
      dirty_ = true;
    }
    return *slot;
  }
  auto& slot = pipelines_[uint32_t(id)][uint32_t(variant)];
  if (!slot) {
    slot = std::make_unique<Pipeline>(create(id, variant, {}));
    dirty_ = true;
  }
  return *slot;
}

void PipelineRegistry::checkLimits(const ShaderModuleInfo& module, bool specialized) const {
  const DeviceCapabilities& caps = context_.capabilities();
  auto refuse = [&](const std::string& needs, uint32_t limit, const char* name) {
    throw Error(ErrorCode::unsupported, std::string("shader ") + module.name + " needs " + needs +
                                            ", more than the device's " + std::to_string(limit) +
                                            " (" + name + ")" + profileNote(caps));
  };
  // Reflection knows the workgroup memory and size of the default specialization only; the
  // kernels that specialize sizes choose within the limits themselves (convolution_choice.cpp).
  if (!specialized && module.sharedMemorySize > caps.maxComputeSharedMemorySize)
    refuse(std::to_string(module.sharedMemorySize) + " bytes of shared memory",
           caps.maxComputeSharedMemorySize, "maxComputeSharedMemorySize");
  if (!specialized && module.invocations() > caps.maxComputeWorkGroupInvocations)
    refuse(std::to_string(module.invocations()) + " invocations a workgroup",
           caps.maxComputeWorkGroupInvocations, "maxComputeWorkGroupInvocations");
  if (module.storageImages() > caps.maxPerStageDescriptorStorageImages)
    refuse(std::to_string(module.storageImages()) + " storage images",
           caps.maxPerStageDescriptorStorageImages, "maxPerStageDescriptorStorageImages");
}

Pipeline PipelineRegistry::create(ShaderId id, ShaderVariant variant,
                                  std::span<const int32_t> specialization) {
  PhaseTimer timer(context_.loadClock(), LoadPhase::pipelines);
  context_.loadClock().countPipeline();
  const auto& vk = context_.vk();
  VkDevice device = context_.device();
  const ShaderModuleInfo& module = shaderModule(id, variant);
  checkLimits(module, !specialization.empty());
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
  std::vector<VkSpecializationMapEntry> entries(specialization.size());
  for (uint32_t i = 0; i < entries.size(); ++i)
    entries[i] = {i, uint32_t(i * sizeof(int32_t)), sizeof(int32_t)};
  const VkSpecializationInfo specializationInfo{uint32_t(entries.size()), entries.data(),
                                                specialization.size_bytes(), specialization.data()};
  if (!specialization.empty()) info.stage.pSpecializationInfo = &specializationInfo;
  info.layout = p.layout;
  VkResult result = vk.vkCreateComputePipelines(device, cache_, 1, &info, nullptr, &p.pipeline);
  vk.vkDestroyShaderModule(device, shader, nullptr);
  context_.check(result, (std::string("vkCreateComputePipelines ") + module.name).c_str());
  context_.setName(VK_OBJECT_TYPE_PIPELINE, p.pipeline, module.name);
  partial.done = true;
  return p;
}

}  // namespace vkcnn::detail
