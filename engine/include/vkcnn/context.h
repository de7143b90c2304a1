// Context: one Vulkan device as vkcnn sees it. Either vkcnn creates the instance and device, or it
// adopts an application's (games embed the engine on their own VkDevice). All Vulkan calls go
// through tables held here, never through globals, so several Contexts live side by side.
//
// Thread safety (tests/test_threads.cpp checks it under the validation layer):
// - A Context may be used from several threads at once: creating and destroying CommandBuffers,
//   Images, TemporaryImages and kernels, committing and waiting, host transfers (writeBytes,
//   readBytes), memoryStatistics, trimTemporaryMemory, setLogCallback and waitIdle. vkcnn
//   serialises its own queue submissions, and its allocator, temporary-block cache, staging-buffer
//   pool, pipeline registry and name counter are locked or atomic. Several Contexts live side by
//   side.
// - Each CommandBuffer, and every TemporaryImage made in it, belongs to one thread at a time (the
//   one encoding into it, committing it or waiting for it).
// - A kernel object (Neuron, ...) is used by one thread at a time: encode changes no shared state,
//   but its public geometry fields (offset, clipRect, ...) are plain members.
// - An Image may be read by several threads at once (as a kernel source, or with readBytes); a
//   thread that writes it (writeBytes, a kernel destination, setLabel) needs it to itself, and the
//   application orders the write before other threads' reads (e.g. waitUntilCompleted first).
// - The log callback may be called from any thread, including the validation layer's and the
//   driver's; calls are serialised. It must not call back into vkcnn.
// - A lost device (ErrorCode::deviceLost) is sticky for the Context and seen by every thread.
// - Older Vulkan loaders (Debian 12's 1.3.239) crash when an object is named with debug utils while
//   another thread creates or destroys an instance or device; vkcnn serialises its own Contexts'
//   naming, creation and destruction, but not an application's own instances and devices made on
//   other threads while a vkcnn Context with validation or debug utils is in use.
#pragma once

#include <vulkan/vulkan_core.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vkcnn/export.h"

