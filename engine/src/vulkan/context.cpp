#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <sstream>
#include <vector>

#include "convolution_tiles.h"
#include "memory/device_buffer.h"
#include "platform/platform.h"
#include "vulkan/context_impl.h"
#include "vulkan/context_start.h"
#include "vulkan/device_profile.h"

namespace vkcnn {
namespace detail {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";
// How long a fence wait polls before it blocks where neither ContextOptions::waitSpinMicroseconds
// nor VKCNN_WAIT_SPIN_US says: long enough for a batch-1 inference, whose resident time the
// blocked thread's wake-up made 7-15% longer on an H200 (bench/NOTES.md, 2026-11-28, session 33);
// short enough that a longer wait costs at most 2 ms of a core before it blocks. Not on
// CPU devices (lavapipe), where the polling thread would take a core from the device itself.
constexpr uint64_t kDefaultWaitSpinMicroseconds = 2000;

// The Vulkan loader (1.3.239 in Debian 12, and others before the fix upstream) answers
// vkSetDebugUtilsObjectNameEXT by walking its process-wide lists of instances and devices without
// a lock, while vkCreate/DestroyInstance and vkCreate/DestroyDevice change those lists: naming an
// object on one thread while another creates or destroys a Context crashed in the loader
// (tests/test_threads.cpp, two Contexts on two threads, under ASan). vkcnn's own Contexts
// therefore name objects under a shared lock and change the loader's lists under an exclusive
// one. An application that creates instances or devices on other threads itself is beyond this.
std::shared_mutex& loaderListMutex() {
  // Never destroyed: Contexts with static storage duration may outlive any static object.
  static auto* mutex = new std::shared_mutex;
  return *mutex;
}

// glvnd's libEGL, which NVIDIA's Vulkan driver loads, keeps per-thread state in a process-wide
// list and unlinks a thread's entry when that thread exits. The loader unloads the driver, and
// with it libEGL, when the last VkInstance is destroyed (it even loads and unloads the drivers
// around vkEnumerateInstanceExtensionProperties). A thread that had called into the driver and
// exited around then crashed in libEGL's thread teardown: tests/test_threads.cpp's two Contexts on
// two threads, in about one run in nine on the H100 (driver 580, glvnd 1.6), with or without the
// validation layer. So whatever the process had loaded when its first VkInstance was created (or
// when vkcnn first adopted an application's device) stays loaded until exit: one extra
// reference per library (platform::pinLoadedLibraries), never released. Process-wide, like the
// hazard. (It also keeps the driver's own leaks nameable for tests/sanitizers/lsan.supp where the
// application destroys its instance before exit: samples/embedding.)
void pinLoadedLibraries() {
  platform::pinLoadedLibraries();
}

uint64_t fenceTimeoutMs(const ContextOptions& options, const Overrides& overrides) {
  if (options.fenceTimeoutMs) return *options.fenceTimeoutMs;
  return overrides.fenceTimeoutMs.value_or(300000);
}

std::optional<uint64_t> waitSpinOption(const ContextOptions& options, const Overrides& overrides) {
  if (options.waitSpinMicroseconds) return *options.waitSpinMicroseconds;
  return overrides.waitSpinMicroseconds;
}

int typeRank(DeviceType type) {
  switch (type) {
    case DeviceType::discreteGpu:
      return 0;
    case DeviceType::integratedGpu:
      return 1;
    case DeviceType::virtualGpu:
      return 2;
    case DeviceType::cpu:
      return 3;
    default:
      return 4;
  }
}

// The system Vulkan loader, opened per Context (the system reference-counts it).
PFN_vkGetInstanceProcAddr openLoader(void** library) {
  return reinterpret_cast<PFN_vkGetInstanceProcAddr>(platform::openVulkanLoader(library));
}

struct LoaderInstance {
  void* library = nullptr;
  PFN_vkGetInstanceProcAddr gipa = nullptr;
  VkInstance instance = VK_NULL_HANDLE;
  InstanceTable vki;
  LoaderInstance() = default;
  LoaderInstance(const LoaderInstance&) = delete;
  ~LoaderInstance() {
    std::unique_lock lock(loaderListMutex());
    if (instance && vki.vkDestroyInstance) vki.vkDestroyInstance(instance, nullptr);
    platform::closeLibrary(library);
  }
};

std::vector<VkPhysicalDevice> physicalDevices(const InstanceTable& vki, VkInstance instance) {
  uint32_t count = 0;
  vki.vkEnumeratePhysicalDevices(instance, &count, nullptr);
  std::vector<VkPhysicalDevice> devices(count);
  vki.vkEnumeratePhysicalDevices(instance, &count, devices.data());
  devices.resize(count);
  return devices;
}

}  // namespace

DeviceType toDeviceType(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return DeviceType::integratedGpu;
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return DeviceType::discreteGpu;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return DeviceType::virtualGpu;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return DeviceType::cpu;
    default:
      return DeviceType::other;
  }
}

bool hasExtension(const std::vector<VkExtensionProperties>& list, const char* name) {
  return std::any_of(list.begin(), list.end(), [&](const VkExtensionProperties& e) {
    return std::strcmp(e.extensionName, name) == 0;
  });
}

