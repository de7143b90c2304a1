// vkcnn info: the Vulkan devices, the chosen one, what vkcnn uses of it, whether validation is on,
// the facts the engine's choices read (vulkan/device_facts.h) and the VKCNN_* variables in force
// (vulkan/overrides.h).
#include <vkcnn/version.h>

#include <cstdio>

#include "cli.h"
#include "vulkan/device_facts.h"
#include "vulkan/overrides.h"

namespace vkcnn::cli {

int info(const std::vector<std::string>& rest) {
  Arguments args("info", rest,
                 {{"--device", OptionKind::value},
                  {"--device-profile", OptionKind::value},
                  {"--json", OptionKind::value}});
  if (args.has("--help")) {
    std::printf(
        "usage: vkcnn info [--device D] [--device-profile P] [--json FILE]\n\n"
        "Lists the Vulkan devices and what vkcnn sees of the chosen one: features, limits,\n"
        "whether the validation layer is on (VKCNN_VALIDATION=1), the pipeline cache, the facts\n"
        "the convolution's choice reads, and the VKCNN_* environment variables in force.\n\n"
        "  --device D          device index or name substring (default: VKCNN_DEVICE, else the\n"
        "                      first discrete GPU, then integrated, then CPU)\n"
        "  --device-profile P  native or mobile: the limits as a mobile-class device's\n"
        "                      (default: VKCNN_DEVICE_PROFILE, else native)\n"
        "  --json FILE         the same as JSON (- for standard output)\n");
    return 0;
  }
  if (!args.positional().empty()) throw UsageError("info takes no model");
  const std::string json = args.get("--json");
  if (!json.empty()) checkWritable(json, "--json");
  const auto devices = Context::enumerateDevices();
  Context context = makeContext(args);
  const auto& c = context.capabilities();
  const std::string cache = context.pipelineCacheFile();
  const MemoryStatistics memory = context.memoryStatistics();
  const auto facts = detail::describe(detail::deviceFacts(context));
  const std::vector<std::string>& set = detail::overrides(context).set;
  if (json.empty() || json != "-") {
    std::printf("vkcnn %s\n", vkcnn::versionString());
    std::printf("devices:\n");
    for (const auto& d : devices)
      std::printf("  %u: %s (%s, Vulkan %u.%u)\n", d.index, d.name.c_str(), toString(d.type),
                  VK_API_VERSION_MAJOR(d.apiVersion), VK_API_VERSION_MINOR(d.apiVersion));
    std::printf("chosen: %s (%s), driver %s, Vulkan %u.%u.%u\n", c.deviceName.c_str(),
                toString(c.deviceType), c.driverName.c_str(), VK_API_VERSION_MAJOR(c.apiVersion),
                VK_API_VERSION_MINOR(c.apiVersion), VK_API_VERSION_PATCH(c.apiVersion));
    std::printf("validation: %s\n", c.validationEnabled
                                        ? "on (VK_LAYER_KHRONOS_validation with synchronization)"
                                        : "off (VKCNN_VALIDATION=1 turns it on)");
    std::printf("features:\n");
    std::printf("  shaderFloat16            %s\n", c.shaderFloat16 ? "yes" : "no");
    std::printf("  16-bit storage           %s\n", c.storage16Bit ? "yes" : "no");
    std::printf("  cooperative matrix       %s\n", c.cooperativeMatrix ? "yes" : "no");
    std::printf("  matrix units in use      %s\n", c.matrixUnits ? "yes" : "no");
    std::printf("  push descriptors         %s\n", c.pushDescriptors ? "yes" : "no");
    std::printf("  image arrays, per-row    %s\n", c.imageArrayNonUniformIndexing ? "yes" : "no");
    std::printf("  float16 bit stores       %s\n", c.float16BitStores ? "yes" : "no");
    std::printf("limits: %s\n", c.profile == DeviceProfile::native
                                    ? "the device's"
                                    : "clamped to the mobile device profile");
    std::printf("  subgroup size            %u\n", c.subgroupSize);
    std::printf("  maxImageArrayLayers      %u\n", c.maxImageArrayLayers);
    std::printf("  maxImageDimension2D      %u\n", c.maxImageDimension2D);
    std::printf("  storage images / stage   %u\n", c.maxPerStageDescriptorStorageImages);
    std::printf("  shared memory            %u bytes\n", c.maxComputeSharedMemorySize);
    std::printf("  workgroup invocations    %u\n", c.maxComputeWorkGroupInvocations);
    std::printf("  storage buffer range     %llu bytes\n",
                static_cast<unsigned long long>(c.maxStorageBufferRange));
    std::printf("  timestamp period         %.3f ns\n", double(c.timestampPeriodNs));
    std::printf(
        "memory: shared blocks of %.1f MiB (sized to the device), %s;\n"
        "  %llu bytes of device memory in %u allocations (a network's weights and images\n"
        "  come on top: vkcnn bench prints them)\n",
        double(memory.memoryBlockSize) / 1048576.0,
        memory.memoryBudget
            ? ("a budget of " + std::to_string(memory.memoryBudget) + " bytes").c_str()
            : "no budget",
        static_cast<unsigned long long>(memory.deviceBytesAllocated), memory.memoryObjects);
    const uint32_t spin = context.waitSpinMicroseconds();
    if (spin)
      std::printf("waits: poll the fence for up to %u us, then block (VKCNN_WAIT_SPIN_US)\n", spin);
    else
      std::printf("waits: block at once (VKCNN_WAIT_SPIN_US sets a poll first)\n");
    std::printf("pipeline cache: %s%s\n", cache.empty() ? "off" : cache.c_str(),
                cache.empty() ? "" : (context.pipelineCacheLoaded() ? " (loaded)" : " (new)"));
    std::printf("device facts (what the convolution's choice reads):\n");
    for (const auto& [name, value] : facts)
      std::printf("  %-24s %s\n", name.c_str(), value.c_str());
    std::printf("environment overrides (VKCNN_*):%s\n", set.empty() ? " none set" : "");
    for (const std::string& s : set) std::printf("  %s\n", s.c_str());
  }
  if (!json.empty()) {
    std::string list = "[";
    for (const auto& d : devices)
      list += (list.size() > 1 ? ", " : "") +
              Json()
                  .add("index", d.index)
                  .add("name", d.name)
                  .add("type", toString(d.type))
                  .add("api_version_major", uint32_t(VK_API_VERSION_MAJOR(d.apiVersion)))
                  .add("api_version_minor", uint32_t(VK_API_VERSION_MINOR(d.apiVersion)))
                  .str();
    list += "]";
    Json j;
    j.add("version", vkcnn::versionString())
        .raw("devices", list)
        .add("device", c.deviceName)
        .add("device_type", toString(c.deviceType))
        .add("driver", c.driverName)
        .add("validation", c.validationEnabled)
        .add("shader_float16", c.shaderFloat16)
        .add("storage_16bit", c.storage16Bit)
        .add("cooperative_matrix", c.cooperativeMatrix)
        .add("matrix_units", c.matrixUnits)
        .add("push_descriptors", c.pushDescriptors)
        .add("wait_spin_us", context.waitSpinMicroseconds())
        .add("image_array_nonuniform_indexing", c.imageArrayNonUniformIndexing)
        .add("subgroup_size", c.subgroupSize)
        .add("max_image_array_layers", c.maxImageArrayLayers)
        .add("max_image_dimension_2d", c.maxImageDimension2D)
        .add("max_storage_images_per_stage", c.maxPerStageDescriptorStorageImages)
        .add("shared_memory_bytes", c.maxComputeSharedMemorySize)
        .add("max_workgroup_invocations", c.maxComputeWorkGroupInvocations)
        .add("max_storage_buffer_range", c.maxStorageBufferRange)
        .add("device_profile", toString(c.profile))
        .add("timestamp_period_ns", double(c.timestampPeriodNs))
        .add("device_bytes_allocated", memory.deviceBytesAllocated)
        .add("memory_objects", memory.memoryObjects)
        .add("memory_block_size", memory.memoryBlockSize)
        .add("memory_budget", memory.memoryBudget)
        .add("pipeline_cache", cache);
    std::string setList = "[";
    for (const std::string& s : set) setList += (setList.size() > 1 ? ", " : "") + Json::quote(s);
    // Several matrix shapes share a name: the facts are an array of [name, value] pairs.
    std::string factPairs = "[";
    for (const auto& [name, value] : facts)
      factPairs += (factPairs.size() > 1 ? ", " : "") + std::string("[") + Json::quote(name) +
                   ", " + Json::quote(value) + "]";
    j.raw("device_facts", factPairs + "]").raw("overrides", setList + "]");
    writeText(json, j.str() + "\n", "--json");
  }
  return 0;
}

}  // namespace vkcnn::cli
