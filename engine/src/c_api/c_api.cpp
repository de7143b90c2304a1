// The C API's core part (vkcnn/vkcnn_c.h): status and errors, devices, contexts, images, buffers
// and command buffers, each a thin guarded call into the C++ type of the same name.
#include "c_api/c_api.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <span>
#include <string_view>
#include <utility>

namespace vkcnn::capi {

namespace {
thread_local std::string lastError;

void copyName(char (&destination)[256], const std::string& source) {
  const size_t n = std::min(source.size(), sizeof(destination) - 1);
  std::memcpy(destination, source.data(), n);
  destination[n] = '\0';
}

vkcnn_device_type deviceTypeOf(DeviceType type) {
  switch (type) {
    case DeviceType::integratedGpu:
      return VKCNN_DEVICE_TYPE_INTEGRATED_GPU;
    case DeviceType::discreteGpu:
      return VKCNN_DEVICE_TYPE_DISCRETE_GPU;
    case DeviceType::virtualGpu:
      return VKCNN_DEVICE_TYPE_VIRTUAL_GPU;
    case DeviceType::cpu:
      return VKCNN_DEVICE_TYPE_CPU;
    case DeviceType::other:
      break;
  }
  return VKCNN_DEVICE_TYPE_OTHER;
}

DataLayout layoutOf(vkcnn_data_layout layout, const char* function) {
  switch (layout) {
    case VKCNN_DATA_LAYOUT_CHW:
      return DataLayout::FeatureChannelsxHeightxWidth;
    case VKCNN_DATA_LAYOUT_HWC:
      return DataLayout::HeightxWidthxFeatureChannels;
    default:  // a caller's int out of the enum
      break;
  }
  badArgument(function, "data layout " + std::to_string(int(layout)) + " is not one of vkcnn's");
}

std::string labelOf(const char* label) {
  return label ? std::string(label) : std::string();
}

void replaceAll(std::string& text, std::string_view from, std::string_view to) {
  for (size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size())
    text.replace(at, from.size(), to);
}

// The library's messages name its C++ options; a C caller set them as these fields and
// arguments. Options the C API lacks are dropped from the advice.
std::string inCTerms(std::string message) {
  static const std::pair<std::string_view, std::string_view> renames[] = {
      {"(VKCNN_DEVICE or ContextOptions::device)",
       "(vkcnn_context_options.device or VKCNN_DEVICE)"},
      {"VKCNN_VALIDATION or ContextOptions::validation",
       "vkcnn_context_options.validation or VKCNN_VALIDATION"},
      {"ContextOptions::memoryCallbacks", "vkcnn_context_options.allocate_memory/free_memory"},
      {", or set SessionOptions::externalDataDirectory", ""},
      {"SessionOptions::inputShapes", "vkcnn_session_options.input_shapes"},
  };
  for (const auto& [from, to] : renames) replaceAll(message, from, to);
  // The rest by rule: ContextOptions::fenceTimeoutMs -> vkcnn_context_options.fence_timeout_ms.
  for (const auto& [cpp, c] :
       {std::pair<std::string_view, std::string_view>{"ContextOptions::", "vkcnn_context_options."},
        {"SessionOptions::", "vkcnn_session_options."},
        {"SessionPoolOptions::", "vkcnn_session_pool_options."}})
    for (size_t at; (at = message.find(cpp)) != std::string::npos;) {
      size_t end = at + cpp.size();
      std::string field;
      for (; end < message.size() && std::isalnum(static_cast<unsigned char>(message[end])); ++end)
        field += std::isupper(static_cast<unsigned char>(message[end]))
                     ? "_" + std::string(1, char(std::tolower(message[end])))
                     : std::string(1, message[end]);
      message.replace(at, end - at, std::string(c) + field);
    }
  // Session: "a batch of 3 was asked for, but the model's batch is fixed at 2".
  if (const size_t at = message.find("a batch of ");
      at != std::string::npos && message.find(" was asked for", at) != std::string::npos)
    message.replace(at, 11, "vkcnn_session_options.batch ");
  return message;
}
}  // namespace

vkcnn_status setLastError(vkcnn_status status, const char* message) noexcept {
  try {
    lastError = inCTerms(message);
  } catch (...) {
    lastError.clear();  // no memory for the message: the status still says what happened
  }
  return status;
}

vkcnn_status statusOf(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::invalidArgument:
      return VKCNN_ERROR_INVALID_ARGUMENT;
    case ErrorCode::limitExceeded:
      return VKCNN_ERROR_LIMIT_EXCEEDED;
    case ErrorCode::unsupported:
      return VKCNN_ERROR_UNSUPPORTED;
    case ErrorCode::misuse:
      return VKCNN_ERROR_MISUSE;
    case ErrorCode::outOfMemory:
      return VKCNN_ERROR_OUT_OF_MEMORY;
    case ErrorCode::deviceLost:
      return VKCNN_ERROR_DEVICE_LOST;
    case ErrorCode::vulkan:
      return VKCNN_ERROR_VULKAN;
    case ErrorCode::io:
      return VKCNN_ERROR_IO;
    case ErrorCode::invalidModel:
      return VKCNN_ERROR_INVALID_MODEL;
  }
  return VKCNN_ERROR_INTERNAL;
}

