// DeviceFacts (device_facts.h): reading them when a Context starts, and printing them.
#include "vulkan/device_facts.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "convolution_tiles.h"
#include "vulkan/context_impl.h"
#include "vulkan/device_profile.h"
#include "vulkan/shader_module_info.h"

namespace vkcnn::detail {

const char* toString(MatrixExtension extension) {
  switch (extension) {
    case MatrixExtension::nv:
      return "VK_NV_cooperative_matrix";
    case MatrixExtension::khr:
      return "VK_KHR_cooperative_matrix";
    default:
      return "none";
  }
}

bool DeviceFacts::hasMatrixShape(const CooperativeMatrixShape& shape) const {
  return std::find(matrixShapes.begin(), matrixShapes.end(), shape) != matrixShapes.end();
}

bool fitsDevice(const DeviceFacts& facts, const ShaderModuleInfo& module) {
  return module.sharedMemorySize <= facts.sharedMemoryBytes &&
         module.invocations() <= facts.maxComputeWorkGroupInvocations &&
         module.storageImages() <= facts.maxStorageImages;
}

CooperativeMatrixShape convolutionMatrixShape(MatrixExtension extension) {
  return {extension,
          16,
          16,
          16,
          MatrixComponent::float16,
          MatrixComponent::float16,
          MatrixComponent::float32,
          MatrixComponent::float32,
          true};
}

namespace {

MatrixComponent componentOf(VkComponentTypeNV type) {
  switch (type) {
    case VK_COMPONENT_TYPE_FLOAT16_NV:
      return MatrixComponent::float16;
    case VK_COMPONENT_TYPE_FLOAT32_NV:
      return MatrixComponent::float32;
    default:
      return MatrixComponent::other;
  }
}

const char* componentName(MatrixComponent c) {
  return c == MatrixComponent::float16 ? "f16" : c == MatrixComponent::float32 ? "f32" : "other";
}

std::string yesNo(bool b) {
  return b ? "yes" : "no";
}

}  // namespace

void ContextImpl::queryMatrixShapes() {
  facts_.matrixShapes.clear();
  if (!vki_.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV) return;
  uint32_t count = 0;
  vki_.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(physicalDevice_, &count, nullptr);
  std::vector<VkCooperativeMatrixPropertiesNV> shapes(
      count, VkCooperativeMatrixPropertiesNV{VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV});
  vki_.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(physicalDevice_, &count, shapes.data());
  for (const VkCooperativeMatrixPropertiesNV& p : shapes)
    facts_.matrixShapes.push_back({MatrixExtension::nv, p.MSize, p.NSize, p.KSize,
                                   componentOf(p.AType), componentOf(p.BType), componentOf(p.CType),
                                   componentOf(p.DType), p.scope == VK_SCOPE_SUBGROUP_NV});
}

bool ContextImpl::hasMatrixShape() const {
  return facts_.hasMatrixShape(convolutionMatrixShape(MatrixExtension::nv));
}

void ContextImpl::queryCapabilities(bool adopted, bool matrixUnits,
                                    const VkPhysicalDeviceVulkan11Features* f11,
                                    const VkPhysicalDeviceVulkan12Features* f12,
                                    bool extendedStorageFormats) {
  VkPhysicalDeviceSubgroupProperties subgroup{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  driver.pNext = &subgroup;
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props.pNext = &driver;
  uint32_t count = 0;
  vki_.vkEnumerateDeviceExtensionProperties(physicalDevice_, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> extensions(count);
  vki_.vkEnumerateDeviceExtensionProperties(physicalDevice_, nullptr, &count, extensions.data());
  // A property of a supported extension may be queried without enabling it.
  VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
  const bool smBuiltins = hasExtension(extensions, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME);
  if (smBuiltins) subgroup.pNext = &sm;
  vki_.vkGetPhysicalDeviceProperties2(physicalDevice_, &props);
  const VkPhysicalDeviceLimits& limits = props.properties.limits;
  auto& c = capabilities_;
  c.deviceName = props.properties.deviceName;
  c.driverName = driver.driverName;
  c.deviceType = toDeviceType(props.properties.deviceType);
  c.vendorId = props.properties.vendorID;
  c.deviceId = props.properties.deviceID;
  c.apiVersion = props.properties.apiVersion;
  c.driverVersion = props.properties.driverVersion;
  c.subgroupSize = subgroup.subgroupSize;
  c.maxImageArrayLayers = limits.maxImageArrayLayers;
  c.maxImageDimension2D = limits.maxImageDimension2D;
  c.maxPerStageDescriptorStorageImages = limits.maxPerStageDescriptorStorageImages;
  c.maxComputeSharedMemorySize = limits.maxComputeSharedMemorySize;
  // Test hook: a smaller limit, as devices with Vulkan's least (16 KiB) have.
  if (overrides_.maxSharedMemory)
    c.maxComputeSharedMemorySize =
        std::min(c.maxComputeSharedMemorySize, overrides_.maxSharedMemory);
  c.maxComputeWorkGroupInvocations = limits.maxComputeWorkGroupInvocations;
  c.maxStorageBufferRange = limits.maxStorageBufferRange;
  c.timestampPeriodNs = limits.timestampPeriod;
  c.shaderFloat16 = f12 && f12->shaderFloat16;
  c.storage16Bit = f11 && f11->storageBuffer16BitAccess;
  c.imageArrayNonUniformIndexing = f12 && f12->shaderSampledImageArrayNonUniformIndexing &&
                                   f12->shaderStorageImageArrayNonUniformIndexing;
  c.adopted = adopted;
  c.multiprocessorCount = smBuiltins ? sm.shaderSMCount : 0;
  c.cooperativeMatrix = hasExtension(extensions, "VK_KHR_cooperative_matrix") ||
                        hasExtension(extensions, "VK_NV_cooperative_matrix");
  // The one place the profile clamps what the device offers; everything below and every kernel
  // reads the clamped view.
  clampCapabilities(c, profile_);
  c.matrixUnits = matrixUnits && c.cooperativeMatrix && c.shaderFloat16 && c.storage16Bit &&
                  c.maxComputeSharedMemorySize >= VKCNN_MATRIX_SHARED_MEMORY;
  c.pushDescriptors = hasExtension(extensions, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  // Where packHalf2x16 was measured to round to nearest even (the case "float16 stores round to
  // nearest even and saturate on every shader" checks it on every device). Vulkan leaves the
  // rounding of that conversion to the implementation: other drivers keep the integer rounding.
  VkFormatProperties bits{};
  vki_.vkGetPhysicalDeviceFormatProperties(physicalDevice_, VK_FORMAT_R32G32_UINT, &bits);
  const bool knownRounding = driver.driverID == VK_DRIVER_ID_NVIDIA_PROPRIETARY ||
                             driver.driverID == VK_DRIVER_ID_MESA_LLVMPIPE;
  // Test and benchmark hook: VKCNN_FLOAT16_BIT_STORES=0 keeps float stores.
  c.float16BitStores = knownRounding && extendedStorageFormats &&
                       (bits.optimalTilingFeatures & VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT) &&
                       overrides_.float16BitStores;
  vki_.vkGetPhysicalDeviceMemoryProperties(physicalDevice_, &memoryProperties_);
  resolveWaitSpin();

  DeviceFacts& f = facts_;  // matrixShapes: queryMatrixShapes
  f.deviceName = c.deviceName;
  f.profile = c.profile;
  f.vendorId = c.vendorId;
  f.cpu = c.deviceType == DeviceType::cpu;
  f.subgroupSize = c.subgroupSize;
  f.multiprocessorsReported = c.multiprocessorCount;
  f.cooperativeMatrixNV =
      c.cooperativeMatrix && hasExtension(extensions, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  f.cooperativeMatrixKHR =
      c.cooperativeMatrix && hasExtension(extensions, "VK_KHR_cooperative_matrix");
  if (!c.cooperativeMatrix) f.matrixShapes.clear();
  f.matrixUnits = c.matrixUnits ? MatrixExtension::nv : MatrixExtension::none;
  f.sharedMemoryBytes = c.maxComputeSharedMemorySize;
  f.float16Arithmetic = c.shaderFloat16;
  f.storage16Bit = c.storage16Bit;
  f.imageArrayNonUniformIndexing = c.imageArrayNonUniformIndexing;
  f.maxImageArrayLayers = c.maxImageArrayLayers;
  f.maxImageDimension2D = c.maxImageDimension2D;
  f.maxComputeWorkGroupInvocations = c.maxComputeWorkGroupInvocations;
  f.maxStorageImages = c.maxPerStageDescriptorStorageImages;
  f.maxStorageBufferRange = c.maxStorageBufferRange;
}

const DeviceFacts& deviceFacts(const Context& context) {
  return context.impl()->facts();
}

std::vector<std::pair<std::string, std::string>> describe(const DeviceFacts& f) {
  std::vector<std::pair<std::string, std::string>> lines;
  lines.emplace_back("device profile", toString(f.profile));
  lines.emplace_back("subgroup size", std::to_string(f.subgroupSize));
  lines.emplace_back("multiprocessors",
                     f.multiprocessorsReported
                         ? std::to_string(f.multiprocessorsReported)
                         : std::to_string(f.multiprocessors()) + " (not reported: assumed)");
  lines.emplace_back("VK_NV_cooperative_matrix", yesNo(f.cooperativeMatrixNV));
  lines.emplace_back("VK_KHR_cooperative_matrix", yesNo(f.cooperativeMatrixKHR));
  for (const CooperativeMatrixShape& s : f.matrixShapes) {
    char text[128];
    std::snprintf(text, sizeof text, "%ux%ux%u %s x %s + %s -> %s%s (%s)", s.m, s.n, s.k,
                  componentName(s.a), componentName(s.b), componentName(s.c),
                  componentName(s.result), s.subgroupScope ? ", subgroup" : "",
                  toString(s.extension));
    lines.emplace_back("matrix shape", text);
  }
  lines.emplace_back("matrix units on", toString(f.matrixUnits));
  lines.emplace_back("matrix-unit tiles", yesNo(f.matrixTiles()));
  lines.emplace_back("shared memory", std::to_string(f.sharedMemoryBytes) + " bytes");
  lines.emplace_back("float16 arithmetic", yesNo(f.float16Arithmetic));
  lines.emplace_back("16-bit storage", yesNo(f.storage16Bit));
  lines.emplace_back("image arrays per row", yesNo(f.imageArrayNonUniformIndexing));
  lines.emplace_back("maxImageArrayLayers", std::to_string(f.maxImageArrayLayers));
  lines.emplace_back("maxImageDimension2D", std::to_string(f.maxImageDimension2D));
  lines.emplace_back("workgroup invocations", std::to_string(f.maxComputeWorkGroupInvocations));
  lines.emplace_back("storage images a stage", std::to_string(f.maxStorageImages));
  lines.emplace_back("storage buffer range", std::to_string(f.maxStorageBufferRange) + " bytes");
  return lines;
}

}  // namespace vkcnn::detail