namespace vkcnn {

namespace detail {
class ContextImpl;
}

// How much a log message matters (the validation layer's severities, and vkcnn's own).
enum class LogSeverity {
  verbose,  // detail for debugging
  info,     // what happened, nothing wrong
  warning,  // likely a problem (validation: a best-practice or a suspicious use)
  error,    // a failure (validation: a broken rule)
};

// Receives validation-layer messages (when validation is on) and vkcnn's own diagnostics.
using LogCallback = std::function<void(LogSeverity severity, std::string_view message)>;

// VkPhysicalDeviceType.
enum class DeviceType {
  other,          // none of these
  integratedGpu,  // a GPU sharing the host's memory
  discreteGpu,    // a GPU of its own memory
  virtualGpu,     // a GPU of a virtual machine
  cpu,            // a Vulkan implementation on the CPU (lavapipe, SwiftShader)
};

// What a Context believes its device offers (ContextOptions::deviceProfile).
enum class DeviceProfile {
  native,  // the device's own limits and features
  // A mobile-class device (Mali, Adreno, PowerVR class): at most 256 array layers and 4096 pixels
  // a side an image, 16 KiB of shared memory and 256 invocations a workgroup, 4 storage images a
  // shader stage, 128 MiB a storage buffer, 16-bit storage without float16 arithmetic, no
  // cooperative matrices, subgroups of 16. What the engine reads of the device is clamped to
  // these (DeviceCapabilities shows the clamped view) and shaderFloat16 is not enabled, so that a
  // desktop GPU or lavapipe checks, under validation, that a model and every kernel it chooses
  // fit such a device. Never run on a real phone (docs/building-and-platforms.md).
  mobile,
};
// "native" or "mobile".
VKCNN_API const char* toString(DeviceProfile profile);

// Where an application hands out device memory itself (an engine with its own memory manager or
// budget). vkcnn calls `allocate` instead of vkAllocateMemory and `free` instead of vkFreeMemory,
// from any thread, never concurrently (calls are serialised by the Context). `allocate` gets the
// size and memory type vkcnn chose and returns VK_SUCCESS with *memory set, or an error code
// (vkcnn then reports ErrorCode::outOfMemory). The memory must be unmapped and used by nothing
// else while vkcnn holds it; vkcnn maps host-visible memory itself and unmaps it before `free`.
struct DeviceMemoryCallbacks {
  // Instead of vkAllocateMemory(device, &info, nullptr, memory).
  std::function<VkResult(VkDevice device, const VkMemoryAllocateInfo& info, VkDeviceMemory* memory)>
      allocate;
  // Instead of vkFreeMemory, for memory `allocate` gave (its size and type again).
  std::function<void(VkDevice device, VkDeviceMemory memory, VkDeviceSize size,
                     uint32_t memoryTypeIndex)>
      free;
};

// How a Context chooses and sets up its device (each unset option falls back to its environment
// variable, then a default).
struct ContextOptions {
  // Physical device by index or by a substring of its name; empty: the VKCNN_DEVICE environment
  // variable, else the first discrete GPU, then integrated GPU, then CPU (lavapipe).
  std::string device;
  // VK_LAYER_KHRONOS_validation with synchronization validation; unset: VKCNN_VALIDATION=1.
  std::optional<bool> validation;
  // Where messages go; unset: standard error.
  LogCallback log;
  std::string applicationName = "vkcnn";  // VkApplicationInfo::pApplicationName
  // How long a wait for the GPU may take before the device is considered lost (a sticky
  // ErrorCode::deviceLost); unset: the VKCNN_FENCE_TIMEOUT_MS environment variable, else 300000.
  std::optional<uint32_t> fenceTimeoutMs;
  // How long a wait for the GPU (waitUntilCompleted, Session::run, transfers) polls the fence
  // before it blocks in vkWaitForFences, in microseconds: a blocked thread wakes tens of
  // microseconds after the GPU finishes, a polling one at once, for a core's time while it polls.
  // 0 blocks at once. Unset: the VKCNN_WAIT_SPIN_US environment variable, else 2000 on GPUs and 0
  // on CPU devices (lavapipe), where polling would take a core from the device itself.
  std::optional<uint32_t> waitSpinMicroseconds;
  // Dense convolutions into float16 images run on the matrix units (VK_NV_cooperative_matrix,
  // float16 operands, float32 accumulation) where the device has them; false keeps them on the
  // portable shaders (which also read the weights in float32). Unset: true unless the
  // VKCNN_NO_MATRIX_UNITS environment variable is 1.
  std::optional<bool> matrixUnits;
  // Convolution choice by measurement at first encode (vkcnn/convolution_tuning.h): a convolution
  // shape with no entry in the tuning file has its candidate configurations timed once, on
  // images of its own, when it is first encoded (a Graph: its first encode after compile), and
  // the fastest is written to the file. Costs up to a few seconds per new shape on a GPU; later
  // runs read the file. Unset: the VKCNN_TUNE environment variable (1: on), else off.
  std::optional<bool> tuneConvolutions;
  // Winograd for 3x3 stride-1 convolutions: F(4x4,3x3) on the portable path (float32, and devices
  // without matrix units), about 2x faster on large layers, and F(2x2,3x3) in float16 on the
  // matrix units, 1.2-1.8x on layers of 256 channels and more; for transformed weights kept beside
  // the others (4x the 3x3 weights' memory, or 16/9 in float16), made when a kernel is created.
  // false makes none and runs those layers on the GEMM tiles. Unset: true unless the
  // VKCNN_NO_WINOGRAD environment variable is 1.
  std::optional<bool> winograd;
  // What the engine believes the device offers: DeviceProfile::mobile clamps the device's limits
  // and features to a mobile-class device's (see DeviceProfile). Unset: the VKCNN_DEVICE_PROFILE
  // environment variable (native or mobile; anything else is an invalidArgument error), else
  // native.
  std::optional<DeviceProfile> deviceProfile;

