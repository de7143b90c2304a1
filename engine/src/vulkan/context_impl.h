// The Context's state: instance and device function tables, the queue, the allocator, pipelines.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "memory/allocator.h"
#include "memory/device_buffer.h"
#include "memory/temporary_pool.h"
#include "memory/upload_batch.h"
#include "vkcnn/context.h"
#include "vkcnn/error.h"
#include "vulkan/device_facts.h"
#include "load_clock.h"
#include "vulkan/overrides.h"
#include "vulkan/pipelines.h"
#include "vulkan/volk_table.h"

namespace vkcnn::detail {

// Instance-level functions, loaded per instance (never through volk's globals).
struct InstanceTable {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  PFN_vkDestroyInstance vkDestroyInstance = nullptr;
  PFN_vkEnumeratePhysicalDevices vkEnumeratePhysicalDevices = nullptr;
  PFN_vkGetPhysicalDeviceProperties vkGetPhysicalDeviceProperties = nullptr;
  PFN_vkGetPhysicalDeviceProperties2 vkGetPhysicalDeviceProperties2 = nullptr;
  PFN_vkGetPhysicalDeviceFeatures2 vkGetPhysicalDeviceFeatures2 = nullptr;
  PFN_vkGetPhysicalDeviceQueueFamilyProperties vkGetPhysicalDeviceQueueFamilyProperties = nullptr;
  PFN_vkGetPhysicalDeviceMemoryProperties vkGetPhysicalDeviceMemoryProperties = nullptr;
  PFN_vkGetPhysicalDeviceFormatProperties vkGetPhysicalDeviceFormatProperties = nullptr;
  PFN_vkEnumerateDeviceExtensionProperties vkEnumerateDeviceExtensionProperties = nullptr;
  PFN_vkCreateDevice vkCreateDevice = nullptr;
  PFN_vkGetDeviceProcAddr vkGetDeviceProcAddr = nullptr;
  PFN_vkCreateDebugUtilsMessengerEXT vkCreateDebugUtilsMessengerEXT = nullptr;
  PFN_vkDestroyDebugUtilsMessengerEXT vkDestroyDebugUtilsMessengerEXT = nullptr;
  PFN_vkSetDebugUtilsObjectNameEXT vkSetDebugUtilsObjectNameEXT = nullptr;
  PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV
      vkGetPhysicalDeviceCooperativeMatrixPropertiesNV = nullptr;

  void load(PFN_vkGetInstanceProcAddr getInstanceProcAddr, VkInstance instance);
};

struct ConvolutionTuningState;  // kernels/convolution_tuning.cpp

class ContextImpl : public std::enable_shared_from_this<ContextImpl> {
 public:
  ContextImpl() = default;
  ~ContextImpl();
  ContextImpl(const ContextImpl&) = delete;
  ContextImpl& operator=(const ContextImpl&) = delete;

  void createOwned(const ContextOptions& options);
  void adopt(const AdoptedDevice& device, const ContextOptions& options);

  // A Context handed out before its device exists (a Session on its own Context imports while the
  // driver starts): startOwned reads the options (their errors are thrown here) and marks it
  // starting; finishOwned, on another thread, creates the device and marks it ready, or keeps its
  // error. Until then every accessor of device state waits (and rethrows that error); once
  // ready the check is one acquire load. loadClock, uploadBatches, logging, names, the loss flag
  // and the fence timeout never wait: they exist from birth. A Context made any other way is
  // ready from birth.
  void startOwned(const ContextOptions& options);
  void finishOwned(const ContextOptions& options) noexcept;
  void awaitStart() const {
    if (!ready_.load(std::memory_order_acquire)) awaitStartSlow();
  }
  // After awaitStart: how long finishOwned took, and how long other threads waited for it (from
  // the first wait to the end; 0 if none did).
  double startMs() const { return startMs_; }
  double startWaitMs() const { return startWaitMs_; }