ContextOptions contextOptions(const vkcnn_context_options* options) {
  ContextOptions o;
  if (!options) return o;
  if (options->device) o.device = options->device;
  if (options->validation >= 0) o.validation = options->validation != 0;
  if (options->matrix_units >= 0) o.matrixUnits = options->matrix_units != 0;
  if (options->winograd >= 0) o.winograd = options->winograd != 0;
  if (options->fence_timeout_ms >= 0) {
    if (options->fence_timeout_ms > int64_t(UINT32_MAX))
      badArgument("vkcnn_context_options", "fence_timeout_ms " +
                                               std::to_string(options->fence_timeout_ms) +
                                               " is beyond 4294967295");
    o.fenceTimeoutMs = uint32_t(options->fence_timeout_ms);
  }
  if (options->wait_spin_us >= 0) {
    if (options->wait_spin_us > int64_t(UINT32_MAX))
      badArgument("vkcnn_context_options", "wait_spin_us " + std::to_string(options->wait_spin_us) +
                                               " is beyond 4294967295");
    o.waitSpinMicroseconds = uint32_t(options->wait_spin_us);
  }
  if (options->memory_block_size) o.memoryBlockSize = options->memory_block_size;
  o.memoryBudget = options->memory_budget;
  if (options->allocate_memory) {
    auto allocate = options->allocate_memory;
    void* user = options->memory_user_data;
    o.memoryCallbacks.allocate = [allocate, user](VkDevice device, const VkMemoryAllocateInfo& info,
                                                  VkDeviceMemory* memory) {
      return allocate(user, device, &info, memory);
    };
  }
  if (options->free_memory) {
    auto free = options->free_memory;
    void* user = options->memory_user_data;
    o.memoryCallbacks.free = [free, user](VkDevice device, VkDeviceMemory memory, VkDeviceSize size,
                                          uint32_t type) {
      free(user, device, memory, size, type);
    };
  }
  if (options->log) {
    auto log = options->log;
    void* user = options->log_user_data;
    o.log = [log, user](LogSeverity severity, std::string_view message) {
      const std::string text(message);
      log(user, vkcnn_log_severity(int(severity)), text.c_str());
    };
  }
  return o;
}

}  // namespace vkcnn::capi

using namespace vkcnn;
using namespace vkcnn::capi;