std::string vkResultName(VkResult result) {
  switch (result) {
#define VKCNN_RESULT(r) \
  case r:               \
    return #r;
    VKCNN_RESULT(VK_SUCCESS)
    VKCNN_RESULT(VK_NOT_READY)
    VKCNN_RESULT(VK_TIMEOUT)
    VKCNN_RESULT(VK_INCOMPLETE)
    VKCNN_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
    VKCNN_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    VKCNN_RESULT(VK_ERROR_INITIALIZATION_FAILED)
    VKCNN_RESULT(VK_ERROR_DEVICE_LOST)
    VKCNN_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
    VKCNN_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
    VKCNN_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
    VKCNN_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
    VKCNN_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
    VKCNN_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
    VKCNN_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED)
    VKCNN_RESULT(VK_ERROR_FRAGMENTED_POOL)
    VKCNN_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
#undef VKCNN_RESULT
    default:
      return "VkResult(" + std::to_string(int(result)) + ")";
  }
}

void InstanceTable::load(PFN_vkGetInstanceProcAddr gipa, VkInstance instance) {
  vkGetInstanceProcAddr = gipa;
#define VKCNN_LOAD(name) name = reinterpret_cast<PFN_##name>(gipa(instance, #name))
  VKCNN_LOAD(vkDestroyInstance);
  VKCNN_LOAD(vkEnumeratePhysicalDevices);
  VKCNN_LOAD(vkGetPhysicalDeviceProperties);
  VKCNN_LOAD(vkGetPhysicalDeviceProperties2);
  VKCNN_LOAD(vkGetPhysicalDeviceFeatures2);
  VKCNN_LOAD(vkGetPhysicalDeviceQueueFamilyProperties);
  VKCNN_LOAD(vkGetPhysicalDeviceMemoryProperties);
  VKCNN_LOAD(vkGetPhysicalDeviceFormatProperties);
  VKCNN_LOAD(vkEnumerateDeviceExtensionProperties);
  VKCNN_LOAD(vkCreateDevice);
  VKCNN_LOAD(vkGetDeviceProcAddr);
  VKCNN_LOAD(vkCreateDebugUtilsMessengerEXT);
  VKCNN_LOAD(vkDestroyDebugUtilsMessengerEXT);
  VKCNN_LOAD(vkSetDebugUtilsObjectNameEXT);
  VKCNN_LOAD(vkGetPhysicalDeviceCooperativeMatrixPropertiesNV);
#undef VKCNN_LOAD
}

VkBool32 debugMessengerCallback(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                VkDebugUtilsMessageTypeFlagsEXT types,
                                const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  auto* context = static_cast<ContextImpl*>(user);
  LogSeverity level = LogSeverity::verbose;
  if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)
    level = LogSeverity::error;
  else if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT)
    level = LogSeverity::warning;
  else if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT)
    level = LogSeverity::info;
  const bool counted =
      level >= LogSeverity::warning && (types & (VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                                                 VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT));
  if (counted) context->validationMessages_++;
  std::string message = std::string(counted ? "validation: " : "vulkan: ") +
                        (data && data->pMessage ? data->pMessage : "(no message)");
  context->log(level, message);
  return VK_FALSE;
}

ContextImpl::~ContextImpl() {
  // Also after a loss: a fence timeout leaves the GPU running (see settleAfterLoss), and a really
  // lost device returns VK_ERROR_DEVICE_LOST here at once.
  if (device_ && vk_.vkDeviceWaitIdle) vk_.vkDeviceWaitIdle(device_);
  emptyBuffer_.reset();
  pipelines_.reset();
  temporaryBlocks_.reset();
  staging_.reset();
  if (device_) {
    if (transferPool_) vk_.vkDestroyCommandPool(device_, transferPool_, nullptr);
    if (sampler_) vk_.vkDestroySampler(device_, sampler_, nullptr);
  }
  allocator_.reset();
  std::unique_lock lock(loaderListMutex());
  if (ownsDevice_ && device_) vk_.vkDestroyDevice(device_, nullptr);
  if (messenger_) vki_.vkDestroyDebugUtilsMessengerEXT(instance_, messenger_, nullptr);
  if (ownsInstance_ && instance_) vki_.vkDestroyInstance(instance_, nullptr);
  lock.unlock();
  platform::closeLibrary(loaderLibrary_);
}

void ContextImpl::log(LogSeverity severity, std::string_view message) {
  std::lock_guard lock(logMutex_);
  if (logCallback_) {
    logCallback_(severity, message);
  } else if (severity >= LogSeverity::warning) {
    std::fprintf(stderr, "vkcnn: %.*s\n", int(message.size()), message.data());
  }
}

void ContextImpl::setLogCallback(LogCallback callback) {
  std::lock_guard lock(logMutex_);
  logCallback_ = std::move(callback);
}

void ContextImpl::throwIfLost() const {
  if (lost_) {
    std::lock_guard lock(lostMutex_);
    throw Error(ErrorCode::deviceLost,
                "the Vulkan device was lost earlier (" + lostReason_ + "); create a new Context");
  }
}

void ContextImpl::markLost(const std::string& why) {
  bool first = false;
  {
    std::lock_guard lock(lostMutex_);
    first = !lost_;
    if (first) lostReason_ = why;
    lost_ = true;
  }
  if (first)
    log(LogSeverity::error, "the device is lost (" + why +
                                "); every later use of this Context throws ErrorCode::deviceLost");
}

