// doctest main for every vkcnn test binary: validation is forced on, and the process fails if any
// validation message was seen, even one that arrived outside a test case.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>

#include "test_support.h"

#if defined(__SANITIZE_ADDRESS__)
#include "platform/platform.h"

namespace {
// LeakSanitizer reports leaks when the process exits, long after the Vulkan loader unloaded the
// validation layer and the driver: their frames would read "<unknown module>" (or, worse, the
// name of whatever library was mapped at that address later), and the module suppressions in
// tests/sanitizers/lsan.supp could not match them. Keeping them mapped makes reports name them.
// Libraries that this machine lacks are skipped.
const bool pinnedVulkanModules = [] {
  for (const char* name : {"libVkLayer_khronos_validation.so", "libVkLayer_MESA_device_select.so",
                           "libvulkan_lvp.so", "libvulkan.so.1"})
    vkcnn::platform::keepLibraryLoaded(name);
  return true;
}();
}  // namespace
#endif

int main(int argc, char** argv) {
  setenv("VKCNN_VALIDATION", vkcnn::test::kValidation ? "1" : "0", 1);
  doctest::Context runner(argc, argv);
  int result = runner.run();
  if (runner.shouldExit()) return result;
  vkcnn::test::releaseContext();
  const uint64_t messages = vkcnn::test::validationMessages();
  if (messages) {
    std::fprintf(stderr, "FAILED: %llu validation message(s) were reported\n",
                 (unsigned long long)messages);
    return 1;
  }
  return result;
}
