// vkcnn-pipeline-stats: the driver's statistics (registers, local memory, shared memory) of every
// compute pipeline the library can make (bench/DECISIONS.md#no-local-memory). Creates its own
// Vulkan device with VK_KHR_pipeline_executable_properties and every feature vkcnn enables, then
// builds every embedded module (every ShaderId in every variant, from the generated shader table)
// with VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR, convolution_tiled (and _split) once per tile
// of convolution_tiles.h with each of its epilogues, and prints one line per pipeline:
//
//   vkcnn-pipeline-stats [--max-local BYTES] [--variants f16,f32,u8,f16bits]
//                        [--gemm GEMM_SPIRV --gemm-configs WMxWN/FMxFN/KSTEPS/MODE;...]
//
// --gemm builds bench/gemm_ceiling.comp's SPIR-V for each configuration instead of the library's
// shaders (its registers beside its timings from vkcnn-bench-conv gemm).
//
// A pipeline the device cannot make (the matrix-unit shaders without VK_NV_cooperative_matrix) is
// listed as skipped, with the reason; a pipeline that fails to build is an error (exit 1). With
// --max-local, a pipeline whose local (spill) memory exceeds BYTES is an error too: on NVIDIA an
// array indexed at run time anywhere in a shader (an accumulator array in an epilogue loop the
// compiler does not unroll) lives in local memory for the whole shader, every access a memory
// operation. Drivers without the extension (older lavapipe) still get the list, without statistics.
// VKCNN_VALIDATION=1 enables the Khronos validation layer; any message it prints is an error.
//
// Not linked to vkcnn: the Context does not enable the extension. It compiles the library's
// generated shader table (the same SPIR-V words and reflection) into itself.
#include <vulkan/vulkan.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "convolution_tiles.h"
#include "vkcnn_shader_ids.h"
#include "vulkan/shader_module_info.h"

namespace vkcnn::detail {
extern const ShaderModuleInfo kShaderModules[][kShaderVariantCount];
}

namespace {

using namespace vkcnn::detail;

int validationMessages = 0;

VKAPI_ATTR VkBool32 VKAPI_CALL onMessage(VkDebugUtilsMessageSeverityFlagBitsEXT,
                                         VkDebugUtilsMessageTypeFlagsEXT,
                                         const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  ++validationMessages;
  std::fprintf(stderr, "validation: %s\n", data->pMessage);
  return VK_FALSE;
}

void check(VkResult result, const char* what) {
  if (result == VK_SUCCESS) return;
  std::fprintf(stderr, "error: %s failed (VkResult %d)\n", what, int(result));
  std::exit(1);
}

bool hasExtension(const std::vector<VkExtensionProperties>& list, const char* name) {
  for (const auto& e : list)
    if (!std::strcmp(e.extensionName, name)) return true;
  return false;
}

// SPIR-V capabilities a module declares that need a device extension here (OpCapability, 17).
bool needsCooperativeMatrix(const ShaderModuleInfo& m) {
  for (size_t i = 5; i < m.codeWords;) {
    const uint32_t count = m.code[i] >> 16, opcode = m.code[i] & 0xffff;
    if (count == 0) break;
    if (opcode == 17 && count >= 2 && m.code[i + 1] == 5357) return true;  // CooperativeMatrixNV
    i += count;
  }
  return false;
}

// Driver statistic names vary ("Local Memory Size", "Spill ..."); these say local memory.
bool isLocalMemory(const char* name) {
  std::string n(name);
  for (auto& c : n) c = char(std::tolower(static_cast<unsigned char>(c)));
  return n.find("local memory") != std::string::npos || n.find("spill") != std::string::npos ||
         n.find("scratch") != std::string::npos;
}

}  // namespace

