// The device profile (device_profile.h): resolving it and clamping a device's capabilities.
#include "vulkan/device_profile.h"

#include <algorithm>

#include "vkcnn/error.h"
#include "vulkan/overrides.h"

namespace vkcnn {

const char* toString(DeviceProfile profile) {
  return profile == DeviceProfile::mobile ? "mobile" : "native";
}

}  // namespace vkcnn

namespace vkcnn::detail {

DeviceLimits deviceLimits(DeviceProfile profile) {
  return profile == DeviceProfile::mobile ? kMobileDeviceLimits : DeviceLimits{};
}

DeviceProfile resolveDeviceProfile(const ContextOptions& options, const Overrides& overrides) {
  if (options.deviceProfile) {
    const DeviceProfile p = *options.deviceProfile;
    if (p != DeviceProfile::native && p != DeviceProfile::mobile)
      throw Error(ErrorCode::invalidArgument, "ContextOptions::deviceProfile " +
                                                  std::to_string(int(p)) +
                                                  " is not a DeviceProfile (native or mobile)");
    return p;
  }
  const std::string& v = overrides.deviceProfile;
  if (v.empty() || v == "native") return DeviceProfile::native;
  if (v == "mobile") return DeviceProfile::mobile;
  throw Error(ErrorCode::invalidArgument,
              "VKCNN_DEVICE_PROFILE '" + v + "' is not a device profile (native or mobile)");
}

namespace {

template <typename T>
void clampTo(T& value, T limit) {
  if (limit) value = std::min(value, limit);
}

}  // namespace

void clampCapabilities(DeviceCapabilities& c, DeviceProfile profile) {
  c.profile = profile;
  const DeviceLimits l = deviceLimits(profile);
  clampTo(c.maxImageArrayLayers, l.maxImageArrayLayers);
  clampTo(c.maxImageDimension2D, l.maxImageDimension2D);
  clampTo(c.maxComputeSharedMemorySize, l.maxComputeSharedMemorySize);
  clampTo(c.maxComputeWorkGroupInvocations, l.maxComputeWorkGroupInvocations);
  clampTo(c.maxPerStageDescriptorStorageImages, l.maxPerStageDescriptorStorageImages);
  clampTo(c.maxStorageBufferRange, l.maxStorageBufferRange);
  if (l.subgroupSize) c.subgroupSize = l.subgroupSize;
  if (!l.float16Arithmetic) c.shaderFloat16 = false;
  if (!l.cooperativeMatrix) c.cooperativeMatrix = c.matrixUnits = false;
  // Counted for a device of the H200's kind; a phone's are unknown.
  if (profile == DeviceProfile::mobile) c.multiprocessorCount = 0;
}

std::string profileNote(const DeviceCapabilities& c) {
  return c.profile == DeviceProfile::native
             ? std::string()
             : std::string(" (device profile ") + toString(c.profile) + ")";
}

}  // namespace vkcnn::detail