void ContextImpl::settleAfterLoss() {
  if (!lost_) return;
  std::lock_guard lock(queueMutex_);
  settleLocked();
}

void ContextImpl::settleLocked() {
  if (!lost_ || settled_) return;
  settled_ = true;
  // VK_ERROR_DEVICE_LOST is as good as VK_SUCCESS here: either way nothing runs any more.
  vk_.vkDeviceWaitIdle(device_);
}

void ContextImpl::readOptions(const ContextOptions& options) {
  // The environment once, as this Context starts.
  overrides_ = readOverrides();
  if (options.log) logCallback_ = options.log;
  fenceTimeoutNs_ = fenceTimeoutMs(options, overrides_) * 1000000ull;
  waitSpinMicroseconds_ = waitSpinOption(options, overrides_);
  profile_ = resolveDeviceProfile(options, overrides_);
  wantMatrixUnits_ = options.matrixUnits.value_or(!overrides_.noMatrixUnits) &&
                     deviceLimits(profile_).cooperativeMatrix;
  // The fused squeeze-excitation kernel's workgroup holds a block's 4096 channels (24 KiB): past
  // a profile's shared memory, the Graph leaves those blocks as their pooling, convolutions and
  // multiply. Known before the device (Graph::plan() reads it while the device starts).
  const uint32_t profileShared = deviceLimits(profile_).maxComputeSharedMemorySize;
  if (profileShared &&
      shaderModule(ShaderId::squeeze_excitation, ShaderVariant::f32).sharedMemorySize >
          profileShared)
    overrides_.fuseSqueezeExcitation = false;
  tuneConvolutions = options.tuneConvolutions.value_or(overrides_.tune);
  winograd = options.winograd.value_or(!overrides_.noWinograd);
  if (options.memoryBlockSize &&
      *options.memoryBlockSize < detail::DeviceMemoryAllocator::kMinimumBlockSize)
    throw Error(ErrorCode::invalidArgument,
                "ContextOptions::memoryBlockSize " + std::to_string(*options.memoryBlockSize) +
                    " is below the smallest block, " +
                    std::to_string(detail::DeviceMemoryAllocator::kMinimumBlockSize) + " bytes");
  if (bool(options.memoryCallbacks.allocate) != bool(options.memoryCallbacks.free))
    throw Error(ErrorCode::invalidArgument,
                std::string("ContextOptions::memoryCallbacks: ") +
                    (options.memoryCallbacks.allocate ? "allocate" : "free") + " is set without " +
                    (options.memoryCallbacks.allocate ? "free" : "allocate"));
  memoryBlockSize_ = options.memoryBlockSize;
  memoryBudget_ = options.memoryBudget;
  memoryCallbacks_ = options.memoryCallbacks;
}

void ContextImpl::check(VkResult result, const char* what) {
  if (result == VK_SUCCESS) return;
  std::string message = std::string(what) + " failed: " + vkResultName(result);
  if (result == VK_ERROR_DEVICE_LOST) {
    markLost(message);
    throw Error(ErrorCode::deviceLost, message);
  }
  if (result == VK_ERROR_OUT_OF_DEVICE_MEMORY || result == VK_ERROR_OUT_OF_HOST_MEMORY)
    throw Error(ErrorCode::outOfMemory, message);
  throw Error(ErrorCode::vulkan, message);
}

void ContextImpl::setName(VkObjectType type, uint64_t handle, const std::string& name) const {
  awaitStart();
  if (!debugUtils_ || !vki_.vkSetDebugUtilsObjectNameEXT || !handle) return;
  VkDebugUtilsObjectNameInfoEXT info{VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT};
  info.objectType = type;
  info.objectHandle = handle;
  info.pObjectName = name.c_str();
  std::shared_lock lock(loaderListMutex());
  vki_.vkSetDebugUtilsObjectNameEXT(device_, &info);
}

std::string ContextImpl::uniqueName(const std::string& prefix) {
  return prefix + "#" + std::to_string(++nameCounter_);
}

void ContextImpl::createOwned(const ContextOptions& options) {
  readOptions(options);
  createDevice(options);
}

void ContextImpl::startOwned(const ContextOptions& options) {
  readOptions(options);
  started_ = false;
  ready_.store(false, std::memory_order_release);
}

void ContextImpl::finishOwned(const ContextOptions& options) noexcept {
  using Clock = std::chrono::steady_clock;
  const auto begin = Clock::now();
  {
    std::lock_guard lock(startMutex_);
    startThread_ = std::this_thread::get_id();  // its own accessors must not wait for it
  }
  std::exception_ptr error;
  try {
    createDevice(options);
  } catch (...) {
    error = std::current_exception();
  }
  {
    std::lock_guard lock(startMutex_);
    const auto end = Clock::now();
    startMs_ = std::chrono::duration<double, std::milli>(end - begin).count();
    if (firstWait_)
      startWaitMs_ = std::chrono::duration<double, std::milli>(end - *firstWait_).count();
    started_ = true;
    startError_ = error;
    startThread_ = {};
    // A failed start stays not ready: every later accessor takes the slow path and rethrows.
    if (!error) ready_.store(true, std::memory_order_release);
  }
  startDone_.notify_all();
}