  // Device memory. Images and buffers under half a block share VkDeviceMemory blocks; the first
  // block of a memory type is 1/64 of the block size (at least 256 KiB), and each new one doubles
  // what the type holds, up to this size, so a small network costs little and a large one needs
  // few memory objects. Unset: sized to the device, 1/64 of its largest device-local heap rounded
  // down to a power of two, between 4 MiB and 256 MiB. Below 64 KiB is an invalidArgument error.
  std::optional<uint64_t> memoryBlockSize;
  // The most device memory the Context may hold at once, in bytes (every VkDeviceMemory it
  // allocates or takes from memoryCallbacks, kept blocks and caches included); 0: no budget. A
  // request beyond it first frees the empty shared blocks and cached temporary-pool blocks, then
  // fails with ErrorCode::outOfMemory naming the budget.
  uint64_t memoryBudget = 0;
  // Both set: device memory comes from the application; neither: from vkAllocateMemory. One
  // without the other is an invalidArgument error.
  DeviceMemoryCallbacks memoryCallbacks;
};

// An application's own Vulkan objects, adopted as they are. vkcnn never destroys them. The
// application keeps them alive for the Context's lifetime and must not use `queue` from another
// thread while vkcnn submits to it (vkcnn serialises its own submissions).
struct AdoptedDevice {
  // The loader entry point vkcnn loads every other function through (volk).
  PFN_vkGetInstanceProcAddr getInstanceProcAddr = nullptr;
  VkInstance instance = VK_NULL_HANDLE;              // of the application
  VkPhysicalDevice physicalDevice = VK_NULL_HANDLE;  // the device is on
  VkDevice device = VK_NULL_HANDLE;                  // of the application
  uint32_t queueFamilyIndex = 0;                     // of `queue`, with compute
  VkQueue queue = VK_NULL_HANDLE;                    // where vkcnn submits
  // The device's enabled Vulkan 1.1/1.2 features, if the application enabled any vkcnn can use
  // (16-bit storage, shaderFloat16, non-uniform indexing of sampled and storage image arrays);
  // null: vkcnn assumes only core 1.0 features.
  const VkPhysicalDeviceVulkan11Features* enabledVulkan11Features = nullptr;
  const VkPhysicalDeviceVulkan12Features* enabledVulkan12Features = nullptr;
  // Whether VK_EXT_debug_utils is enabled on the instance (for object names).
  bool debugUtilsEnabled = false;
  // Whether VK_NV_cooperative_matrix is enabled on the device with its cooperativeMatrix feature
  // (and shaderFloat16, storageBuffer16BitAccess and vulkanMemoryModel above): vkcnn then uses
  // the matrix units.
  bool cooperativeMatrixNVEnabled = false;
  // The device's enabled core features (VkDeviceCreateInfo::pEnabledFeatures, or
  // VkPhysicalDeviceFeatures2::features); vkcnn uses shaderStorageImageExtendedFormats, with which
  // float16 images are written as their bits (DeviceCapabilities::float16BitStores). null: none.
  const VkPhysicalDeviceFeatures* enabledFeatures = nullptr;
};

// What the Context's device is and offers (Context::capabilities()), as vkcnn set it up.
struct DeviceCapabilities {
  std::string deviceName;                     // VkPhysicalDeviceProperties::deviceName
  std::string driverName;                     // VkPhysicalDeviceDriverProperties::driverName
  DeviceType deviceType = DeviceType::other;  // VkPhysicalDeviceProperties::deviceType
  uint32_t vendorId = 0;                      // PCI vendor (0x10de NVIDIA, 0x1002 AMD, ...)
  uint32_t deviceId = 0;                      // the vendor's device number
  uint32_t apiVersion = 0;                    // VK_MAKE_API_VERSION of the device
  uint32_t driverVersion = 0;                 // in the vendor's encoding
  bool shaderFloat16 = false;                 // enabled on the device
  bool storage16Bit = false;                  // storageBuffer16BitAccess enabled on the device
  // shaderSampledImageArrayNonUniformIndexing and shaderStorageImageArrayNonUniformIndexing
  // enabled on the device: a batch the layer limit splits into pieces may then run a matrix-unit
  // convolution in one dispatch over all pieces.
  bool imageArrayNonUniformIndexing = false;
  uint32_t subgroupSize = 0;
  uint32_t maxImageArrayLayers = 0;
  uint32_t maxImageDimension2D = 0;
  uint32_t maxPerStageDescriptorStorageImages = 0;
  uint32_t maxComputeSharedMemorySize = 0;
  uint32_t maxComputeWorkGroupInvocations = 0;
  uint64_t maxStorageBufferRange = 0;  // bytes a storage buffer binding may span
  // The profile the limits above are clamped to (ContextOptions::deviceProfile).
  DeviceProfile profile = DeviceProfile::native;
  bool cooperativeMatrix = false;  // VK_KHR_cooperative_matrix or VK_NV_cooperative_matrix exposed
  // vkcnn's convolutions use the matrix units: VK_NV_cooperative_matrix enabled, with 16x16x16
  // float16 x float16 + float32 subgroup matrices, float16 arithmetic, 16-bit storage, the
  // Vulkan memory model and 48 KiB of shared memory a workgroup (what their tiles take).
  bool matrixUnits = false;
  // Streaming multiprocessors (VK_NV_shader_sm_builtins' shaderSMCount) where the device tells;
  // 0: unknown. The convolution's tile choice sizes its waves by it.
  uint32_t multiprocessorCount = 0;
  bool pushDescriptors = false;  // VK_KHR_push_descriptor exposed
  // Kernels write float16 images as their bits, converted by packHalf2x16, through a rg32ui view
  // (vkcnn's float16 images are then created mutable-format): the hardware rounds to nearest
  // even, where a float stored to a rgba16f view is converted by truncation on some drivers and
  // the shaders round in integer arithmetic first. Only on drivers whose packHalf2x16 is known to
  // round to nearest even (NVIDIA's, lavapipe), with shaderStorageImageExtendedFormats enabled
  // (vkcnn's own devices; adopted ones that say so in AdoptedDevice::enabledFeatures). Wrapped
  // application images are written as floats.
  bool float16BitStores = false;
  float timestampPeriodNs = 0;
  bool validationEnabled = false;
  bool adopted = false;
};

// The Context's device memory now (Context::memoryStatistics()).
struct MemoryStatistics {
  uint64_t deviceBytesAllocated = 0;  // all VkDeviceMemory vkcnn holds on this Context
  uint32_t memoryObjects = 0;         // how many VkDeviceMemory objects that is
  uint32_t pipelines = 0;             // compute pipelines created so far
  // Device memory handed out now (images, buffers, weight and staging buffers, temporary-pool
  // blocks, including blocks and staging buffers kept for later use), whether or not it sits inside
  // a larger VkDeviceMemory block that stays allocated for reuse; back to its baseline once
  // everything made since is gone and trimTemporaryMemory() ran.
  uint32_t liveAllocations = 0;
  uint64_t deviceBytesInUse = 0;
  // Device-memory allocation requests since the Context was created (failed ones included); what
  // injectAllocationFailure counts.
  uint64_t allocationRequests = 0;
  // The most deviceBytesAllocated has been since the Context was created.
  uint64_t peakDeviceBytesAllocated = 0;
  // Of deviceBytesAllocated, what is only kept for reuse (temporary-pool blocks no command buffer
  // holds, staging buffers no transfer holds, empty shared blocks): trimTemporaryMemory frees it.
  uint64_t deviceBytesCached = 0;
  uint64_t memoryBudget = 0;     // ContextOptions::memoryBudget (0: none)
  uint64_t memoryBlockSize = 0;  // the largest shared block, as chosen or set
};

// A device the Vulkan loader reports (Context::enumerateDevices()).
struct PhysicalDeviceInfo {
  uint32_t index = 0;                   // what ContextOptions::device takes as a number
  std::string name;                     // VkPhysicalDeviceProperties::deviceName
  DeviceType type = DeviceType::other;  // its kind
  uint32_t apiVersion = 0;              // the Vulkan version it supports
};

// "discrete GPU", "integrated GPU", "virtual GPU", "CPU" or "other".
VKCNN_API const char* toString(DeviceType type);

// A Vulkan device and queue with vkcnn's state (MTLDevice and its command queue): a handle, copies
// share it; the device goes when the last handle (and the last object made on it) does.
class VKCNN_API Context {
 public:
  // Creates an instance and a device as `options` say; a device that is not there, or validation
  // asked for without the layer, is an Error.
  explicit Context(const ContextOptions& options = {});
  // On the application's own instance, device and queue (see AdoptedDevice).
  static Context adopt(const AdoptedDevice& device, const ContextOptions& options = {});

