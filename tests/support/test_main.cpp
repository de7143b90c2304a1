// doctest main for every vkcnn test binary: validation is forced on, and the process fails if any
// validation message was seen, even one that arrived outside a test case. With
// --vkcnn-expect-profile=mobile (the mobile_* ctest entries, which set VKCNN_DEVICE_PROFILE) it
// also fails unless the shared Context really ran under the mobile device profile.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

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

namespace {

// Whether the shared Context is clamped to the mobile profile (DeviceProfile::mobile's limits).
bool mobileProfileInForce() {
  const vkcnn::DeviceCapabilities& c = vkcnn::test::context().capabilities();
  const bool clamped = c.profile == vkcnn::DeviceProfile::mobile && c.maxImageArrayLayers <= 256 &&
                       c.maxComputeSharedMemorySize <= 16384 && !c.shaderFloat16 &&
                       !c.matrixUnits && c.maxPerStageDescriptorStorageImages <= 4;
  if (!clamped)
    std::fprintf(stderr, "FAILED: --vkcnn-expect-profile=mobile, but the Context's profile is %s\n",
                 vkcnn::toString(c.profile));
  return clamped;
}

}  // namespace

int main(int argc, char** argv) {
  setenv("VKCNN_VALIDATION", vkcnn::test::kValidation ? "1" : "0", 1);
  // Our own option, taken out before doctest reads the rest.
  bool expectMobile = false;
  std::vector<char*> arguments;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--vkcnn-expect-profile=mobile") == 0)
      expectMobile = true;
    else
      arguments.push_back(argv[i]);
  }
  doctest::Context runner(int(arguments.size()), arguments.data());
  int result = runner.run();
  if (runner.shouldExit()) return result;
  if (expectMobile && !mobileProfileInForce()) result = 1;
  vkcnn::test::releaseContext();
  const uint64_t messages = vkcnn::test::validationMessages();
  if (messages) {
    std::fprintf(stderr, "FAILED: %llu validation message(s) were reported\n",
                 (unsigned long long)messages);
    return 1;
  }
  return result;
}
