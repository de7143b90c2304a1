// vkcnn-bench-wgscope: issue #11's workgroup-scope GEMM ceiling (bench/DECISIONS.md#gemm-ceiling).
// Creates its own Vulkan device with VK_KHR_cooperative_matrix and VK_NV_cooperative_matrix2
// (workgroup scope, flexible dimensions), prints what the driver reports about both, and times
// bench/gemm_workgroup.comp (rewritten to Workgroup scope by scripts/bench/coopmat_khr.py).
//
//   vkcnn-bench-wgscope info
//   vkcnn-bench-wgscope gemm NAME=SPIRV[,NAME=SPIRV...] TILES M N K [--iterations N]
//     TILES: comma-separated MxNxKwT (tile rows x columns x depth, T invocations), e.g.
//     128x128x32w256. Each configuration is first checked entry by entry against a float64 CPU
//     GEMM on a small problem (C poisoned with NaN first), then timed at M x N x K (GPU
//     timestamps, median of N) with a sample of C checked again. One JSON object a line.
//
// Not linked to vkcnn: the Context does not enable these extensions (they are not in Debian 12's
// Vulkan headers 1.3.239; the structures below are declared by hand from the registry).
#include <vulkan/vulkan.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "memory/half.h"

// ---- VK_KHR_cooperative_matrix and VK_NV_cooperative_matrix2, from the Vulkan registry --------
// Prefixed names so that newer headers declaring the real ones do not clash.
namespace wg {
constexpr VkStructureType kCoopMatFeaturesKHR = VkStructureType(1000506000);
constexpr VkStructureType kCoopMatPropertiesKHR = VkStructureType(1000506001);
constexpr VkStructureType kCoopMat2FeaturesNV = VkStructureType(1000593000);
constexpr VkStructureType kFlexibleDimensionsPropertiesNV = VkStructureType(1000593001);
constexpr VkStructureType kCoopMat2PropertiesNV = VkStructureType(1000593002);

struct CoopMatFeaturesKHR {
  VkStructureType sType;
  void* pNext;
  VkBool32 cooperativeMatrix;
  VkBool32 cooperativeMatrixRobustBufferAccess;
};
struct CoopMatPropertiesKHR {  // VkCooperativeMatrixPropertiesKHR
  VkStructureType sType;
  void* pNext;
  uint32_t MSize, NSize, KSize;
  uint32_t AType, BType, CType, ResultType;  // VkComponentTypeKHR
  VkBool32 saturatingAccumulation;
  uint32_t scope;  // VkScopeKHR
};
struct CoopMat2FeaturesNV {
  VkStructureType sType;
  void* pNext;
  VkBool32 cooperativeMatrixWorkgroupScope;
  VkBool32 cooperativeMatrixFlexibleDimensions;
  VkBool32 cooperativeMatrixReductions;
  VkBool32 cooperativeMatrixConversions;
  VkBool32 cooperativeMatrixPerElementOperations;
  VkBool32 cooperativeMatrixTensorAddressing;
  VkBool32 cooperativeMatrixBlockLoads;
};
struct FlexibleDimensionsPropertiesNV {  // VkCooperativeMatrixFlexibleDimensionsPropertiesNV
  VkStructureType sType;
  void* pNext;
  uint32_t MGranularity, NGranularity, KGranularity;
  uint32_t AType, BType, CType, ResultType;
  VkBool32 saturatingAccumulation;
  uint32_t scope;
  uint32_t workgroupInvocations;
};
struct CoopMat2PropertiesNV {
  VkStructureType sType;
  void* pNext;
  uint32_t cooperativeMatrixWorkgroupScopeMaxWorkgroupSize;
  uint32_t cooperativeMatrixFlexibleDimensionsMaxDimension;
  uint32_t cooperativeMatrixWorkgroupScopeReservedSharedMemory;
};
using PFN_GetCoopMatProperties = VkResult(VKAPI_PTR*)(VkPhysicalDevice, uint32_t*,
                                                      CoopMatPropertiesKHR*);
using PFN_GetFlexibleProperties = VkResult(VKAPI_PTR*)(VkPhysicalDevice, uint32_t*,
                                                       FlexibleDimensionsPropertiesNV*);
}  // namespace wg

