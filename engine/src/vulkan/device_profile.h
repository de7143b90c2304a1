// The device profile (ContextOptions::deviceProfile, VKCNN_DEVICE_PROFILE): the limits and features
// a profile clamps the device's to, resolved once as a Context starts and applied once to its
// DeviceCapabilities (ContextImpl::queryCapabilities), from which DeviceFacts and every kernel
// read them. Nothing else in the engine knows of profiles; the messages of a limit add the
// profile's name (profileNote) so that a caller sees why a large device refuses a model.
#pragma once

#include <cstdint>
#include <string>

#include "vkcnn/context.h"
#include "vkcnn/export.h"

namespace vkcnn::detail {

struct Overrides;

// What a profile allows at most (0 for a limit it leaves as the device has it).
struct DeviceLimits {
  uint32_t maxImageArrayLayers = 0;
  uint32_t maxImageDimension2D = 0;
  uint32_t maxComputeSharedMemorySize = 0;
  uint32_t maxComputeWorkGroupInvocations = 0;
  uint32_t maxPerStageDescriptorStorageImages = 0;
  uint64_t maxStorageBufferRange = 0;
  uint32_t subgroupSize = 0;      // the size reported to the engine (0: the device's)
  bool float16Arithmetic = true;  // false: shaderFloat16 off (16-bit storage stays)
  bool cooperativeMatrix = true;  // false: no cooperative matrices, no matrix units
};

// A mobile-class device's: Vulkan's least for shared memory and storage images, the array layers
// and image sides of Mali and Adreno GPUs of a few years ago, Mali's subgroups.
inline constexpr DeviceLimits kMobileDeviceLimits{256,          4096, 16 * 1024, 256,  4,
                                                  128ull << 20, 16,   false,     false};

// `profile`'s limits (native: none).
VKCNN_API DeviceLimits deviceLimits(DeviceProfile profile);

// ContextOptions::deviceProfile, else VKCNN_DEVICE_PROFILE, else native; an unknown value of the
// variable is an invalidArgument error that names it.
VKCNN_API DeviceProfile resolveDeviceProfile(const ContextOptions& options,
                                             const Overrides& overrides);

// `c` clamped to `profile`'s limits (c.profile set).
VKCNN_API void clampCapabilities(DeviceCapabilities& c, DeviceProfile profile);

// " (device profile mobile)" where a profile clamps the limits, else "": for the messages that
// name a limit.
VKCNN_API std::string profileNote(const DeviceCapabilities& c);

}  // namespace vkcnn::detail
