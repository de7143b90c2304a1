// The vkcnn command-line tool: info, run, bench, profile, inspect, ops (a file per subcommand, all
// on vkcnn::Session). Exit status: 0 done, 1 an error (the message names what was wrong), 2 a
// command line that does not make sense, 3 the validation layer (VKCNN_VALIDATION=1) reported
// something while the command ran otherwise fine.
#include <vkcnn/version.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <new>
#include <utility>

#include "cli.h"

#include "platform/platform.h"

namespace {

#if defined(__SANITIZE_ADDRESS__)
// As in tests/support/test_main.cpp: in the sanitizer build (where tests/test_cli.cpp runs this
// tool under the validation layer) LeakSanitizer reports at exit, after the loader unloaded the
// layer and the driver; keeping them mapped lets tests/sanitizers/lsan.supp name their frames.
const bool pinnedVulkanModules = [] {
  for (const char* name : {"libVkLayer_khronos_validation.so", "libVkLayer_MESA_device_select.so",
                           "libvulkan_lvp.so", "libvulkan.so.1"})
    vkcnn::platform::keepLibraryLoaded(name);
  return true;
}();
#endif

const char* kUsage =
    "usage: vkcnn <command> [options]\n"
    "\n"
    "commands:\n"
    "  info                       Vulkan devices, the chosen one, its features and limits\n"
    "  run MODEL.onnx --input F   run a model on a picture (PNG, JPEG), a .npy or raw float32 "
    ".bin\n"
    "  bench MODEL.onnx           time a model: wall and GPU time, dispatches, barriers, memory\n"
    "  profile MODEL.onnx         GPU time of every kernel of a model\n"
    "  tune MODEL.onnx            time each convolution shape's configurations, keep the best\n"
    "  inspect MODEL.onnx         inputs, outputs, operators (supported?), parameters, FLOPs\n"
    "  ops                        the ONNX operators vkcnn supports\n"
    "  compile MODEL.onnx -o M.vkcnn  the optimised model as a .vkcnn file, which the commands\n"
    "                             above take without ONNX (no device needed)\n"
    "\n"
    "'vkcnn COMMAND --help' describes each command's options; 'vkcnn --version' the version.\n"
    "VKCNN_VALIDATION=1 runs under the Vulkan validation layer: anything it reports makes the\n"
    "exit status 3.\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace vkcnn::cli;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version" || args[0] == "version") {
    std::printf("vkcnn %s\n", vkcnn::versionString());
    return 0;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  int status = 0;
  try {
    using Command = int (*)(const std::vector<std::string>&);
    static const std::pair<const char*, Command> commands[] = {
        {"info", info}, {"run", run},         {"bench", bench}, {"profile", profile},
        {"tune", tune}, {"inspect", inspect}, {"ops", ops},     {"compile", compile}};
    const auto* found = std::find_if(std::begin(commands), std::end(commands),
                                     [&](const auto& c) { return command == c.first; });
    if (found == std::end(commands)) {
      std::fprintf(stderr, "vkcnn: unknown command '%s' (try vkcnn --help)\n", command.c_str());
      return 2;
    }
    status = found->second(args);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "vkcnn %s: %s (try vkcnn %s --help)\n", command.c_str(), e.what(),
                 command.c_str());
    return 2;
  } catch (const vkcnn::Error& e) {
    // The library's messages start with "vkcnn: "; the tool names the command instead.
    const char* message = e.what();
    if (std::strncmp(message, "vkcnn: ", 7) == 0) message += 7;
    std::fprintf(stderr, "vkcnn %s: %s\n", command.c_str(), message);
    status = 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "vkcnn %s: out of host memory\n", command.c_str());
    status = 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vkcnn %s: %s\n", command.c_str(), e.what());
    status = 1;
  }
  // Counted until here: messages at Context destruction (leaks) included.
  if (const uint64_t messages = validationMessages()) {
    std::fprintf(stderr, "vkcnn %s: the validation layer reported %llu message%s\n",
                 command.c_str(), static_cast<unsigned long long>(messages),
                 messages == 1 ? "" : "s");
    if (status == 0) status = 3;
  }
  return status;
}