namespace {

const char* componentName(uint32_t t) {
  static const char* names[] = {"f16", "f32", "f64", "s8",  "s16", "s32",
                                "s64", "u8",  "u16", "u32", "u64"};
  return t < 11 ? names[t] : "other";
}
const char* scopeName(uint32_t s) {
  return s == 1 ? "device" : s == 2 ? "workgroup" : s == 3 ? "subgroup" : "other";
}

void check(VkResult r, const char* what) {
  if (r != VK_SUCCESS)
    throw std::runtime_error(std::string(what) + " failed: VkResult " + std::to_string(r));
}

using vkcnn::detail::floatToHalf;  // engine/src/memory/half.h
using vkcnn::detail::halfToFloat;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Device {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t family = 0;
  VkPhysicalDeviceProperties properties{};
  VkPhysicalDeviceMemoryProperties memory{};
  wg::CoopMat2PropertiesNV coopmat2{wg::kCoopMat2PropertiesNV};
  bool hasKHR = false, hasNV2 = false;
  wg::CoopMat2FeaturesNV features2{wg::kCoopMat2FeaturesNV};

  // Prints the device, the extensions' features and properties (one JSON object a line).
  void create(bool wantDevice) {
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "vkcnn-bench-wgscope";
    app.apiVersion = VK_API_VERSION_1_3;
    VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pApplicationInfo = &app;
    check(vkCreateInstance(&ici, nullptr, &instance), "vkCreateInstance");
    uint32_t count = 0;
    vkEnumeratePhysicalDevices(instance, &count, nullptr);
    std::vector<VkPhysicalDevice> all(count);
    vkEnumeratePhysicalDevices(instance, &count, all.data());
    for (VkPhysicalDevice p : all) {
      uint32_t n = 0;
      vkEnumerateDeviceExtensionProperties(p, nullptr, &n, nullptr);
      std::vector<VkExtensionProperties> exts(n);
      vkEnumerateDeviceExtensionProperties(p, nullptr, &n, exts.data());
      bool khr = false, nv2 = false;
      for (const auto& e : exts) {
        khr |= !std::strcmp(e.extensionName, "VK_KHR_cooperative_matrix");
        nv2 |= !std::strcmp(e.extensionName, "VK_NV_cooperative_matrix2");
      }
      if (khr && (!physical || nv2)) physical = p, hasKHR = khr, hasNV2 = nv2;
    }
    if (!physical) throw std::runtime_error("no device offers VK_KHR_cooperative_matrix");
    vkGetPhysicalDeviceProperties(physical, &properties);
    vkGetPhysicalDeviceMemoryProperties(physical, &memory);
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    VkPhysicalDeviceSubgroupProperties subgroup{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    p2.pNext = &subgroup;
    subgroup.pNext = &driver;
    if (hasNV2) driver.pNext = &coopmat2;
    vkGetPhysicalDeviceProperties2(physical, &p2);
    std::printf(
        "{\"device\": \"%s\", \"driver\": \"%s %s\", \"api\": \"%u.%u.%u\", "
        "\"VK_KHR_cooperative_matrix\": %d, \"VK_NV_cooperative_matrix2\": %d, "
        "\"subgroupSize\": %u, \"maxComputeSharedMemorySize\": %u, "
        "\"maxComputeWorkGroupInvocations\": %u}\n",
        properties.deviceName, driver.driverName, driver.driverInfo,
        VK_API_VERSION_MAJOR(properties.apiVersion), VK_API_VERSION_MINOR(properties.apiVersion),
        VK_API_VERSION_PATCH(properties.apiVersion), hasKHR, hasNV2, subgroup.subgroupSize,
        properties.limits.maxComputeSharedMemorySize,
        properties.limits.maxComputeWorkGroupInvocations);
    wg::CoopMatFeaturesKHR featuresKHR{wg::kCoopMatFeaturesKHR};
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f2.pNext = &featuresKHR;
    if (hasNV2) featuresKHR.pNext = &features2;
    vkGetPhysicalDeviceFeatures2(physical, &f2);
    std::printf("{\"cooperativeMatrix\": %u, \"cooperativeMatrixRobustBufferAccess\": %u",
                featuresKHR.cooperativeMatrix, featuresKHR.cooperativeMatrixRobustBufferAccess);
    if (hasNV2)
      std::printf(
          ", \"cooperativeMatrixWorkgroupScope\": %u, \"cooperativeMatrixFlexibleDimensions\": %u, "
          "\"cooperativeMatrixReductions\": %u, \"cooperativeMatrixConversions\": %u, "
          "\"cooperativeMatrixPerElementOperations\": %u, "
          "\"cooperativeMatrixTensorAddressing\": %u, \"cooperativeMatrixBlockLoads\": %u, "
          "\"cooperativeMatrixWorkgroupScopeMaxWorkgroupSize\": %u, "
          "\"cooperativeMatrixFlexibleDimensionsMaxDimension\": %u, "
          "\"cooperativeMatrixWorkgroupScopeReservedSharedMemory\": %u",
          features2.cooperativeMatrixWorkgroupScope, features2.cooperativeMatrixFlexibleDimensions,
          features2.cooperativeMatrixReductions, features2.cooperativeMatrixConversions,
          features2.cooperativeMatrixPerElementOperations,
          features2.cooperativeMatrixTensorAddressing, features2.cooperativeMatrixBlockLoads,
          coopmat2.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize,
          coopmat2.cooperativeMatrixFlexibleDimensionsMaxDimension,
          coopmat2.cooperativeMatrixWorkgroupScopeReservedSharedMemory);
    std::printf("}\n");
    auto getKHR = reinterpret_cast<wg::PFN_GetCoopMatProperties>(
        vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"));
    if (getKHR) {
      uint32_t n = 0;
      check(getKHR(physical, &n, nullptr), "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR");
      std::vector<wg::CoopMatPropertiesKHR> props(n, {wg::kCoopMatPropertiesKHR});
      check(getKHR(physical, &n, props.data()),
            "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR");
      for (const auto& p : props)
        std::printf(
            "{\"coopmat\": \"%ux%ux%u\", \"A\": \"%s\", \"B\": \"%s\", \"C\": \"%s\", "
            "\"result\": \"%s\", \"saturating\": %u, \"scope\": \"%s\"}\n",
            p.MSize, p.NSize, p.KSize, componentName(p.AType), componentName(p.BType),
            componentName(p.CType), componentName(p.ResultType), p.saturatingAccumulation,
            scopeName(p.scope));
    }
    auto getFlexible = reinterpret_cast<wg::PFN_GetFlexibleProperties>(vkGetInstanceProcAddr(
        instance, "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV"));
    if (hasNV2 && getFlexible) {
      uint32_t n = 0;
      check(getFlexible(physical, &n, nullptr), "flexible dimensions properties");
      std::vector<wg::FlexibleDimensionsPropertiesNV> props(n,
                                                            {wg::kFlexibleDimensionsPropertiesNV});
      check(getFlexible(physical, &n, props.data()), "flexible dimensions properties");
      for (const auto& p : props)
        std::printf(
            "{\"flexible\": \"%ux%ux%u\", \"A\": \"%s\", \"B\": \"%s\", \"C\": \"%s\", "
            "\"result\": \"%s\", \"saturating\": %u, \"scope\": \"%s\", "
            "\"workgroupInvocations\": %u}\n",
            p.MGranularity, p.NGranularity, p.KGranularity, componentName(p.AType),
            componentName(p.BType), componentName(p.CType), componentName(p.ResultType),
            p.saturatingAccumulation, scopeName(p.scope), p.workgroupInvocations);
    }
    std::fflush(stdout);
    if (!wantDevice) return;
    if (!hasNV2 || !features2.cooperativeMatrixWorkgroupScope ||
        !features2.cooperativeMatrixFlexibleDimensions)
      throw std::runtime_error("no workgroup-scope cooperative matrices with flexible dimensions");

    uint32_t nf = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &nf, nullptr);
    std::vector<VkQueueFamilyProperties> families(nf);
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &nf, families.data());
    family = uint32_t(std::find_if(families.begin(), families.end(),
                                   [](const VkQueueFamilyProperties& f) {
                                     return f.queueFlags & VK_QUEUE_COMPUTE_BIT;
                                   }) -
                      families.begin());
    const float priority = 1;
    VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qci.queueFamilyIndex = family;
    qci.queueCount = 1;
    qci.pQueuePriorities = &priority;
    wg::CoopMat2FeaturesNV enable2{wg::kCoopMat2FeaturesNV};
    enable2.cooperativeMatrixWorkgroupScope = VK_TRUE;
    enable2.cooperativeMatrixFlexibleDimensions = VK_TRUE;
    enable2.cooperativeMatrixTensorAddressing = features2.cooperativeMatrixTensorAddressing;
    wg::CoopMatFeaturesKHR enableKHR{wg::kCoopMatFeaturesKHR, &enable2, VK_TRUE, VK_FALSE};
    VkPhysicalDeviceVulkan11Features v11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    v11.pNext = &enableKHR;
    v11.storageBuffer16BitAccess = VK_TRUE;
    VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    v12.pNext = &v11;
    v12.shaderFloat16 = VK_TRUE;
    v12.vulkanMemoryModel = VK_TRUE;
    v12.vulkanMemoryModelDeviceScope = VK_TRUE;
    const char* extensions[] = {"VK_KHR_cooperative_matrix", "VK_NV_cooperative_matrix2"};
    VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dci.pNext = &v12;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    dci.enabledExtensionCount = 2;
    dci.ppEnabledExtensionNames = extensions;
    std::fprintf(stderr, "wgscope: creating the device\n");
    check(vkCreateDevice(physical, &dci, nullptr, &device), "vkCreateDevice");
    std::fprintf(stderr, "wgscope: device created\n");
    vkGetDeviceQueue(device, family, 0, &queue);
  }

  ~Device() {
    if (device) vkDestroyDevice(device, nullptr);
    if (instance) vkDestroyInstance(instance, nullptr);
  }
};

struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* map = nullptr;
};