  const VolkDeviceTable& vk() const { return awaitStart(), vk_; }
  const InstanceTable& vki() const { return awaitStart(), vki_; }
  VkDevice device() const { return awaitStart(), device_; }
  VkPhysicalDevice physicalDevice() const { return awaitStart(), physicalDevice_; }
  VkInstance instance() const { return awaitStart(), instance_; }
  VkQueue queue() const { return awaitStart(), queue_; }
  uint32_t queueFamilyIndex() const { return awaitStart(), queueFamilyIndex_; }
  const DeviceCapabilities& capabilities() const { return awaitStart(), capabilities_; }
  // What the engine's choices know of the device (device_facts.h).
  const DeviceFacts& facts() const { return awaitStart(), facts_; }
  // The VKCNN_* variables as they were when this Context started (overrides.h); exist from birth.
  const Overrides& overrides() const { return overrides_; }
  // Test hook (overrides.h, setChoiceOverrides): only while no other thread encodes.
  void setChoiceOverrides(const ChoiceOverrides& choice) { overrides_.choice = choice; }
  void setFusionOverrides(const Overrides& fusion) {
    overrides_.fuseSilu = fusion.fuseSilu;
    overrides_.fuseSourceActivation = fusion.fuseSourceActivation;
    overrides_.fuseSqueezeExcitation = fusion.fuseSqueezeExcitation;
    overrides_.squeezeExcitationMaxWeights = fusion.squeezeExcitationMaxWeights;
  }
  const VkPhysicalDeviceMemoryProperties& memoryProperties() const {
    return awaitStart(), memoryProperties_;
  }
  DeviceMemoryAllocator& allocator() { return awaitStart(), *allocator_; }
  const DeviceMemoryAllocator& allocator() const { return awaitStart(), *allocator_; }
  PipelineRegistry& pipelines() { return awaitStart(), *pipelines_; }
  TemporaryBlockCache& temporaryBlocks() { return awaitStart(), *temporaryBlocks_; }
  StagingPool& staging() { return awaitStart(), *staging_; }
  // Time per load phase (load_clock.h).
  LoadClock& loadClock() { return loadClock_; }
  // The open UploadBatches (upload_batch.h).
  UploadBatchRegistry& uploadBatches() { return uploadBatches_; }
  // A small storage buffer bound where a kernel's optional buffer is absent.
  const std::shared_ptr<class DeviceBuffer>& emptyBuffer();
  void waitIdle();
  VkSampler nearestSampler() const { return awaitStart(), sampler_; }

  // Throws an Error for a failed call; device loss becomes sticky.
  void check(VkResult result, const char* what);
  void throwIfLost() const;
  void markLost(const std::string& why);
  bool lost() const { return lost_; }
  // Call before destroying or freeing anything the GPU may use. A no-op unless the device was
  // declared lost: after a fence timeout the GPU may still run the work that timed out, and
  // freeing its memory, images or command buffers under it corrupts memory. So the first call
  // after the loss waits for the device to go idle (on a truly hung GPU the driver's own hang
  // detection ends that wait with VK_ERROR_DEVICE_LOST); later calls return at once.
  void settleAfterLoss();

  // Gives a debug name to a Vulkan object (no-op without VK_EXT_debug_utils).
  void setName(VkObjectType type, uint64_t handle, const std::string& name) const;
  template <typename Handle>
  void setName(VkObjectType type, Handle handle, const std::string& name) const {
    setName(type, reinterpret_cast<uint64_t>(handle), name);
  }

  void log(LogSeverity severity, std::string_view message);
  void setLogCallback(LogCallback callback);
  uint64_t validationMessageCount() const { return validationMessages_.load(); }

  // Records commands with `record`, submits them to the queue and waits (host transfers and
  // one-time initialisation).
  void submitAndWait(const std::function<void(VkCommandBuffer)>& record, const char* what);
  // Submits a command buffer recorded elsewhere, signalling `fence`; serialised with other submits.
  void submit(VkCommandBuffer commandBuffer, VkFence fence, const char* what);
  // Waits for a fence with vkcnn's timeout; a timeout or device loss is sticky.
  void waitForFence(VkFence fence, const char* what);
  void setFenceTimeoutMs(uint64_t ms) { fenceTimeoutNs_ = ms * 1000000ull; }
  uint32_t waitSpinMicroseconds() {
    awaitStart();
    return uint32_t(waitSpinNs_ / 1000);
  }
  void setWaitSpinMicroseconds(uint32_t us) {
    awaitStart();
    waitSpinNs_ = uint64_t(us) * 1000ull;
  }

  std::string uniqueName(const std::string& prefix);

  // Choice by measurement for convolutions (kernels/convolution_tuning.cpp): made and its file
  // read on first use, under this mutex.
  std::mutex convolutionTuningMutex;
  std::shared_ptr<ConvolutionTuningState> convolutionTuning;
  bool tuneConvolutions = false;  // ContextOptions::tuneConvolutions, resolved
  bool winograd = true;           // ContextOptions::winograd, resolved