extern "C" {

const char* vkcnn_status_name(vkcnn_status status) {
  if (status == VKCNN_SUCCESS) return "success";
  if (status == VKCNN_ERROR_INTERNAL) return "internal error";
  // Every other status stands for one ErrorCode (statusOf) and is named as that code.
  for (int c = 0; c <= int(ErrorCode::invalidModel); ++c)
    if (statusOf(ErrorCode(c)) == status) return toString(ErrorCode(c));
  return "unknown status";
}

const char* vkcnn_last_error(void) {
  return lastError.c_str();
}

vkcnn_status vkcnn_enumerate_devices(vkcnn_device_info* devices, uint32_t* count) {
  return guarded([&] {
    uint32_t& n = need(count, "vkcnn_enumerate_devices", "count");
    const std::vector<PhysicalDeviceInfo> found = Context::enumerateDevices();
    if (!devices) {
      n = uint32_t(found.size());
      return;
    }
    const uint32_t written = std::min(n, uint32_t(found.size()));
    for (uint32_t i = 0; i < written; ++i) {
      devices[i].index = found[i].index;
      copyName(devices[i].name, found[i].name);
      devices[i].type = deviceTypeOf(found[i].type);
      devices[i].api_version = found[i].apiVersion;
    }
    n = written;
  });
}

void vkcnn_context_options_init(vkcnn_context_options* options) {
  if (!options) return;
  *options = vkcnn_context_options{};
  options->validation = -1;
  options->matrix_units = -1;
  options->fence_timeout_ms = -1;
  options->winograd = -1;
  options->wait_spin_us = -1;
}

vkcnn_status vkcnn_context_create(const vkcnn_context_options* options, vkcnn_context* context) {
  return guarded([&] {
    vkcnn_context& out = need(context, "vkcnn_context_create", "context");
    out = new vkcnn_context_s{Context(contextOptions(options))};
  });
}

vkcnn_status vkcnn_context_adopt(const vkcnn_adopted_device* device,
                                 const vkcnn_context_options* options, vkcnn_context* context) {
  return guarded([&] {
    const vkcnn_adopted_device& d = need(device, "vkcnn_context_adopt", "device");
    vkcnn_context& out = need(context, "vkcnn_context_adopt", "context");
    AdoptedDevice a;
    a.getInstanceProcAddr = d.get_instance_proc_addr;
    a.instance = d.instance;
    a.physicalDevice = d.physical_device;
    a.device = d.device;
    a.queueFamilyIndex = d.queue_family_index;
    a.queue = d.queue;
    a.enabledVulkan11Features = d.enabled_vulkan11_features;
    a.enabledVulkan12Features = d.enabled_vulkan12_features;
    a.debugUtilsEnabled = d.debug_utils_enabled != 0;
    a.cooperativeMatrixNVEnabled = d.cooperative_matrix_nv_enabled != 0;
    a.enabledFeatures = d.enabled_features;
    out = new vkcnn_context_s{Context::adopt(a, contextOptions(options))};
  });
}

void vkcnn_context_destroy(vkcnn_context context) {
  delete context;
}

vkcnn_status vkcnn_context_capabilities(vkcnn_context context,
                                        vkcnn_device_capabilities* capabilities) {
  return guarded([&] {
    const char* f = "vkcnn_context_capabilities";
    const DeviceCapabilities& c = need(context, f, "context").context.capabilities();
    vkcnn_device_capabilities& out = need(capabilities, f, "capabilities");
    out = vkcnn_device_capabilities{};
    copyName(out.device_name, c.deviceName);
    copyName(out.driver_name, c.driverName);
    out.device_type = deviceTypeOf(c.deviceType);
    out.vendor_id = c.vendorId;
    out.device_id = c.deviceId;
    out.api_version = c.apiVersion;
    out.driver_version = c.driverVersion;
    out.shader_float16 = c.shaderFloat16;
    out.storage_16bit = c.storage16Bit;
    out.matrix_units = c.matrixUnits;
    out.validation_enabled = c.validationEnabled;
    out.adopted = c.adopted;
    out.max_image_array_layers = c.maxImageArrayLayers;
    out.max_image_dimension_2d = c.maxImageDimension2D;
  });
}

vkcnn_status vkcnn_context_vulkan_handles(vkcnn_context context, vkcnn_vulkan_handles* handles) {
  return guarded([&] {
    const char* f = "vkcnn_context_vulkan_handles";
    const Context& c = need(context, f, "context").context;
    vkcnn_vulkan_handles& out = need(handles, f, "handles");
    out.instance = c.vkInstance();
    out.physical_device = c.vkPhysicalDevice();
    out.device = c.vkDevice();
    out.queue_family_index = c.queueFamilyIndex();
    out.queue = c.vkQueue();
  });
}

vkcnn_status vkcnn_context_memory_statistics(vkcnn_context context,
                                             vkcnn_memory_statistics* statistics) {
  return guarded([&] {
    const char* f = "vkcnn_context_memory_statistics";
    const MemoryStatistics m = need(context, f, "context").context.memoryStatistics();
    vkcnn_memory_statistics& out = need(statistics, f, "statistics");
    out.device_bytes_allocated = m.deviceBytesAllocated;
    out.peak_device_bytes_allocated = m.peakDeviceBytesAllocated;
    out.device_bytes_in_use = m.deviceBytesInUse;
    out.device_bytes_cached = m.deviceBytesCached;
    out.memory_budget = m.memoryBudget;
    out.memory_block_size = m.memoryBlockSize;
    out.memory_objects = m.memoryObjects;
    out.live_allocations = m.liveAllocations;
    out.pipelines = m.pipelines;
  });
}

vkcnn_status vkcnn_context_trim_temporary_memory(vkcnn_context context) {
  return guarded([&] {
    need(context, "vkcnn_context_trim_temporary_memory", "context").context.trimTemporaryMemory();
  });
}

vkcnn_status vkcnn_context_wait_idle(vkcnn_context context) {
  return guarded([&] { need(context, "vkcnn_context_wait_idle", "context").context.waitIdle(); });
}

uint64_t vkcnn_context_validation_message_count(vkcnn_context context) {
  return context ? context->context.validationMessageCount() : 0;
}

vkcnn_status vkcnn_image_create(vkcnn_context context, const vkcnn_image_descriptor* descriptor,
                                vkcnn_image* image) {
  return guarded([&] {
    const char* f = "vkcnn_image_create";
    const Context& c = need(context, f, "context").context;
    const vkcnn_image_descriptor& d = need(descriptor, f, "descriptor");
    vkcnn_image& out = need(image, f, "image");
    ImageDescriptor id;
    id.width = d.width;
    id.height = d.height;
    id.featureChannels = d.feature_channels;
    id.numberOfImages = d.number_of_images ? d.number_of_images : 1;
    id.channelFormat = channelFormatOf(d.channel_format, f);
    id.label = labelOf(d.label);
    out = new vkcnn_image_s{Image(c, id)};
  });
}

vkcnn_status vkcnn_image_wrap(vkcnn_context context, VkImage vkImage, VkFormat format,
                              uint32_t width, uint32_t height, uint32_t arrayLayers,
                              uint32_t featureChannels, VkImageUsageFlags usage,
                              VkImageLayout layout, const char* label, vkcnn_image* image) {
  return guarded([&] {
    const char* f = "vkcnn_image_wrap";
    const Context& c = need(context, f, "context").context;
    vkcnn_image& out = need(image, f, "image");
    out = new vkcnn_image_s{Image::wrap(c, vkImage, format, width, height, arrayLayers,
                                        featureChannels, usage, layout, labelOf(label))};
  });
}

void vkcnn_image_destroy(vkcnn_image image) {
  delete image;
}

vkcnn_status vkcnn_image_descriptor_of(vkcnn_image image, vkcnn_image_descriptor* descriptor) {
  return guarded([&] {
    const char* f = "vkcnn_image_descriptor_of";
    const Image& i = need(image, f, "image").image;
    vkcnn_image_descriptor& out = need(descriptor, f, "descriptor");
    out = vkcnn_image_descriptor{};
    out.width = i.width();
    out.height = i.height();
    out.feature_channels = i.featureChannels();
    out.number_of_images = i.numberOfImages();
    out.channel_format = i.channelFormat() == ChannelFormat::float32 ? VKCNN_CHANNEL_FORMAT_FLOAT32
                         : i.channelFormat() == ChannelFormat::unorm8
                             ? VKCNN_CHANNEL_FORMAT_UNORM8
                             : VKCNN_CHANNEL_FORMAT_FLOAT16;
  });
}

vkcnn_status vkcnn_image_vk_image(vkcnn_image image, VkImage* vkImage) {
  return guarded([&] {
    const Image& i = need(image, "vkcnn_image_vk_image", "image").image;
    need(vkImage, "vkcnn_image_vk_image", "vk_image") = i.vkImage();
  });
}

vkcnn_status vkcnn_image_write_floats(vkcnn_image image, const float* data, size_t count,
                                      vkcnn_data_layout layout, uint32_t imageIndex) {
  return guarded([&] {
    const char* f = "vkcnn_image_write_floats";
    Image& i = need(image, f, "image").image;
    if (!data && count) badArgument(f, "data is NULL");
    i.writeFloats(std::span<const float>(data, count), layoutOf(layout, f), imageIndex);
  });
}

vkcnn_status vkcnn_image_read_floats(vkcnn_image image, float* data, size_t count,
                                     vkcnn_data_layout layout, uint32_t imageIndex) {
  return guarded([&] {
    const char* f = "vkcnn_image_read_floats";
    const Image& i = need(image, f, "image").image;
    if (!data) badArgument(f, "data is NULL");
    const size_t expected = size_t(i.width()) * i.height() * i.featureChannels();
    if (count != expected)
      badArgument(f, "count " + std::to_string(count) + " is not width x height x " +
                         "feature_channels = " + std::to_string(expected));
    const std::vector<float> values = i.readFloats(layoutOf(layout, f), imageIndex);
    std::copy(values.begin(), values.end(), data);
  });
}

vkcnn_status vkcnn_buffer_create(vkcnn_context context, size_t size, int shared, const char* label,
                                 vkcnn_buffer* buffer) {
  return guarded([&] {
    const char* f = "vkcnn_buffer_create";
    const Context& c = need(context, f, "context").context;
    vkcnn_buffer& out = need(buffer, f, "buffer");
    BufferOptions options;
    options.storageMode = shared ? BufferStorageMode::shared : BufferStorageMode::device;
    options.label = labelOf(label);
    out = new vkcnn_buffer_s{Buffer(c, size, options)};
  });
}

vkcnn_status vkcnn_buffer_wrap(vkcnn_context context, VkBuffer vkBuffer, VkDeviceSize offset,
                               VkDeviceSize size, VkBufferUsageFlags usage, const char* label,
                               vkcnn_buffer* buffer) {
  return guarded([&] {
    const char* f = "vkcnn_buffer_wrap";
    const Context& c = need(context, f, "context").context;
    vkcnn_buffer& out = need(buffer, f, "buffer");
    out = new vkcnn_buffer_s{Buffer::wrap(c, vkBuffer, offset, size, usage, labelOf(label))};
  });
}

void vkcnn_buffer_destroy(vkcnn_buffer buffer) {
  delete buffer;
}

vkcnn_status vkcnn_buffer_contents(vkcnn_buffer buffer, void** contents) {
  return guarded([&] {
    Buffer& b = need(buffer, "vkcnn_buffer_contents", "buffer").buffer;
    need(contents, "vkcnn_buffer_contents", "contents") = b.contents();
  });
}

vkcnn_status vkcnn_buffer_write(vkcnn_buffer buffer, const void* data, size_t bytes,
                                size_t offset) {
  return guarded([&] {
    Buffer& b = need(buffer, "vkcnn_buffer_write", "buffer").buffer;
    if (!data && bytes) badArgument("vkcnn_buffer_write", "data is NULL");
    b.write(data, bytes, offset);
  });
}

vkcnn_status vkcnn_buffer_read(vkcnn_buffer buffer, void* data, size_t bytes, size_t offset) {
  return guarded([&] {
    const Buffer& b = need(buffer, "vkcnn_buffer_read", "buffer").buffer;
    if (!data && bytes) badArgument("vkcnn_buffer_read", "data is NULL");
    b.read(data, bytes, offset);
  });
}

vkcnn_status vkcnn_command_buffer_create(vkcnn_context context, const char* label,
                                         vkcnn_command_buffer* commandBuffer) {
  return guarded([&] {
    const char* f = "vkcnn_command_buffer_create";
    const Context& c = need(context, f, "context").context;
    vkcnn_command_buffer& out = need(commandBuffer, f, "command_buffer");
    out = new vkcnn_command_buffer_s{CommandBuffer(c, labelOf(label))};
  });
}

vkcnn_status vkcnn_command_buffer_wrap(vkcnn_context context, VkCommandBuffer vkCommandBuffer,
                                       const char* label, vkcnn_command_buffer* commandBuffer) {
  return guarded([&] {
    const char* f = "vkcnn_command_buffer_wrap";
    const Context& c = need(context, f, "context").context;
    vkcnn_command_buffer& out = need(commandBuffer, f, "command_buffer");
    out = new vkcnn_command_buffer_s{CommandBuffer::wrap(c, vkCommandBuffer, labelOf(label))};
  });
}

void vkcnn_command_buffer_destroy(vkcnn_command_buffer commandBuffer) {
  // A CommandBuffer's destructor waits for its own submission; it reports nothing.
  try {
    delete commandBuffer;
  } catch (...) {
  }
}

vkcnn_status vkcnn_command_buffer_commit(vkcnn_command_buffer commandBuffer) {
  return guarded([&] {
    need(commandBuffer, "vkcnn_command_buffer_commit", "command_buffer").commandBuffer.commit();
  });
}

vkcnn_status vkcnn_command_buffer_wait_until_completed(vkcnn_command_buffer commandBuffer) {
  return guarded([&] {
    need(commandBuffer, "vkcnn_command_buffer_wait_until_completed", "command_buffer")
        .commandBuffer.waitUntilCompleted();
  });
}

vkcnn_status vkcnn_command_buffer_end_encoding(vkcnn_command_buffer commandBuffer) {
  return guarded([&] {
    need(commandBuffer, "vkcnn_command_buffer_end_encoding", "command_buffer")
        .commandBuffer.endEncoding();
  });
}

vkcnn_status vkcnn_command_buffer_mark_completed(vkcnn_command_buffer commandBuffer) {
  return guarded([&] {
    need(commandBuffer, "vkcnn_command_buffer_mark_completed", "command_buffer")
        .commandBuffer.markCompleted();
  });
}

}  // extern "C"