// Host-visible device-local memory (ReBAR on the H100) keeps this short; else host memory.
Buffer makeBuffer(const Device& d, VkDeviceSize size) {
  Buffer b;
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = size;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  check(vkCreateBuffer(d.device, &bi, nullptr, &b.buffer), "vkCreateBuffer");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(d.device, b.buffer, &req);
  int type = -1;
  for (VkMemoryPropertyFlags want : {VkMemoryPropertyFlags(VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT |
                                                           VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                           VK_MEMORY_PROPERTY_HOST_COHERENT_BIT),
                                     VkMemoryPropertyFlags(VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                           VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)}) {
    for (uint32_t i = 0; i < d.memory.memoryTypeCount && type < 0; ++i)
      if ((req.memoryTypeBits & (1u << i)) &&
          (d.memory.memoryTypes[i].propertyFlags & want) == want &&
          d.memory.memoryHeaps[d.memory.memoryTypes[i].heapIndex].size > 2 * req.size)
        type = int(i);
    if (type >= 0) break;
  }
  if (type < 0) throw std::runtime_error("no host-visible memory for a buffer");
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = uint32_t(type);
  check(vkAllocateMemory(d.device, &ai, nullptr, &b.memory), "vkAllocateMemory");
  check(vkBindBufferMemory(d.device, b.buffer, b.memory, 0), "vkBindBufferMemory");
  check(vkMapMemory(d.device, b.memory, 0, VK_WHOLE_SIZE, 0, &b.map), "vkMapMemory");
  return b;
}

