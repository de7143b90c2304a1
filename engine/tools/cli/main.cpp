// The vkcnn command-line tool. `vkcnn info` lists the Vulkan devices and what vkcnn sees of the
// chosen one; further subcommands (run, bench, profile) arrive with the graph and ONNX import.
#include <vkcnn/vkcnn.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

const char* kUsage =
    "usage: vkcnn <command> [options]\n"
    "\n"
    "commands:\n"
    "  info [--device D]   list Vulkan devices, the chosen one, its features and limits\n"
    "\n"
    "options:\n"
    "  --device D          device index or name substring (default: VKCNN_DEVICE, else the first\n"
    "                      discrete GPU, then integrated, then CPU)\n"
    "  --help              this text\n";

int info(const std::vector<std::string>& args) {
  vkcnn::ContextOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--help" || args[i] == "-h") {
      std::fputs("usage: vkcnn info [--device D]\n", stdout);
      return 0;
    } else if (args[i] == "--device" && i + 1 < args.size()) {
      options.device = args[++i];
    } else {
      std::fprintf(stderr, "vkcnn info: unknown option '%s' (try --help)\n", args[i].c_str());
      return 2;
    }
  }
  std::printf("devices:\n");
  for (const auto& d : vkcnn::Context::enumerateDevices())
    std::printf("  %u: %s (%s, Vulkan %u.%u)\n", d.index, d.name.c_str(), vkcnn::toString(d.type),
                VK_API_VERSION_MAJOR(d.apiVersion), VK_API_VERSION_MINOR(d.apiVersion));
  vkcnn::Context context(options);
  const auto& c = context.capabilities();
  std::printf("chosen: %s (%s), driver %s, Vulkan %u.%u.%u\n", c.deviceName.c_str(),
              vkcnn::toString(c.deviceType), c.driverName.c_str(),
              VK_API_VERSION_MAJOR(c.apiVersion), VK_API_VERSION_MINOR(c.apiVersion),
              VK_API_VERSION_PATCH(c.apiVersion));
  std::printf("features:\n");
  std::printf("  shaderFloat16            %s\n", c.shaderFloat16 ? "yes" : "no");
  std::printf("  16-bit storage           %s\n", c.storage16Bit ? "yes" : "no");
  std::printf("  cooperative matrix       %s\n", c.cooperativeMatrix ? "yes" : "no");
  std::printf("  push descriptors         %s\n", c.pushDescriptors ? "yes" : "no");
  std::printf("limits:\n");
  std::printf("  subgroup size            %u\n", c.subgroupSize);
  std::printf("  maxImageArrayLayers      %u\n", c.maxImageArrayLayers);
  std::printf("  maxImageDimension2D      %u\n", c.maxImageDimension2D);
  std::printf("  storage images / stage   %u\n", c.maxPerStageDescriptorStorageImages);
  std::printf("  shared memory            %u bytes\n", c.maxComputeSharedMemorySize);
  std::printf("  workgroup invocations    %u\n", c.maxComputeWorkGroupInvocations);
  std::printf("  timestamp period         %.3f ns\n", double(c.timestampPeriodNs));
  const std::string cache = context.pipelineCacheFile();
  std::printf("pipeline cache: %s\n", cache.empty() ? "off" : cache.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  try {
    if (command == "info") return info(args);
    std::fprintf(stderr, "vkcnn: unknown command '%s' (try vkcnn --help)\n", command.c_str());
    return 2;
  } catch (const vkcnn::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
