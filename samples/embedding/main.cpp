// Embedding sample: an application that owns its Vulkan instance, device and queue (as a game
// does) hands them to vkcnn, records a small network into its own command buffer between work of
// its own, submits that command buffer itself and reads the result. Headless.
//
// The application's "frame": it clears an RGBA8 render target to a gradient of colours (its own
// work), vkcnn classifies the target's mean colour with a tiny network (convolution, global
// average pooling, fully connected, softmax), and the application copies vkcnn's result into a
// buffer of its own (its own work again) and maps it.
#if defined(_WIN32)
#define WIN32_LEAN_AND_MEAN
#define NOMINMAX
#include <windows.h>
#else
#include <dlfcn.h>
#endif
#include <vkcnn/vkcnn.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

#define APP_CHECK(call)                                                                     \
  do {                                                                                      \
    VkResult r_ = (call);                                                                   \
    if (r_ != VK_SUCCESS)                                                                   \
      throw std::runtime_error(std::string(#call) + " failed: " + std::to_string(int(r_))); \
  } while (0)

// The application opens the system's Vulkan loader itself.
#if defined(_WIN32)
constexpr const char* kLoader = "vulkan-1.dll";
void* openLoader() {
  return static_cast<void*>(LoadLibraryA(kLoader));
}
PFN_vkGetInstanceProcAddr loaderEntry(void* library) {
  return reinterpret_cast<PFN_vkGetInstanceProcAddr>(reinterpret_cast<void*>(
      GetProcAddress(static_cast<HMODULE>(library), "vkGetInstanceProcAddr")));
}
void closeLoader(void* library) {
  FreeLibrary(static_cast<HMODULE>(library));
}
#else
constexpr const char* kLoader = "libvulkan.so.1";
void* openLoader() {
  return dlopen(kLoader, RTLD_NOW | RTLD_LOCAL);
}
PFN_vkGetInstanceProcAddr loaderEntry(void* library) {
  return reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(library, "vkGetInstanceProcAddr"));
}
void closeLoader(void* library) {
  dlclose(library);
}
#endif

// The application's own tiny Vulkan loader use: its own function pointers, nothing shared.
struct AppVulkan {
  void* library = nullptr;
  PFN_vkGetInstanceProcAddr gipa = nullptr;
  PFN_vkGetDeviceProcAddr gdpa = nullptr;
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  uint32_t family = 0;
  VkQueue queue = VK_NULL_HANDLE;

  template <typename F>
  F instanceFn(const char* name) const {
    return reinterpret_cast<F>(gipa(instance, name));
  }
  template <typename F>
  F deviceFn(const char* name) const {
    return reinterpret_cast<F>(gdpa(device, name));
  }

  AppVulkan() {
    library = openLoader();
    if (!library) throw std::runtime_error(std::string("no Vulkan loader (") + kLoader + ")");
    gipa = loaderEntry(library);
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "vkcnn embedding sample";
    app.apiVersion = VK_API_VERSION_1_2;
    VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    info.pApplicationInfo = &app;
    APP_CHECK(reinterpret_cast<PFN_vkCreateInstance>(gipa(nullptr, "vkCreateInstance"))(
        &info, nullptr, &instance));
    uint32_t count = 0;
    auto enumerate = instanceFn<PFN_vkEnumeratePhysicalDevices>("vkEnumeratePhysicalDevices");
    enumerate(instance, &count, nullptr);
    std::vector<VkPhysicalDevice> devices(count);
    enumerate(instance, &count, devices.data());
    if (devices.empty()) throw std::runtime_error("no Vulkan device");
    // The application picks its device: a discrete GPU if there is one.
    auto properties =
        instanceFn<PFN_vkGetPhysicalDeviceProperties>("vkGetPhysicalDeviceProperties");
    physical = devices[0];
    for (VkPhysicalDevice d : devices) {
      VkPhysicalDeviceProperties p;
      properties(d, &p);
      if (p.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) physical = d;
    }
    auto queues = instanceFn<PFN_vkGetPhysicalDeviceQueueFamilyProperties>(
        "vkGetPhysicalDeviceQueueFamilyProperties");
    queues(physical, &count, nullptr);
    std::vector<VkQueueFamilyProperties> families(count);
    queues(physical, &count, families.data());
    while (family < count && !(families[family].queueFlags & VK_QUEUE_COMPUTE_BIT)) ++family;
    float priority = 1;
    VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    q.queueFamilyIndex = family;
    q.queueCount = 1;
    q.pQueuePriorities = &priority;
    VkDeviceCreateInfo d{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    d.queueCreateInfoCount = 1;
    d.pQueueCreateInfos = &q;
    APP_CHECK(instanceFn<PFN_vkCreateDevice>("vkCreateDevice")(physical, &d, nullptr, &device));
    gdpa = instanceFn<PFN_vkGetDeviceProcAddr>("vkGetDeviceProcAddr");
    deviceFn<PFN_vkGetDeviceQueue>("vkGetDeviceQueue")(device, family, 0, &queue);
  }

  ~AppVulkan() {
    if (device) {
      deviceFn<PFN_vkDeviceWaitIdle>("vkDeviceWaitIdle")(device);
      deviceFn<PFN_vkDestroyDevice>("vkDestroyDevice")(device, nullptr);
    }
    if (instance) instanceFn<PFN_vkDestroyInstance>("vkDestroyInstance")(instance, nullptr);
    if (library) closeLoader(library);
  }

  uint32_t memoryType(uint32_t bits, VkMemoryPropertyFlags flags) const {
    VkPhysicalDeviceMemoryProperties mp;
    instanceFn<PFN_vkGetPhysicalDeviceMemoryProperties>("vkGetPhysicalDeviceMemoryProperties")(
        physical, &mp);
    for (uint32_t i = 0; i < mp.memoryTypeCount; ++i)
      if ((bits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & flags) == flags) return i;
    throw std::runtime_error("no suitable memory type");
  }
};

// Four colour classes the network scores: red, green, blue, grey.
const char* kClasses[] = {"red", "green", "blue", "grey"};

}  // namespace

int main() {
  try {
    AppVulkan app;
    auto fn = [&](const char* name) { return app.gdpa(app.device, name); };

    // ---- vkcnn on the application's device ----
    vkcnn::AdoptedDevice adopted;
    adopted.getInstanceProcAddr = app.gipa;
    adopted.instance = app.instance;
    adopted.physicalDevice = app.physical;
    adopted.device = app.device;
    adopted.queueFamilyIndex = app.family;
    adopted.queue = app.queue;
    vkcnn::Context context = vkcnn::Context::adopt(adopted);
    std::printf("vkcnn adopted the application's device: %s\n",
                context.capabilities().deviceName.c_str());

    // The application's render target, read by vkcnn as a 3-channel image.
    const uint32_t width = 64, height = 48;
    VkImageCreateInfo ii{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    ii.imageType = VK_IMAGE_TYPE_2D;
    ii.format = VK_FORMAT_R8G8B8A8_UNORM;
    ii.extent = {width, height, 1};
    ii.mipLevels = 1;
    ii.arrayLayers = 1;
    ii.samples = VK_SAMPLE_COUNT_1_BIT;
    ii.tiling = VK_IMAGE_TILING_OPTIMAL;
    ii.usage = VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    VkImage target;
    APP_CHECK(reinterpret_cast<PFN_vkCreateImage>(fn("vkCreateImage"))(app.device, &ii, nullptr,
                                                                       &target));
    VkMemoryRequirements req;
    reinterpret_cast<PFN_vkGetImageMemoryRequirements>(fn("vkGetImageMemoryRequirements"))(
        app.device, target, &req);
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = app.memoryType(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    VkDeviceMemory targetMemory;
    APP_CHECK(reinterpret_cast<PFN_vkAllocateMemory>(fn("vkAllocateMemory"))(
        app.device, &ai, nullptr, &targetMemory));
    APP_CHECK(reinterpret_cast<PFN_vkBindImageMemory>(fn("vkBindImageMemory"))(app.device, target,
                                                                               targetMemory, 0));
    vkcnn::Image picture =
        vkcnn::Image::wrap(context, target, VK_FORMAT_R8G8B8A8_UNORM, width, height, 1, 3, ii.usage,
                           VK_IMAGE_LAYOUT_GENERAL, "render target");

    // A tiny classifier built with the kernel API: per-pixel colour features, global average,
    // scores per class, softmax. Weights chosen by hand so the answer is checkable.
    vkcnn::ConvolutionDescriptor features =
        vkcnn::ConvolutionDescriptor::make(1, 1, 3, 4, vkcnn::NeuronDescriptor::relu());
    const std::vector<float> featureWeights = {
        1,     -0.5f, -0.5f,  // redness
        -0.5f, 1,     -0.5f,  // greenness
        -0.5f, -0.5f, 1,      // blueness
        0,     0,     0,      // constant (bias 0.2): the grey class
    };
    const std::vector<float> featureBias = {0, 0, 0, 0.2f};
    vkcnn::Convolution colourFeatures(context, features, featureWeights, featureBias);
    vkcnn::GlobalPoolingAverage average(context);
    vkcnn::FullyConnected scores(
        context, vkcnn::ConvolutionDescriptor::make(1, 1, 4, 4),
        std::vector<float>{8, 0, 0, 0, 0, 8, 0, 0, 0, 0, 8, 0, 0, 0, 0, 8});
    vkcnn::Softmax softmax(context);
    vkcnn::Image probabilities(context, {1, 1, 4, 1, vkcnn::ChannelFormat::float32,
                                         vkcnn::ImageUsage::all, "probabilities"});

    // The application's readback buffer, host visible.
    VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.size = 16;
    bi.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    VkBuffer readback;
    APP_CHECK(reinterpret_cast<PFN_vkCreateBuffer>(fn("vkCreateBuffer"))(app.device, &bi, nullptr,
                                                                         &readback));
    reinterpret_cast<PFN_vkGetBufferMemoryRequirements>(fn("vkGetBufferMemoryRequirements"))(
        app.device, readback, &req);
    ai.allocationSize = req.size;
    ai.memoryTypeIndex =
        app.memoryType(req.memoryTypeBits,
                       VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    VkDeviceMemory readbackMemory;
    APP_CHECK(reinterpret_cast<PFN_vkAllocateMemory>(fn("vkAllocateMemory"))(
        app.device, &ai, nullptr, &readbackMemory));
    APP_CHECK(reinterpret_cast<PFN_vkBindBufferMemory>(fn("vkBindBufferMemory"))(
        app.device, readback, readbackMemory, 0));

    VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pi.queueFamilyIndex = app.family;
    VkCommandPool pool;
    APP_CHECK(reinterpret_cast<PFN_vkCreateCommandPool>(fn("vkCreateCommandPool"))(app.device, &pi,
                                                                                   nullptr, &pool));
    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = pool;
    cai.commandBufferCount = 1;
    VkCommandBuffer frame;
    APP_CHECK(reinterpret_cast<PFN_vkAllocateCommandBuffers>(fn("vkAllocateCommandBuffers"))(
        app.device, &cai, &frame));
    auto barrier = reinterpret_cast<PFN_vkCmdPipelineBarrier>(fn("vkCmdPipelineBarrier"));
    auto clear = reinterpret_cast<PFN_vkCmdClearColorImage>(fn("vkCmdClearColorImage"));

    const float colours[][3] = {
        {0.9f, 0.1f, 0.2f}, {0.2f, 0.8f, 0.1f}, {0.1f, 0.2f, 0.9f}, {0.5f, 0.5f, 0.5f}};
    int correct = 0;
    for (int k = 0; k < 4; ++k) {
      VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
      begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
      APP_CHECK(
          reinterpret_cast<PFN_vkBeginCommandBuffer>(fn("vkBeginCommandBuffer"))(frame, &begin));
      // Application work: "render" (clear) the target, leave it in GENERAL for vkcnn to read.
      VkImageMemoryBarrier toTransfer{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
      toTransfer.srcAccessMask = VK_ACCESS_SHADER_READ_BIT;
      toTransfer.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
      toTransfer.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
      toTransfer.newLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
      toTransfer.srcQueueFamilyIndex = toTransfer.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
      toTransfer.image = target;
      toTransfer.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
      barrier(frame, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0,
              nullptr, 0, nullptr, 1, &toTransfer);
      VkClearColorValue colour{};
      std::memcpy(colour.float32, colours[k], sizeof(colours[k]));
      colour.float32[3] = 1;
      clear(frame, target, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &colour, 1,
            &toTransfer.subresourceRange);
      VkImageMemoryBarrier toGeneral = toTransfer;
      toGeneral.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
      toGeneral.dstAccessMask = VK_ACCESS_SHADER_READ_BIT;
      toGeneral.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
      toGeneral.newLayout = VK_IMAGE_LAYOUT_GENERAL;
      barrier(frame, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 0,
              nullptr, 0, nullptr, 1, &toGeneral);

      // vkcnn's work, recorded into the application's command buffer.
      vkcnn::CommandBuffer inference =
          vkcnn::CommandBuffer::wrap(context, frame, "frame inference");
      vkcnn::TemporaryImage perPixel = colourFeatures.encode(inference, picture);
      vkcnn::TemporaryImage mean = average.encode(inference, perPixel);
      vkcnn::TemporaryImage logits = scores.encode(inference, mean);
      softmax.encode(inference, logits, probabilities);
      inference.endEncoding();  // publishes vkcnn's writes to what the application records next

      // Application work again: copy the probabilities into its own buffer.
      VkBufferImageCopy copy{};
      copy.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
      copy.imageExtent = {1, 1, 1};
      reinterpret_cast<PFN_vkCmdCopyImageToBuffer>(fn("vkCmdCopyImageToBuffer"))(
          frame, probabilities.vkImage(), VK_IMAGE_LAYOUT_GENERAL, readback, 1, &copy);
      VkMemoryBarrier toHost{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
      toHost.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
      toHost.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
      barrier(frame, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &toHost, 0,
              nullptr, 0, nullptr);
      APP_CHECK(reinterpret_cast<PFN_vkEndCommandBuffer>(fn("vkEndCommandBuffer"))(frame));

      VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
      si.commandBufferCount = 1;
      si.pCommandBuffers = &frame;
      APP_CHECK(reinterpret_cast<PFN_vkQueueSubmit>(fn("vkQueueSubmit"))(app.queue, 1, &si,
                                                                         VK_NULL_HANDLE));
      APP_CHECK(reinterpret_cast<PFN_vkQueueWaitIdle>(fn("vkQueueWaitIdle"))(app.queue));
      inference.markCompleted();  // vkcnn may now recycle the frame's temporary memory
      APP_CHECK(
          reinterpret_cast<PFN_vkResetCommandPool>(fn("vkResetCommandPool"))(app.device, pool, 0));

      float* mapped = nullptr;
      APP_CHECK(reinterpret_cast<PFN_vkMapMemory>(fn("vkMapMemory"))(
          app.device, readbackMemory, 0, 16, 0, reinterpret_cast<void**>(&mapped)));
      int best = 0;
      for (int c = 1; c < 4; ++c)
        if (mapped[c] > mapped[best]) best = c;
      std::printf("frame %d: colour (%.1f, %.1f, %.1f) -> %s (p = %.3f)\n", k, colours[k][0],
                  colours[k][1], colours[k][2], kClasses[best], mapped[best]);
      correct += best == k;
      reinterpret_cast<PFN_vkUnmapMemory>(fn("vkUnmapMemory"))(app.device, readbackMemory);
    }

    reinterpret_cast<PFN_vkDestroyCommandPool>(fn("vkDestroyCommandPool"))(app.device, pool,
                                                                           nullptr);
    reinterpret_cast<PFN_vkDestroyBuffer>(fn("vkDestroyBuffer"))(app.device, readback, nullptr);
    reinterpret_cast<PFN_vkFreeMemory>(fn("vkFreeMemory"))(app.device, readbackMemory, nullptr);
    picture = vkcnn::Image();
    reinterpret_cast<PFN_vkDestroyImage>(fn("vkDestroyImage"))(app.device, target, nullptr);
    reinterpret_cast<PFN_vkFreeMemory>(fn("vkFreeMemory"))(app.device, targetMemory, nullptr);
    std::printf("%d of 4 frames classified as expected\n", correct);
    return correct == 4 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "embedding sample: %s\n", e.what());
    return 1;
  }
}