void destroy(const Device& d, Buffer& b) {
  vkUnmapMemory(d.device, b.memory);
  vkDestroyBuffer(d.device, b.buffer, nullptr);
  vkFreeMemory(d.device, b.memory, nullptr);
}

struct Tile {
  uint32_t m, n, k, threads;
  std::string name() const {
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + "w" +
           std::to_string(threads);
  }
};

// One GEMM problem: buffers, descriptor set, timing queries.
class Gemm {
 public:
  Gemm(const Device& d, VkDescriptorSetLayout setLayout, VkDescriptorPool pool, uint32_t M,
       uint32_t N, uint32_t K)
      : d_(d), M(M), N(N), K(K) {
    a_ = makeBuffer(d, VkDeviceSize(M) * K * 2);
    b_ = makeBuffer(d, VkDeviceSize(K) * N * 2);
    c_ = makeBuffer(d, VkDeviceSize(M) * N * 4);
    uint32_t s = M * 2654435761u + K;
    auto fill = [&](void* map, size_t count) {
      auto* h = static_cast<uint16_t*>(map);
      for (size_t i = 0; i < count; ++i) {
        s ^= s << 13, s ^= s >> 17, s ^= s << 5;
        h[i] = floatToHalf(float(s >> 8) * (2.0f / 16777216.0f) - 1.0f);
      }
    };
    fill(a_.map, size_t(M) * K);
    fill(b_.map, size_t(K) * N);
    VkDescriptorSetAllocateInfo dsa{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    dsa.descriptorPool = pool;
    dsa.descriptorSetCount = 1;
    dsa.pSetLayouts = &setLayout;
    check(vkAllocateDescriptorSets(d.device, &dsa, &set), "vkAllocateDescriptorSets");
    VkDescriptorBufferInfo infos[3] = {{a_.buffer, 0, VK_WHOLE_SIZE},
                                       {b_.buffer, 0, VK_WHOLE_SIZE},
                                       {c_.buffer, 0, VK_WHOLE_SIZE}};
    VkWriteDescriptorSet writes[3];
    for (uint32_t i = 0; i < 3; ++i) {
      writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      writes[i].dstSet = set;
      writes[i].dstBinding = i;
      writes[i].descriptorCount = 1;
      writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[i].pBufferInfo = &infos[i];
    }
    vkUpdateDescriptorSets(d.device, 3, writes, 0, nullptr);
  }
  ~Gemm() {
    destroy(d_, a_);
    destroy(d_, b_);
    destroy(d_, c_);
  }
  void poison() { std::memset(c_.map, 0xff, size_t(M) * N * 4); }
  // Relative L2 error of C against float64 over `samples` entries (all when 0).
  double error(size_t samples) const {
    const auto* ah = static_cast<const uint16_t*>(a_.map);
    const auto* bh = static_cast<const uint16_t*>(b_.map);
    const auto* ch = static_cast<const float*>(c_.map);
    double err = 0, norm = 0;
    std::mt19937 rng(5);
    const size_t total = size_t(M) * N, count = samples ? samples : total;
    std::vector<double> column(K);
    size_t columnOf = SIZE_MAX;
    for (size_t s = 0; s < count; ++s) {
      const size_t idx = samples ? rng() % total : (s % M) * N + s / M;  // column by column
      const size_t i = idx / N, j = idx % N;
      if (j != columnOf)
        for (uint32_t k = 0; k < K; ++k) column[k] = halfToFloat(bh[size_t(k) * N + j]);
      columnOf = j;
      double ref = 0;
      for (uint32_t k = 0; k < K; ++k) ref += double(halfToFloat(ah[i * K + k])) * column[k];
      const double got = ch[idx];
      if (!std::isfinite(got)) return INFINITY;  // an entry never written stays NaN
      err += (got - ref) * (got - ref);
      norm += ref * ref;
    }
    return std::sqrt(err / std::max(norm, 1e-300));
  }

  const Device& d_;
  uint32_t M, N, K;
  VkDescriptorSet set = VK_NULL_HANDLE;

 private:
  Buffer a_, b_, c_;
};

// Runs `count` dispatches of the pipeline on the problem and returns each one's GPU time in ms.
std::vector<double> dispatch(const Device& d, VkCommandPool commandPool, VkQueryPool queries,
                             VkPipeline pipeline, VkPipelineLayout layout, const Gemm& g,
                             const Tile& t, int count) {
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = commandPool;
  cai.commandBufferCount = 1;
  VkCommandBuffer cmd;
  check(vkAllocateCommandBuffers(d.device, &cai, &cmd), "vkAllocateCommandBuffers");
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  vkBeginCommandBuffer(cmd, &begin);
  vkCmdResetQueryPool(cmd, queries, 0, 2 * uint32_t(count));
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
  vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &g.set, 0, nullptr);
  const int32_t push[3] = {int32_t(g.M), int32_t(g.N), int32_t(g.K)};
  vkCmdPushConstants(cmd, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 12, push);
  // Each dispatch writes the same C: no barrier between them (it would add a drain).
  for (int r = 0; r < count; ++r) {
    vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries, 2 * r);
    vkCmdDispatch(cmd, g.M / t.m, g.N / t.n, 1);
    vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries, 2 * r + 1);
  }
  check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cmd;
  check(vkQueueSubmit(d.queue, 1, &submit, VK_NULL_HANDLE), "vkQueueSubmit");
  check(vkQueueWaitIdle(d.queue), "vkQueueWaitIdle");
  std::vector<uint64_t> stamps(2 * size_t(count));
  check(vkGetQueryPoolResults(d.device, queries, 0, 2 * uint32_t(count), stamps.size() * 8,
                              stamps.data(), 8, VK_QUERY_RESULT_64_BIT),
        "vkGetQueryPoolResults");
  vkFreeCommandBuffers(d.device, commandPool, 1, &cmd);
  std::vector<double> ms;
  for (int r = 0; r < count; ++r)
    ms.push_back(double(stamps[2 * r + 1] - stamps[2 * r]) * d.properties.limits.timestampPeriod *
                 1e-6);
  return ms;
}