  // Lists the physical devices the Vulkan loader reports (for choosing one).
  static std::vector<PhysicalDeviceInfo> enumerateDevices();

  // What the device is and offers.
  const DeviceCapabilities& capabilities() const;
  // Replaces ContextOptions::log.
  void setLogCallback(LogCallback callback);
  // Validation messages of severity warning or error seen so far.
  uint64_t validationMessageCount() const;
  MemoryStatistics memoryStatistics() const;
  // Frees the temporary-image memory kept for later command buffers, the staging buffers kept for
  // later host transfers and the empty shared blocks: every VkDeviceMemory that holds nothing in
  // use goes back (memoryStatistics().deviceBytesCached becomes 0). What is kept of temporary
  // memory is bounded: blocks in command buffers plus kept blocks stay within the most command
  // buffers have held at once since the last trim (the least recently returned blocks go first).
  void trimTemporaryMemory();

  // Compute pipelines persist in this file between runs (VKCNN_PIPELINE_CACHE_DIR, else
  // $XDG_CACHE_HOME/vkcnn or ~/.cache/vkcnn; VKCNN_PIPELINE_CACHE=0 turns it off: empty). It is
  // written when the Context is destroyed, or now by savePipelineCache(), and read back only if
  // its header matches this device, driver and cache UUID and its checksum holds.
  std::string pipelineCacheFile() const;
  bool pipelineCacheLoaded() const;
  void savePipelineCache() const;