 private:
  void loadDevice(PFN_vkGetDeviceProcAddr getDeviceProcAddr);
  // The cooperative-matrix shapes the device offers into facts_ (device_facts.cpp), and whether
  // the one the matrix-unit convolutions use is among them.
  void queryMatrixShapes();
  bool hasMatrixShape() const;
  void queryCapabilities(bool adopted, bool matrixUnits,
                         const VkPhysicalDeviceVulkan11Features* f11,
                         const VkPhysicalDeviceVulkan12Features* f12, bool extendedStorageFormats);
  void resolveWaitSpin();  // waitSpinNs_ for the device (queryCapabilities)
  void createCommonObjects();
  void createDevice(const ContextOptions& options);
  void awaitStartSlow() const;
  void readOptions(const ContextOptions& options);
  void settleLocked();  // settleAfterLoss with queueMutex_ held

  void* loaderLibrary_ = nullptr;
  InstanceTable vki_;
  VolkDeviceTable vk_{};
  VkInstance instance_ = VK_NULL_HANDLE;
  VkPhysicalDevice physicalDevice_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queueFamilyIndex_ = 0;
  bool ownsInstance_ = false;
  bool ownsDevice_ = false;
  bool debugUtils_ = false;
  bool wantMatrixUnits_ = true;
  // ContextOptions::deviceProfile, resolved (device_profile.h): queryCapabilities clamps to it.
  DeviceProfile profile_ = DeviceProfile::native;
  std::optional<uint64_t> memoryBlockSize_;
  uint64_t memoryBudget_ = 0;
  DeviceMemoryCallbacks memoryCallbacks_;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  DeviceCapabilities capabilities_;
  DeviceFacts facts_;
  Overrides overrides_;
  VkPhysicalDeviceMemoryProperties memoryProperties_{};
  std::unique_ptr<DeviceMemoryAllocator> allocator_;
  std::unique_ptr<PipelineRegistry> pipelines_;
  double pipelineCacheMs_ = 0;  // reading the pipeline cache file (createCommonObjects)
  std::unique_ptr<TemporaryBlockCache> temporaryBlocks_;
  std::unique_ptr<StagingPool> staging_;
  LoadClock loadClock_;
  UploadBatchRegistry uploadBatches_;
  std::mutex emptyBufferMutex_;
  std::shared_ptr<class DeviceBuffer> emptyBuffer_;
  VkSampler sampler_ = VK_NULL_HANDLE;

  // Guards the queue (every submission, vkDeviceWaitIdle) and transferPool_ (its command buffers
  // are allocated, recorded and freed under it; waits happen outside it).
  std::mutex queueMutex_;
  VkCommandPool transferPool_ = VK_NULL_HANDLE;
  std::atomic<uint64_t> fenceTimeoutNs_{0};
  // ContextOptions::waitSpinMicroseconds or VKCNN_WAIT_SPIN_US; waitSpinNs_ resolves it for the
  // device (queryCapabilities).
  std::optional<uint64_t> waitSpinMicroseconds_;
  std::atomic<uint64_t> waitSpinNs_{0};
  bool settled_ = false;  // guarded by queueMutex_

  // The start (startOwned/finishOwned). ready_ is released after everything createDevice writes.
  std::atomic<bool> ready_{true};
  mutable std::mutex startMutex_;  // guards the members below it up to the next blank line
  mutable std::condition_variable startDone_;
  bool started_ = true;
  std::exception_ptr startError_;
  std::thread::id startThread_;
  mutable std::optional<std::chrono::steady_clock::time_point> firstWait_;
  double startMs_ = 0, startWaitMs_ = 0;

  mutable std::mutex logMutex_;
  LogCallback logCallback_;
  std::atomic<uint64_t> validationMessages_{0};
  std::atomic<uint64_t> nameCounter_{0};
  mutable std::mutex lostMutex_;
  std::string lostReason_;
  std::atomic<bool> lost_{false};

  friend VkBool32 debugMessengerCallback(VkDebugUtilsMessageSeverityFlagBitsEXT,
                                         VkDebugUtilsMessageTypeFlagsEXT,
                                         const VkDebugUtilsMessengerCallbackDataEXT*, void*);
};

std::string vkResultName(VkResult result);
DeviceType toDeviceType(VkPhysicalDeviceType type);
bool hasExtension(const std::vector<VkExtensionProperties>& list, const char* name);

}  // namespace vkcnn::detail