int main(int argc, char** argv) {
  long long maxLocal = -1;
  std::string variants = "f16,f32,u8,f16bits", gemmPath, gemmConfigs;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--max-local" && i + 1 < argc) {
      maxLocal = std::atoll(argv[++i]);
    } else if (a == "--variants" && i + 1 < argc) {
      variants = argv[++i];
    } else if (a == "--gemm" && i + 1 < argc) {
      gemmPath = argv[++i];
    } else if (a == "--gemm-configs" && i + 1 < argc) {
      gemmConfigs = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: %s [--max-local BYTES] [--variants f16,f32,u8,f16bits]\n"
                   "          [--gemm GEMM_SPIRV --gemm-configs WMxWN/FMxFN/KSTEPS/MODE;...]\n",
                   argv[0]);
      return 2;
    }
  }
  std::vector<uint32_t> gemmCode;
  if (!gemmPath.empty()) {
    std::ifstream f(gemmPath, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(f)), {});
    if (bytes.empty() || bytes.size() % 4) {
      std::fprintf(stderr, "error: cannot read SPIR-V %s\n", gemmPath.c_str());
      return 1;
    }
    gemmCode.resize(bytes.size() / 4);
    std::memcpy(gemmCode.data(), bytes.data(), bytes.size());
  }
  // --gemm-configs, checked before any device work: WMxWN/FMxFN/KSTEPS/MODE;...
  std::vector<std::pair<std::string, std::array<int, 6>>> gemmBuilds;
  {
    std::istringstream list(gemmConfigs);
    for (std::string c; std::getline(list, c, ';');) {
      std::array<int, 6> v{};
      if (std::sscanf(c.c_str(), "%dx%d/%dx%d/%d/%d", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) !=
              6 ||
          v[0] < 1 || v[1] < 1 || v[2] < 1 || v[3] < 1 || v[4] < 1 || v[5] < 0) {
        std::fprintf(stderr, "error: --gemm-configs takes WMxWN/FMxFN/KSTEPS/MODE;..., not %s\n",
                     c.c_str());
        return 2;
      }
      gemmBuilds.emplace_back(c, v);
    }
    if (gemmCode.empty() != gemmBuilds.empty()) {
      std::fprintf(stderr, "error: --gemm and --gemm-configs go together\n");
      return 2;
    }
  }
  const char* variantNames[kShaderVariantCount] = {"f16", "f32", "u8", "f16bits"};

  const char* v = std::getenv("VKCNN_VALIDATION");
  const bool validation = v && std::string(v) == "1";
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "vkcnn-pipeline-stats";
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo instanceInfo{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  instanceInfo.pApplicationInfo = &app;
  const char* layer = "VK_LAYER_KHRONOS_validation";
  const char* debugUtils = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  if (validation) {
    instanceInfo.enabledLayerCount = 1;
    instanceInfo.ppEnabledLayerNames = &layer;
    instanceInfo.enabledExtensionCount = 1;
    instanceInfo.ppEnabledExtensionNames = &debugUtils;
  }
  VkInstance instance;
  check(vkCreateInstance(&instanceInfo, nullptr, &instance), "vkCreateInstance");
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  if (validation) {
    VkDebugUtilsMessengerCreateInfoEXT info{
        VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
    info.pfnUserCallback = onMessage;
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
    check(create(instance, &info, nullptr, &messenger), "vkCreateDebugUtilsMessengerEXT");
  }

  uint32_t count = 0;
  vkEnumeratePhysicalDevices(instance, &count, nullptr);
  std::vector<VkPhysicalDevice> devices(count);
  vkEnumeratePhysicalDevices(instance, &count, devices.data());
  if (devices.empty()) {
    std::fprintf(stderr, "error: no Vulkan device\n");
    return 1;
  }
  // As the Context: a discrete GPU first; VKCNN_DEVICE picks by name.
  VkPhysicalDevice physical = devices[0];
  VkPhysicalDeviceProperties properties;
  for (VkPhysicalDevice d : devices) {
    vkGetPhysicalDeviceProperties(d, &properties);
    const char* want = std::getenv("VKCNN_DEVICE");
    if (want ? std::strstr(properties.deviceName, want) != nullptr
             : properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) {
      physical = d;
      break;
    }
  }
  vkGetPhysicalDeviceProperties(physical, &properties);
  vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> available(count);
  vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, available.data());

  // The features vkcnn enables (context.cpp), where the device has them.
  VkPhysicalDeviceCooperativeMatrixFeaturesNV matrix{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR executable{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  VkPhysicalDeviceVulkan12Features supported12{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features supported11{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  supported11.pNext = &supported12;
  const bool hasMatrix = hasExtension(available, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  const bool hasStatistics =
      hasExtension(available, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  void** tail = &supported12.pNext;
  if (hasMatrix) *tail = &matrix, tail = &matrix.pNext;
  if (hasStatistics) *tail = &executable, tail = &executable.pNext;
  VkPhysicalDeviceFeatures2 supported{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  supported.pNext = &supported11;
  vkGetPhysicalDeviceFeatures2(physical, &supported);

  VkPhysicalDeviceVulkan12Features enable12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  enable12.shaderFloat16 = supported12.shaderFloat16;
  enable12.storageBuffer8BitAccess = supported12.storageBuffer8BitAccess;
  enable12.shaderSampledImageArrayNonUniformIndexing =
      supported12.shaderSampledImageArrayNonUniformIndexing;
  enable12.shaderStorageImageArrayNonUniformIndexing =
      supported12.shaderStorageImageArrayNonUniformIndexing;
  VkPhysicalDeviceVulkan11Features enable11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  enable11.storageBuffer16BitAccess = supported11.storageBuffer16BitAccess;
  enable11.pNext = &enable12;
  VkPhysicalDeviceFeatures2 enable{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  enable.pNext = &enable11;
  enable.features.shaderStorageImageExtendedFormats =
      supported.features.shaderStorageImageExtendedFormats;
  enable.features.shaderInt16 = supported.features.shaderInt16;
  std::vector<const char*> extensions;
  const bool matrixUnits = hasMatrix && matrix.cooperativeMatrix && supported12.vulkanMemoryModel &&
                           enable12.shaderFloat16 && enable11.storageBuffer16BitAccess;
  tail = &enable12.pNext;
  VkPhysicalDeviceCooperativeMatrixFeaturesNV enableMatrix{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  if (matrixUnits) {
    extensions.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
    enableMatrix.cooperativeMatrix = VK_TRUE;
    enable12.vulkanMemoryModel = VK_TRUE;
    *tail = &enableMatrix, tail = &enableMatrix.pNext;
  }
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR enableExecutable{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  const bool statistics = hasStatistics && executable.pipelineExecutableInfo;
  if (statistics) {
    extensions.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    enableExecutable.pipelineExecutableInfo = VK_TRUE;
    *tail = &enableExecutable, tail = &enableExecutable.pNext;
  }

  vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, families.data());
  uint32_t family = 0;
  while (family < count && !(families[family].queueFlags & VK_QUEUE_COMPUTE_BIT)) ++family;
  float priority = 1.0f;
  VkDeviceQueueCreateInfo queueInfo{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queueInfo.queueFamilyIndex = family;
  queueInfo.queueCount = 1;
  queueInfo.pQueuePriorities = &priority;
  VkDeviceCreateInfo deviceInfo{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  deviceInfo.pNext = &enable;
  deviceInfo.queueCreateInfoCount = 1;
  deviceInfo.pQueueCreateInfos = &queueInfo;
  deviceInfo.enabledExtensionCount = uint32_t(extensions.size());
  deviceInfo.ppEnabledExtensionNames = extensions.data();
  VkDevice device;
  check(vkCreateDevice(physical, &deviceInfo, nullptr, &device), "vkCreateDevice");
  auto getExecutables = reinterpret_cast<PFN_vkGetPipelineExecutablePropertiesKHR>(
      vkGetDeviceProcAddr(device, "vkGetPipelineExecutablePropertiesKHR"));
  auto getStatistics = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
      vkGetDeviceProcAddr(device, "vkGetPipelineExecutableStatisticsKHR"));
  std::printf("# %s, driver %u.%u.%u, %s, matrix units %s\n", properties.deviceName,
              VK_API_VERSION_MAJOR(properties.driverVersion),
              VK_API_VERSION_MINOR(properties.driverVersion),
              VK_API_VERSION_PATCH(properties.driverVersion),
              statistics ? "pipeline statistics" : "no pipeline statistics (no extension)",
              matrixUnits ? "yes" : "no");

  int failures = 0, created = 0, skipped = 0;
  // One pipeline: its line, and whether local memory is over the limit.
  auto build = [&](const ShaderModuleInfo& m, const std::string& label,
                   const std::vector<int32_t>& specialization) {
    std::vector<VkDescriptorSetLayoutBinding> bindings;
    for (uint32_t i = 0; i < m.bindingCount; ++i) {
      VkDescriptorSetLayoutBinding b{};
      b.binding = m.bindings[i].binding;
      b.descriptorType = descriptorType(m.bindings[i].type);
      b.descriptorCount = m.bindings[i].arraySize;
      b.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
      bindings.push_back(b);
    }
    VkDescriptorSetLayoutCreateInfo setInfo{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    setInfo.bindingCount = uint32_t(bindings.size());
    setInfo.pBindings = bindings.data();
    VkDescriptorSetLayout setLayout;
    check(vkCreateDescriptorSetLayout(device, &setInfo, nullptr, &setLayout),
          "vkCreateDescriptorSetLayout");
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, m.pushConstantSize};
    VkPipelineLayoutCreateInfo layoutInfo{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layoutInfo.setLayoutCount = 1;
    layoutInfo.pSetLayouts = &setLayout;
    layoutInfo.pushConstantRangeCount = m.pushConstantSize ? 1 : 0;
    layoutInfo.pPushConstantRanges = &range;
    VkPipelineLayout layout;
    check(vkCreatePipelineLayout(device, &layoutInfo, nullptr, &layout), "vkCreatePipelineLayout");
    VkShaderModuleCreateInfo moduleInfo{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    moduleInfo.codeSize = m.codeWords * 4;
    moduleInfo.pCode = m.code;
    VkShaderModule shader;
    check(vkCreateShaderModule(device, &moduleInfo, nullptr, &shader), "vkCreateShaderModule");
    std::vector<VkSpecializationMapEntry> entries(specialization.size());
    for (uint32_t i = 0; i < entries.size(); ++i)
      entries[i] = {i, uint32_t(i * sizeof(int32_t)), sizeof(int32_t)};
    const VkSpecializationInfo specializationInfo{uint32_t(entries.size()), entries.data(),
                                                  specialization.size() * sizeof(int32_t),
                                                  specialization.data()};
    VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    if (statistics) info.flags = VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
    info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    info.stage.module = shader;
    info.stage.pName = "main";
    if (!specialization.empty()) info.stage.pSpecializationInfo = &specializationInfo;
    info.layout = layout;
    VkPipeline pipeline = VK_NULL_HANDLE;
    const VkResult result =
        vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &info, nullptr, &pipeline);
    std::string line = label;
    if (result != VK_SUCCESS) {
      line += " FAILED (VkResult " + std::to_string(int(result)) + ")";
      ++failures;
    } else {
      ++created;
    }
    if (result == VK_SUCCESS && statistics) {
      VkPipelineInfoKHR pipelineInfo{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
      pipelineInfo.pipeline = pipeline;
      uint32_t executables = 0;
      getExecutables(device, &pipelineInfo, &executables, nullptr);
      for (uint32_t e = 0; e < executables; ++e) {
        VkPipelineExecutableInfoKHR executableInfo{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
        executableInfo.pipeline = pipeline;
        executableInfo.executableIndex = e;
        uint32_t n = 0;
        getStatistics(device, &executableInfo, &n, nullptr);
        std::vector<VkPipelineExecutableStatisticKHR> stats(
            n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
        getStatistics(device, &executableInfo, &n, stats.data());
        for (const auto& s : stats) {
          char value[64];
          long long number = 0;
          switch (s.format) {
            case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
              number = s.value.b32;
              break;
            case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
              number = s.value.i64;
              break;
            case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
              number = (long long)s.value.u64;
              break;
            case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR:
              number = (long long)s.value.f64;
              break;
            default:
              break;
          }
          // NVIDIA 580 reports Local Memory Size with bit 36 set (68719476736 for none, + the
          // bytes): the bytes are the low 32 bits.
          const bool flagged = isLocalMemory(s.name) && number >= (1ll << 32);
          if (flagged) number &= 0xffffffffll;
          if (s.format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR)
            std::snprintf(value, sizeof value, "%g", s.value.f64);
          else
            std::snprintf(value, sizeof value, "%lld", number);
          std::string name = s.name;
          for (auto& c : name)
            if (c == ' ') c = '_';
          line += " | " + name + "=" + value;
          if (maxLocal >= 0 && isLocalMemory(s.name) && number > maxLocal) {
            line += " (OVER " + std::to_string(maxLocal) + ")";
            ++failures;
          }
        }
      }
    }
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
    if (pipeline) vkDestroyPipeline(device, pipeline, nullptr);
    vkDestroyShaderModule(device, shader, nullptr);
    vkDestroyPipelineLayout(device, layout, nullptr);
    vkDestroyDescriptorSetLayout(device, setLayout, nullptr);
  };

  if (!gemmCode.empty()) {
    // gemm_ceiling.comp: three storage buffers, M N K pushed.
    static const ShaderBinding buffers[3] = {
        {0, 0, BindingType::storageBuffer, 0, 0, false, 1, "a"},
        {0, 1, BindingType::storageBuffer, 0, 0, false, 1, "b"},
        {0, 2, BindingType::storageBuffer, 0, 0, false, 1, "c"}};
    const ShaderModuleInfo gemm{"gemm_ceiling", gemmCode.data(), gemmCode.size(), buffers, 3, 12,
                                {1, 1, 1}};
    for (const auto& [label, c] : gemmBuilds) {
      if (!matrixUnits) {
        std::printf("gemm_ceiling %s skipped (no VK_NV_cooperative_matrix)\n", label.c_str());
        ++skipped;
        continue;
      }
      // MODE + 32: (MODE >> 6) & 15 producer warps beside the tile's (gemm_ceiling.comp).
      const int producers = (c[5] & 32) ? (c[5] >> 6) & 15 : 0;
      build(gemm, "gemm_ceiling " + label,
            {c[0], c[1], c[2], c[3], c[4], 32 * (c[0] * c[1] + producers), c[5]});
    }
  }
  for (uint32_t id = 0; id < kShaderIdCount && gemmCode.empty(); ++id) {
    for (uint32_t variant = 0; variant < kShaderVariantCount; ++variant) {
      if (("," + variants + ",").find("," + std::string(variantNames[variant]) + ",") ==
          std::string::npos)
        continue;
      const ShaderModuleInfo& m = kShaderModules[id][variant];
      if (needsCooperativeMatrix(m)) {
        // The library makes the matrix-unit pipelines for float16 destinations only.
        if (variant != uint32_t(ShaderVariant::f16) && variant != uint32_t(ShaderVariant::f16bits))
          continue;
        if (!matrixUnits) {
          std::printf("%s skipped (no VK_NV_cooperative_matrix)\n", m.name);
          ++skipped;
          continue;
        }
      }
      if (ShaderId(id) == ShaderId::convolution_tiled_split) {
        // Each tile as the selector uses it split (the epilogue as it goes).
        for (const MatrixTile& t : kMatrixTiles) {
          const auto constants = t.specialization(0);
          build(m, std::string(m.name) + " " + t.name, {constants.begin(), constants.end()});
        }
      } else if (ShaderId(id) == ShaderId::convolution_tiled) {
        // Each tile with each epilogue (EPILOGUE, id 7: as it goes, ahead, ahead with a
        // residual).
        static const char* const epilogues[] = {"", " ahead", " ahead residual"};
        for (const MatrixTile& t : kMatrixTiles)
          for (int32_t epilogue = 0; epilogue < 3; ++epilogue) {
            const auto constants = t.specialization(epilogue);
            build(m, std::string(m.name) + " " + t.name + epilogues[epilogue],
                  {constants.begin(), constants.end()});
          }
      } else if (ShaderId(id) == ShaderId::convolution_tiled_pieces) {
        // Each tile reading ahead, as over a batch's pieces (IMAGES_PER_PIECE, id 8: 4).
        for (const MatrixTile& t : kMatrixTiles) {
          const auto constants = t.specialization(1);
          std::vector<int32_t> c(constants.begin(), constants.end());
          c.push_back(4);
          build(m, std::string(m.name) + " " + t.name, c);
        }
      } else if (ShaderId(id) == ShaderId::fully_connected_batched ||
                 ShaderId(id) == ShaderId::fully_connected_batched_half) {
        // As the library makes them: 8 rows a slice, over a batch and for one image (ONE_IMAGE).
        build(m, std::string(m.name) + " r8", {8, 0});
        build(m, std::string(m.name) + " r8 one", {8, 1});
      } else {
        build(m, m.name, {});
      }
    }
  }
  std::printf("# %d pipelines created, %d skipped, %d errors; %u shaders\n", created, skipped,
              failures, kShaderIdCount);
  vkDestroyDevice(device, nullptr);
  if (messenger) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
    destroy(instance, messenger, nullptr);
  }
  vkDestroyInstance(instance, nullptr);
  if (validationMessages) std::fprintf(stderr, "%d validation messages\n", validationMessages);
  return failures || validationMessages ? 1 : 0;
}