  // The Vulkan objects behind it (an application's own where adopted), for interop.
  VkInstance vkInstance() const;
  VkPhysicalDevice vkPhysicalDevice() const;
  VkDevice vkDevice() const;
  VkQueue vkQueue() const;
  uint32_t queueFamilyIndex() const;

  // Blocks until the device is idle (vkcnn's own queue work included).
  void waitIdle() const;
  // Changes ContextOptions::fenceTimeoutMs for waits that start from now on (0: a wait fails
  // unless the GPU has already finished).
  void setFenceTimeoutMs(uint32_t milliseconds);
  // ContextOptions::waitSpinMicroseconds as resolved for this device, and a change of it for waits
  // that start from now on.
  uint32_t waitSpinMicroseconds() const;
  void setWaitSpinMicroseconds(uint32_t microseconds);

  // TEST HOOK, for vkcnn's fault-injection tests (tests/test_faults.cpp); applications have no use
  // for it. The `n`th device-memory allocation request from now on (1: the next one) fails with
  // ErrorCode::outOfMemory as if the device had run out: any image, weight buffer, host staging
  // buffer or temporary-pool block, whether or not it needed a new VkDeviceMemory. Requests of
  // all threads count; one injection fails one request. 0 disarms. See memoryStatistics()
  // .allocationRequests to count the requests a piece of work makes.
  void injectAllocationFailure(uint64_t n);

  // The implementation, for vkcnn's own objects (not a stable interface).
  const std::shared_ptr<detail::ContextImpl>& impl() const { return impl_; }
  explicit Context(std::shared_ptr<detail::ContextImpl> impl) : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<detail::ContextImpl> impl_;
};

}  // namespace vkcnn