std::vector<uint32_t> readSpirv(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), {});
  if (bytes.empty() || bytes.size() % 4) throw std::runtime_error("cannot read SPIR-V " + path);
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), bytes.size());
  return words;
}

int benchGemm(const std::vector<std::pair<std::string, std::string>>& shaders,
              const std::vector<Tile>& tiles, uint32_t M, uint32_t N, uint32_t K, int iterations) {
  Device d;
  d.create(true);
  VkDescriptorSetLayoutBinding bindings[3];
  for (uint32_t i = 0; i < 3; ++i)
    bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo sli{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  sli.bindingCount = 3;
  sli.pBindings = bindings;
  VkDescriptorSetLayout setLayout;
  check(vkCreateDescriptorSetLayout(d.device, &sli, nullptr, &setLayout), "set layout");
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, 12};
  VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pli.setLayoutCount = 1;
  pli.pSetLayouts = &setLayout;
  pli.pushConstantRangeCount = 1;
  pli.pPushConstantRanges = &range;
  VkPipelineLayout layout;
  check(vkCreatePipelineLayout(d.device, &pli, nullptr, &layout), "pipeline layout");
  VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 6};
  VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  dpi.maxSets = 2;
  dpi.poolSizeCount = 1;
  dpi.pPoolSizes = &ps;
  VkDescriptorPool pool;
  check(vkCreateDescriptorPool(d.device, &dpi, nullptr, &pool), "descriptor pool");
  VkCommandPoolCreateInfo cpi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cpi.queueFamilyIndex = d.family;
  VkCommandPool commandPool;
  check(vkCreateCommandPool(d.device, &cpi, nullptr, &commandPool), "command pool");
  VkQueryPoolCreateInfo qpi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  qpi.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qpi.queryCount = 2 * uint32_t(std::max(iterations + 5, 64));
  VkQueryPool queries;
  check(vkCreateQueryPool(d.device, &qpi, nullptr, &queries), "query pool");

  // The correctness problem: a few tiles each way and several K chunks, every entry checked.
  uint32_t tm = 1, tn = 1, tk = 1;
  for (const Tile& t : tiles)
    tm = std::max(tm, t.m), tn = std::max(tn, t.n), tk = std::max(tk, t.k);
  Gemm small(d, setLayout, pool, 2 * tm, 3 * tn, 4 * tk);
  Gemm big(d, setLayout, pool, M, N, K);
  const uint32_t reserved = d.coopmat2.cooperativeMatrixWorkgroupScopeReservedSharedMemory;
  bool warmedUp = false;
  for (const auto& [variant, path] : shaders) {
    const std::vector<uint32_t> code = readSpirv(path);
    VkShaderModuleCreateInfo smi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    smi.codeSize = code.size() * 4;
    smi.pCode = code.data();
    VkShaderModule module;
    std::fprintf(stderr, "wgscope: shader module %s\n", path.c_str());
    check(vkCreateShaderModule(d.device, &smi, nullptr, &module), "shader module");
    const bool staged = variant.find("staged") != std::string::npos;
    for (const Tile& t : tiles) {
      std::printf("{\"variant\": \"%s\", \"tile\": \"%s\"", variant.c_str(), t.name().c_str());
      // The staged shader's two shared stages (rows padded by 16 bytes) next to what the driver
      // reserves for workgroup-scope matrices.
      const uint32_t shared = staged ? 2 * 16 * (t.m * (t.k / 8 + 1) + t.k * (t.n / 8 + 1)) : 0;
      const char* skip = nullptr;
      if (M % t.m || N % t.n || K % t.k || t.k % 8 || t.n % 8)
        skip = "the problem is not a multiple of the tile";
      else if (t.threads > d.coopmat2.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize)
        skip = "more invocations than cooperativeMatrixWorkgroupScopeMaxWorkgroupSize";
      else if (staged && ((t.m * t.k / 8) % t.threads || (t.k * t.n / 8) % t.threads))
        skip = "the staged copy needs whole loads per invocation";
      else if (shared + reserved > d.properties.limits.maxComputeSharedMemorySize)
        skip = "shared memory";
      if (skip) {
        std::printf(", \"skipped\": \"%s\", \"shared\": %u}\n", skip, shared);
        std::fflush(stdout);
        continue;
      }
      const int32_t spec[4] = {int32_t(t.m), int32_t(t.n), int32_t(t.k), int32_t(t.threads)};
      VkSpecializationMapEntry entries[4];
      for (uint32_t i = 0; i < 4; ++i) entries[i] = {i, i * 4, 4};
      VkSpecializationInfo si{4, entries, sizeof spec, spec};
      VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
      ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
      ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
      ci.stage.module = module;
      ci.stage.pName = "main";
      ci.stage.pSpecializationInfo = &si;
      ci.layout = layout;
      VkPipeline pipeline;
      std::fprintf(stderr, "wgscope: pipeline %s\n", t.name().c_str());
      const VkResult r =
          vkCreateComputePipelines(d.device, VK_NULL_HANDLE, 1, &ci, nullptr, &pipeline);
      if (r != VK_SUCCESS) {
        std::printf(", \"error\": \"vkCreateComputePipelines: VkResult %d\"}\n", int(r));
        std::fflush(stdout);
        continue;
      }
      std::fprintf(stderr, "wgscope: check\n");
      small.poison();
      dispatch(d, commandPool, queries, pipeline, layout, small, t, 1);
      const double smallErr = small.error(0);
      std::printf(", \"check\": \"%ux%ux%u\", \"check_rel_l2\": %.3g", small.M, small.N, small.K,
                  smallErr);
      if (!(smallErr < 1e-2)) {
        std::printf(", \"error\": \"wrong result\"}\n");
        std::fflush(stdout);
        vkDestroyPipeline(d.device, pipeline, nullptr);
        continue;
      }
      if (!warmedUp) {  // GPU clocks rise over the first few hundred milliseconds of work
        for (double spent = 0; spent < 300;) {
          const std::vector<double> ms =
              dispatch(d, commandPool, queries, pipeline, layout, big, t, 20);
          for (double x : ms) spent += x;
          if (ms[0] > 1000) break;
        }
        warmedUp = true;
      }
      big.poison();
      std::vector<double> ms =
          dispatch(d, commandPool, queries, pipeline, layout, big, t, iterations + 5);
      ms.erase(ms.begin(), ms.begin() + 5);
      const double med = median(ms);
      std::printf(
          ", \"M\": %u, \"N\": %u, \"K\": %u, \"ms\": %.6f, \"min_ms\": %.6f, \"tflops\": %.2f, "
          "\"rel_l2\": %.3g, \"shared\": %u}\n",
          M, N, K, med, *std::min_element(ms.begin(), ms.end()),
          2.0 * M * N * K / (med * 1e-3) / 1e12, big.error(256), shared);
      std::fflush(stdout);
      vkDestroyPipeline(d.device, pipeline, nullptr);
    }
    vkDestroyShaderModule(d.device, module, nullptr);
  }
  vkDestroyQueryPool(d.device, queries, nullptr);
  vkDestroyCommandPool(d.device, commandPool, nullptr);
  vkDestroyDescriptorPool(d.device, pool, nullptr);
  vkDestroyPipelineLayout(d.device, layout, nullptr);
  vkDestroyDescriptorSetLayout(d.device, setLayout, nullptr);
  return 0;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string x; std::getline(in, x, sep);)
    if (!x.empty()) out.push_back(x);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc), positional;
  int iterations = 20;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--iterations" && i + 1 < args.size())
      iterations = std::clamp(std::atoi(args[++i].c_str()), 1, 500);
    else
      positional.push_back(args[i]);
  }
  try {
    if (positional.size() == 1 && positional[0] == "info") {
      Device d;
      d.create(false);
      return 0;
    }
    if (positional.size() == 6 && positional[0] == "gemm") {
      std::vector<std::pair<std::string, std::string>> shaders;
      for (const std::string& s : split(positional[1], ',')) {
        const size_t eq = s.find('=');
        if (eq == std::string::npos)
          throw std::runtime_error("shader '" + s + "' is not NAME=PATH");
        shaders.emplace_back(s.substr(0, eq), s.substr(eq + 1));
      }
      std::vector<Tile> tiles;
      for (const std::string& s : split(positional[2], ',')) {
        Tile t{};
        if (std::sscanf(s.c_str(), "%ux%ux%uw%u", &t.m, &t.n, &t.k, &t.threads) != 4 || !t.m ||
            !t.n || !t.k || !t.threads || t.threads % 32)
          throw std::runtime_error("tile '" + s + "' is not MxNxKwT (T a multiple of 32)");
        tiles.push_back(t);
      }
      return benchGemm(shaders, tiles, uint32_t(std::stoul(positional[3])),
                       uint32_t(std::stoul(positional[4])), uint32_t(std::stoul(positional[5])),
                       iterations);
    }
  } catch (const std::exception& e) {
    std::printf("{\"error\": \"%s\"}\n", e.what());
    std::fprintf(stderr, "vkcnn-bench-wgscope: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr,
               "usage: vkcnn-bench-wgscope info\n"
               "       vkcnn-bench-wgscope gemm NAME=SPIRV[,...] MxNxKwT[,...] M N K "
               "[--iterations N]\n");
  return 2;
}