void ContextImpl::awaitStartSlow() const {
  std::unique_lock lock(startMutex_);
  if (startThread_ == std::this_thread::get_id()) return;
  if (!started_ && !firstWait_) firstWait_ = std::chrono::steady_clock::now();
  startDone_.wait(lock, [&] { return started_; });
  if (startError_) std::rethrow_exception(startError_);
}

void ContextImpl::createDevice(const ContextOptions& options) {
  // Where creating a Context goes (logged at info once created): issue #13 asks what of the
  // 130-150 ms on an H100 could be deferred.
  using Clock = std::chrono::steady_clock;
  auto last = Clock::now();
  const auto begin = last;
  std::string steps;
  auto mark = [&](const char* step) {
    const auto now = Clock::now();
    char text[64];
    std::snprintf(text, sizeof text, "%s%s %.1f", steps.empty() ? "" : ", ", step,
                  std::chrono::duration<double, std::milli>(now - last).count());
    steps += text;
    last = now;
  };
  PFN_vkGetInstanceProcAddr gipa = openLoader(&loaderLibrary_);
  mark("loader");
  auto enumerateInstanceExtensions = reinterpret_cast<PFN_vkEnumerateInstanceExtensionProperties>(
      gipa(nullptr, "vkEnumerateInstanceExtensionProperties"));
  auto enumerateLayers = reinterpret_cast<PFN_vkEnumerateInstanceLayerProperties>(
      gipa(nullptr, "vkEnumerateInstanceLayerProperties"));
  auto createInstance = reinterpret_cast<PFN_vkCreateInstance>(gipa(nullptr, "vkCreateInstance"));

  const bool validation = options.validation.value_or(overrides_.validation);
  uint32_t count = 0;
  enumerateInstanceExtensions(nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> instanceExtensions(count);
  enumerateInstanceExtensions(nullptr, &count, instanceExtensions.data());

  std::vector<const char*> layers, extensions;
  debugUtils_ = hasExtension(instanceExtensions, VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  if (validation) {
    enumerateLayers(&count, nullptr);
    std::vector<VkLayerProperties> available(count);
    enumerateLayers(&count, available.data());
    bool found = std::any_of(available.begin(), available.end(), [](const VkLayerProperties& l) {
      return std::strcmp(l.layerName, kValidationLayer) == 0;
    });
    if (!found)
      throw Error(ErrorCode::unsupported,
                  "validation was requested (VKCNN_VALIDATION or ContextOptions::validation) but "
                  "VK_LAYER_KHRONOS_validation is not installed: install vulkan-validationlayers");
    layers.push_back(kValidationLayer);
    debugUtils_ = true;  // the validation layer provides VK_EXT_debug_utils
  }
  if (debugUtils_) extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = options.applicationName.c_str();
  app.pEngineName = "vkcnn";
  app.apiVersion = VK_API_VERSION_1_2;

  VkValidationFeatureEnableEXT enables[] = {
      VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = enables;

  VkDebugUtilsMessengerCreateInfoEXT messengerInfo{
      VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  messengerInfo.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                                  VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messengerInfo.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                              VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                              VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messengerInfo.pfnUserCallback = debugMessengerCallback;
  messengerInfo.pUserData = this;
  if (validation) {
    features.pNext = &messengerInfo;  // also reports problems in vkCreate/DestroyInstance
  }

  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pNext = validation ? &features : nullptr;
  info.pApplicationInfo = &app;
  info.enabledLayerCount = uint32_t(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = uint32_t(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  std::unique_lock lock(loaderListMutex());
  VkResult result = createInstance(&info, nullptr, &instance_);
  if (result == VK_SUCCESS) pinLoadedLibraries();
  lock.unlock();
  if (result != VK_SUCCESS)
    throw Error(
        result == VK_ERROR_INCOMPATIBLE_DRIVER ? ErrorCode::unsupported : ErrorCode::vulkan,
        "vkCreateInstance failed: " + vkResultName(result) +
            (result == VK_ERROR_INCOMPATIBLE_DRIVER ? " (no Vulkan 1.2 driver found)" : ""));
  ownsInstance_ = true;
  vki_.load(gipa, instance_);
  if (validation) {
    check(vki_.vkCreateDebugUtilsMessengerEXT(instance_, &messengerInfo, nullptr, &messenger_),
          "vkCreateDebugUtilsMessengerEXT");
  }
  capabilities_.validationEnabled = validation;
  mark("instance");

  // Device choice: an explicit index or name substring, else discrete > integrated > virtual > CPU.
  std::vector<VkPhysicalDevice> devices = physicalDevices(vki_, instance_);
  if (devices.empty()) throw Error(ErrorCode::unsupported, "the Vulkan loader reports no devices");
  std::string wanted = options.device.empty() ? overrides_.device : options.device;
  std::vector<std::pair<VkPhysicalDevice, VkPhysicalDeviceProperties>> candidates;
  for (VkPhysicalDevice d : devices) {
    VkPhysicalDeviceProperties p;
    vki_.vkGetPhysicalDeviceProperties(d, &p);
    if (p.apiVersion >= VK_API_VERSION_1_2) candidates.emplace_back(d, p);
  }
  if (candidates.empty()) throw Error(ErrorCode::unsupported, "no Vulkan 1.2 device found");
  if (!wanted.empty()) {
    bool numeric = std::all_of(wanted.begin(), wanted.end(), ::isdigit);
    auto it = candidates.end();
    if (numeric) {
      // An index too long for any device count matches none (std::stoul would throw).
      const size_t index = wanted.size() <= 9 ? std::stoul(wanted) : SIZE_MAX;
      if (index < candidates.size()) it = candidates.begin() + long(index);
    } else {
      it = std::find_if(candidates.begin(), candidates.end(), [&](auto& c) {
        return std::string(c.second.deviceName).find(wanted) != std::string::npos;
      });
    }
    if (it == candidates.end()) {
      std::ostringstream names;
      for (size_t i = 0; i < candidates.size(); ++i)
        names << (i ? ", " : "") << i << ": " << candidates[i].second.deviceName;
      throw Error(ErrorCode::invalidArgument, "device '" + wanted +
                                                  "' (VKCNN_DEVICE or "
                                                  "ContextOptions::device) matches none of: " +
                                                  names.str());
    }
    physicalDevice_ = it->first;
  } else {
    auto best = std::min_element(candidates.begin(), candidates.end(), [](auto& a, auto& b) {
      return typeRank(toDeviceType(a.second.deviceType)) <
             typeRank(toDeviceType(b.second.deviceType));
    });
    physicalDevice_ = best->first;
  }

  // A queue family with compute.
  vki_.vkGetPhysicalDeviceQueueFamilyProperties(physicalDevice_, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vki_.vkGetPhysicalDeviceQueueFamilyProperties(physicalDevice_, &count, families.data());
  uint32_t family = UINT32_MAX;
  for (uint32_t i = 0; i < count && family == UINT32_MAX; ++i)
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) family = i;
  if (family == UINT32_MAX) throw Error(ErrorCode::unsupported, "the device has no compute queue");
  queueFamilyIndex_ = family;

  // Features vkcnn uses where the device has them.
  VkPhysicalDeviceVulkan12Features supported12{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features supported11{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  supported11.pNext = &supported12;
  VkPhysicalDeviceFeatures2 supported{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  supported.pNext = &supported11;
  vki_.vkGetPhysicalDeviceFeatures2(physicalDevice_, &supported);

  VkPhysicalDeviceVulkan12Features enable12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  // Not enabled where the profile has none, so that validation catches a shader that uses it.
  enable12.shaderFloat16 =
      supported12.shaderFloat16 && deviceLimits(profile_).float16Arithmetic ? VK_TRUE : VK_FALSE;
  enable12.storageBuffer8BitAccess = supported12.storageBuffer8BitAccess;
  // A batch's pieces in one dispatch (convolution_tiled_pieces) index image arrays per row.
  enable12.shaderSampledImageArrayNonUniformIndexing =
      supported12.shaderSampledImageArrayNonUniformIndexing;
  enable12.shaderStorageImageArrayNonUniformIndexing =
      supported12.shaderStorageImageArrayNonUniformIndexing;
  VkPhysicalDeviceVulkan11Features enable11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  enable11.storageBuffer16BitAccess = supported11.storageBuffer16BitAccess;
  enable11.pNext = &enable12;
  VkPhysicalDeviceFeatures2 enable{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  enable.pNext = &enable11;
  enable.features.shaderStorageImageExtendedFormats =
      supported.features.shaderStorageImageExtendedFormats;
  enable.features.shaderInt16 = supported.features.shaderInt16;

  // The matrix units, where the device has the extension, its feature and our shape.
  std::vector<const char*> deviceExtensions;
  VkPhysicalDeviceCooperativeMatrixFeaturesNV matrixFeatures{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  bool matrixUnits = false;
  {
    vki_.vkEnumerateDeviceExtensionProperties(physicalDevice_, nullptr, &count, nullptr);
    std::vector<VkExtensionProperties> available(count);
    vki_.vkEnumerateDeviceExtensionProperties(physicalDevice_, nullptr, &count, available.data());
    if (hasExtension(available, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME)) queryMatrixShapes();
    // The shaders' scopes (GL_KHR_memory_scope_semantics) need the Vulkan memory model.
    if (wantMatrixUnits_ && hasExtension(available, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME) &&
        enable12.shaderFloat16 && enable11.storageBuffer16BitAccess &&
        supported12.vulkanMemoryModel) {
      VkPhysicalDeviceCooperativeMatrixFeaturesNV probe{
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
      VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
      features.pNext = &probe;
      vki_.vkGetPhysicalDeviceFeatures2(physicalDevice_, &features);
      matrixUnits = probe.cooperativeMatrix && hasMatrixShape();
    }
  }
  if (matrixUnits) {
    deviceExtensions.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
    matrixFeatures.cooperativeMatrix = VK_TRUE;
    enable12.vulkanMemoryModel = VK_TRUE;
    enable12.pNext = &matrixFeatures;
  }

  mark("device choice and features");
  float priority = 1.0f;
  VkDeviceQueueCreateInfo queueInfo{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queueInfo.queueFamilyIndex = family;
  queueInfo.queueCount = 1;
  queueInfo.pQueuePriorities = &priority;
  VkDeviceCreateInfo deviceInfo{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  deviceInfo.pNext = &enable;
  deviceInfo.queueCreateInfoCount = 1;
  deviceInfo.pQueueCreateInfos = &queueInfo;
  deviceInfo.enabledExtensionCount = uint32_t(deviceExtensions.size());
  deviceInfo.ppEnabledExtensionNames = deviceExtensions.data();
  lock.lock();
  check(vki_.vkCreateDevice(physicalDevice_, &deviceInfo, nullptr, &device_), "vkCreateDevice");
  ownsDevice_ = true;
  loadDevice(vki_.vkGetDeviceProcAddr);
  vk_.vkGetDeviceQueue(device_, family, 0, &queue_);
  lock.unlock();
  mark("device");
  queryCapabilities(false, matrixUnits, &enable11, &enable12,
                    enable.features.shaderStorageImageExtendedFormats);
  mark("capabilities");
  createCommonObjects();
  mark("pipeline cache and common objects");
  char total[96];
  std::snprintf(total, sizeof total, "Context created in %.1f ms (of it pipeline cache %.1f): ",
                std::chrono::duration<double, std::milli>(last - begin).count(), pipelineCacheMs_);
  log(LogSeverity::info, total + steps);
}

void ContextImpl::adopt(const AdoptedDevice& adopted, const ContextOptions& options) {
  readOptions(options);
  if (!adopted.getInstanceProcAddr || !adopted.instance || !adopted.physicalDevice ||
      !adopted.device || !adopted.queue)
    throw Error(ErrorCode::invalidArgument,
                "Context::adopt needs getInstanceProcAddr, instance, physicalDevice, device and "
                "queue; one of them is null");
  // The application's instance has loaded its driver by now: the same hazard, the same pin.
  pinLoadedLibraries();
  instance_ = adopted.instance;
  physicalDevice_ = adopted.physicalDevice;
  device_ = adopted.device;
  queue_ = adopted.queue;
  queueFamilyIndex_ = adopted.queueFamilyIndex;
  vki_.load(adopted.getInstanceProcAddr, instance_);
  debugUtils_ = adopted.debugUtilsEnabled && vki_.vkSetDebugUtilsObjectNameEXT;
  uint32_t count = 0;
  vki_.vkGetPhysicalDeviceQueueFamilyProperties(physicalDevice_, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vki_.vkGetPhysicalDeviceQueueFamilyProperties(physicalDevice_, &count, families.data());
  if (queueFamilyIndex_ >= count ||
      !(families[queueFamilyIndex_].queueFlags & VK_QUEUE_COMPUTE_BIT))
    throw Error(ErrorCode::invalidArgument, "Context::adopt: queue family " +
                                                std::to_string(queueFamilyIndex_) +
                                                " does not exist or has no compute support");
  loadDevice(vki_.vkGetDeviceProcAddr);
  if (adopted.cooperativeMatrixNVEnabled) queryMatrixShapes();
  const bool matrixUnits = wantMatrixUnits_ && adopted.cooperativeMatrixNVEnabled &&
                           adopted.enabledVulkan12Features &&
                           adopted.enabledVulkan12Features->vulkanMemoryModel && hasMatrixShape();
  const bool extendedFormats =
      adopted.enabledFeatures && adopted.enabledFeatures->shaderStorageImageExtendedFormats;
  queryCapabilities(true, matrixUnits, adopted.enabledVulkan11Features,
                    adopted.enabledVulkan12Features, extendedFormats);
  createCommonObjects();
}

void ContextImpl::loadDevice(PFN_vkGetDeviceProcAddr gdpa) {
  vkcnnLoadDeviceTable(&vk_, device_, gdpa);
  if (!vk_.vkCreateComputePipelines || !vk_.vkCmdDispatch)
    throw Error(ErrorCode::vulkan, "could not load device functions through vkGetDeviceProcAddr");
}

void ContextImpl::resolveWaitSpin() {
  waitSpinNs_ = waitSpinMicroseconds_.value_or(capabilities_.deviceType == DeviceType::cpu
                                                   ? 0
                                                   : kDefaultWaitSpinMicroseconds) *
                1000ull;
}

void ContextImpl::createCommonObjects() {
  setName(VK_OBJECT_TYPE_DEVICE, device_, "vkcnn device");
  setName(VK_OBJECT_TYPE_QUEUE, queue_, "vkcnn queue");
  VkPhysicalDeviceProperties properties;
  vki_.vkGetPhysicalDeviceProperties(physicalDevice_, &properties);
  DeviceMemoryAllocator::Options memory;
  memory.blockSize =
      memoryBlockSize_.value_or(DeviceMemoryAllocator::defaultBlockSize(memoryProperties_));
  memory.budget = memoryBudget_;
  memory.bufferImageGranularity = properties.limits.bufferImageGranularity;
  memory.callbacks = std::move(memoryCallbacks_);
  allocator_ = std::make_unique<DeviceMemoryAllocator>(*this, std::move(memory));
  const auto cacheStart = std::chrono::steady_clock::now();
  pipelines_ =
      std::make_unique<PipelineRegistry>(*this, defaultPipelineCacheFile(properties, overrides_));
  pipelineCacheMs_ =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - cacheStart)
          .count();
  temporaryBlocks_ = std::make_unique<TemporaryBlockCache>(*this);
  staging_ = std::make_unique<StagingPool>(*this);

  VkSamplerCreateInfo sampler{VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO};
  sampler.magFilter = VK_FILTER_NEAREST;
  sampler.minFilter = VK_FILTER_NEAREST;
  sampler.mipmapMode = VK_SAMPLER_MIPMAP_MODE_NEAREST;
  sampler.addressModeU = sampler.addressModeV = sampler.addressModeW =
      VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
  check(vk_.vkCreateSampler(device_, &sampler, nullptr, &sampler_), "vkCreateSampler");
  setName(VK_OBJECT_TYPE_SAMPLER, sampler_, "vkcnn texelFetch sampler");

  VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool.flags =
      VK_COMMAND_POOL_CREATE_TRANSIENT_BIT | VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool.queueFamilyIndex = queueFamilyIndex_;
  check(vk_.vkCreateCommandPool(device_, &pool, nullptr, &transferPool_), "vkCreateCommandPool");
  setName(VK_OBJECT_TYPE_COMMAND_POOL, transferPool_, "vkcnn transfer pool");
}

const std::shared_ptr<DeviceBuffer>& ContextImpl::emptyBuffer() {
  awaitStart();
  std::lock_guard lock(emptyBufferMutex_);
  if (!emptyBuffer_) {
    const float zeros[4] = {};
    emptyBuffer_ = DeviceBuffer::create(*this, sizeof(zeros), zeros, "vkcnn empty buffer", true);
  }
  return emptyBuffer_;
}

void ContextImpl::waitIdle() {
  awaitStart();
  throwIfLost();
  std::lock_guard lock(queueMutex_);
  check(vk_.vkDeviceWaitIdle(device_), "vkDeviceWaitIdle");
}

void ContextImpl::submit(VkCommandBuffer commandBuffer, VkFence fence, const char* what) {
  awaitStart();
  throwIfLost();
  VkSubmitInfo info{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  info.commandBufferCount = 1;
  info.pCommandBuffers = &commandBuffer;
  std::lock_guard lock(queueMutex_);
  check(vk_.vkQueueSubmit(queue_, 1, &info, fence), what);
}

void ContextImpl::waitForFence(VkFence fence, const char* what) {
  awaitStart();
  throwIfLost();
  const uint64_t timeoutNs = fenceTimeoutNs_;
  // The poll counts against the timeout: the whole wait is at most fenceTimeoutMs.
  uint64_t blockNs = timeoutNs;
  if (const uint64_t spinNs = std::min<uint64_t>(waitSpinNs_, timeoutNs)) {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point start = Clock::now(), until = start + std::chrono::nanoseconds(spinNs);
    Clock::time_point now = start;
    do {
      const VkResult status = vk_.vkGetFenceStatus(device_, fence);
      if (status == VK_SUCCESS) return;
      if (status != VK_NOT_READY) check(status, what);
      now = Clock::now();
    } while (now < until);
    const uint64_t spun = uint64_t(std::chrono::nanoseconds(now - start).count());
    blockNs = timeoutNs > spun ? timeoutNs - spun : 0;
  }
  VkResult result = vk_.vkWaitForFences(device_, 1, &fence, VK_TRUE, blockNs);
  if (result == VK_TIMEOUT) {
    std::string message = std::string(what) + ": the GPU did not finish within " +
                          std::to_string(timeoutNs / 1000000) +
                          " ms (ContextOptions::fenceTimeoutMs or VKCNN_FENCE_TIMEOUT_MS); the "
                          "device is considered lost";
    markLost(message);
    throw Error(ErrorCode::deviceLost, message);
  }
  check(result, what);
}

void ContextImpl::submitAndWait(const std::function<void(VkCommandBuffer)>& record,
                                const char* what) {
  throwIfLost();
  awaitStart();
  // The transfer pool is shared, so its command buffer is allocated, recorded, submitted and freed
  // under the queue lock; the wait happens outside it, so other threads' transfers and commits
  // are not held up by this one.
  VkCommandBuffer cb = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  struct Cleanup {
    ContextImpl* c;
    VkCommandBuffer& cb;
    VkFence& fence;
    ~Cleanup() {
      std::lock_guard lock(c->queueMutex_);
      c->settleLocked();  // the submission may still run if the wait timed out
      if (fence) c->vk_.vkDestroyFence(c->device_, fence, nullptr);
      if (cb) c->vk_.vkFreeCommandBuffers(c->device_, c->transferPool_, 1, &cb);
    }
  } cleanup{this, cb, fence};
  VkFenceCreateInfo fenceInfo{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  check(vk_.vkCreateFence(device_, &fenceInfo, nullptr, &fence), what);
  {
    std::lock_guard lock(queueMutex_);
    throwIfLost();
    VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    alloc.commandPool = transferPool_;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 1;
    check(vk_.vkAllocateCommandBuffers(device_, &alloc, &cb), what);
    setName(VK_OBJECT_TYPE_COMMAND_BUFFER, cb, std::string("vkcnn ") + what);
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(vk_.vkBeginCommandBuffer(cb, &begin), what);
    record(cb);
    check(vk_.vkEndCommandBuffer(cb), what);
    VkSubmitInfo info{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    info.commandBufferCount = 1;
    info.pCommandBuffers = &cb;
    check(vk_.vkQueueSubmit(queue_, 1, &info, fence), what);
  }
  waitForFence(fence, what);
}

}  // namespace detail

// ---- public Context -------------------------------------------------------------------------

const char* toString(DeviceType type) {
  switch (type) {
    case DeviceType::integratedGpu:
      return "integrated GPU";
    case DeviceType::discreteGpu:
      return "discrete GPU";
    case DeviceType::virtualGpu:
      return "virtual GPU";
    case DeviceType::cpu:
      return "CPU";
    default:
      return "other";
  }
}

Context::Context(const ContextOptions& options) : impl_(std::make_shared<detail::ContextImpl>()) {
  impl_->createOwned(options);
}

Context Context::adopt(const AdoptedDevice& device, const ContextOptions& options) {
  auto impl = std::make_shared<detail::ContextImpl>();
  impl->adopt(device, options);
  return Context(std::move(impl));
}

std::vector<PhysicalDeviceInfo> Context::enumerateDevices() {
  detail::LoaderInstance loader;
  loader.gipa = detail::openLoader(&loader.library);
  auto createInstance =
      reinterpret_cast<PFN_vkCreateInstance>(loader.gipa(nullptr, "vkCreateInstance"));
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pApplicationInfo = &app;
  std::unique_lock lock(detail::loaderListMutex());
  VkResult result = createInstance(&info, nullptr, &loader.instance);
  if (result == VK_SUCCESS) detail::pinLoadedLibraries();
  lock.unlock();
  if (result != VK_SUCCESS)
    throw Error(ErrorCode::vulkan, "vkCreateInstance failed: " + detail::vkResultName(result));
  loader.vki.load(loader.gipa, loader.instance);
  std::vector<PhysicalDeviceInfo> list;
  uint32_t index = 0;
  for (VkPhysicalDevice d : detail::physicalDevices(loader.vki, loader.instance)) {
    VkPhysicalDeviceProperties p;
    loader.vki.vkGetPhysicalDeviceProperties(d, &p);
    if (p.apiVersion < VK_API_VERSION_1_2) continue;
    list.push_back({index++, p.deviceName, detail::toDeviceType(p.deviceType), p.apiVersion});
  }
  return list;
}

const DeviceCapabilities& Context::capabilities() const {
  return impl_->capabilities();
}
void Context::setLogCallback(LogCallback callback) {
  impl_->setLogCallback(std::move(callback));
}
uint64_t Context::validationMessageCount() const {
  return impl_->validationMessageCount();
}
VkInstance Context::vkInstance() const {
  return impl_->instance();
}
VkPhysicalDevice Context::vkPhysicalDevice() const {
  return impl_->physicalDevice();
}
VkDevice Context::vkDevice() const {
  return impl_->device();
}
VkQueue Context::vkQueue() const {
  return impl_->queue();
}
uint32_t Context::queueFamilyIndex() const {
  return impl_->queueFamilyIndex();
}
void Context::waitIdle() const {
  impl_->waitIdle();
}
void Context::setFenceTimeoutMs(uint32_t milliseconds) {
  impl_->setFenceTimeoutMs(milliseconds);
}
uint32_t Context::waitSpinMicroseconds() const {
  return impl_->waitSpinMicroseconds();
}
void Context::setWaitSpinMicroseconds(uint32_t microseconds) {
  impl_->setWaitSpinMicroseconds(microseconds);
}
MemoryStatistics Context::memoryStatistics() const {
  MemoryStatistics m;
  const detail::DeviceMemoryAllocator& allocator = impl_->allocator();
  m.deviceBytesAllocated = allocator.bytesAllocated();
  m.memoryObjects = allocator.memoryObjectCount();
  m.pipelines = impl_->pipelines().pipelinesCreated();
  m.liveAllocations = allocator.liveAllocations();
  m.deviceBytesInUse = allocator.bytesInUse();
  m.allocationRequests = allocator.requestCount();
  m.peakDeviceBytesAllocated = allocator.peakBytesAllocated();
  m.deviceBytesCached = impl_->temporaryBlocks().cachedBytes() + impl_->staging().cachedBytes() +
                        impl_->allocator().emptyBlockBytes();
  m.memoryBudget = allocator.budget();
  m.memoryBlockSize = allocator.blockSize();
  return m;
}
void Context::injectAllocationFailure(uint64_t n) {
  impl_->allocator().failAllocationAfter(n);
}
void Context::trimTemporaryMemory() {
  impl_->temporaryBlocks().trim();
  impl_->staging().trim();
  // After the staging buffers: their blocks are empty only now.
  impl_->allocator().releaseEmptyBlocks();
}
Context detail::startContext(const ContextOptions& options) {
  auto impl = std::make_shared<detail::ContextImpl>();
  impl->startOwned(options);
  return Context(std::move(impl));
}
void detail::finishContext(const Context& context, const ContextOptions& options) noexcept {
  context.impl()->finishOwned(options);
}
detail::ContextStart detail::awaitContext(const Context& context) {
  context.impl()->awaitStart();
  return {context.impl()->startMs(), context.impl()->startWaitMs()};
}
detail::LoadClock& detail::loadClock(const Context& context) {
  return context.impl()->loadClock();
}

std::string Context::pipelineCacheFile() const {
  return impl_->pipelines().cacheFile();
}
bool Context::pipelineCacheLoaded() const {
  return impl_->pipelines().loadedFromDisk();
}
void Context::savePipelineCache() const {
  impl_->pipelines().save();
}

}  // namespace vkcnn
