/* The C API (vkcnn/vkcnn.h) from C11: errors as statuses with this thread's message; devices; a
 * context with validation and a log callback; images written and read back; a session (a small
 * ONNX classifier head: global average pool, flatten, Gemm, batch 2) run host to host, encoded on
 * vkcnn buffers, on the application's own VkBuffers in the application's own VkCommandBuffer, and
 * on the application's own VkImage; a context adopting a device; a session from memory on
 * private buffers written by copy; the load's statistics; an image's VkImage; every result against
 * a CPU computation.
 *   test_c_api [MODEL.onnx]   (default: fuzz/corpus/onnx/gap_flatten_gemm.onnx, from the
 *                              repository root, as scripts/device-run-tests.sh runs it) */
#include <vkcnn/vkcnn.h>

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(condition)                                                                           \
  do {                                                                                             \
    if (!(condition)) {                                                                            \
      fprintf(stderr, "%s:%d: CHECK(%s) failed; last error: %s\n", __FILE__, __LINE__, #condition, \
              vkcnn_last_error());                                                                 \
      failures++;                                                                                  \
    }                                                                                              \
  } while (0)
#define REQUIRE_OK(call)                                                 \
  do {                                                                   \
    vkcnn_status status_ = (call);                                       \
    if (status_ != VKCNN_SUCCESS) {                                      \
      fprintf(stderr, "%s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #call, \
              vkcnn_status_name(status_), vkcnn_last_error());           \
      exit(1);                                                           \
    }                                                                    \
  } while (0)

enum { BATCH = 2, CHANNELS = 4, PIXELS = 9, CLASSES = 5 };

/* The seed generator's ramp (fuzz/make_onnx_seeds.cpp): W [5, 4] and B [5]. */
static double ramp(int i) {
  return (double)(i % 7 - 3) * 0.125;
}

/* y = mean_hw(x) W^T + B for x [2, 4, 3, 3]; the largest difference from `y`. */
static double worstError(const float* x, const float* y) {
  double worst = 0;
  for (int n = 0; n < BATCH; ++n)
    for (int o = 0; o < CLASSES; ++o) {
      double sum = ramp(o);
      for (int c = 0; c < CHANNELS; ++c) {
        double mean = 0;
        for (int p = 0; p < PIXELS; ++p) mean += x[(n * CHANNELS + c) * PIXELS + p] / 9.0;
        sum += ramp(o * CHANNELS + c) * mean;
      }
      double d = fabs(sum - (double)y[n * CLASSES + o]);
      if (!(d <= worst)) worst = d; /* NaN counts as worst */
    }
  return worst;
}

static int logMessages = 0;
static void onLog(void* user, vkcnn_log_severity severity, const char* message) {
  (void)user;
  if (severity >= VKCNN_LOG_WARNING) {
    logMessages++;
    fprintf(stderr, "log: %s\n", message);
  }
}

/* The application's Vulkan functions, from the loader, for the context's device. */
typedef struct Vk {
  PFN_vkCreateBuffer createBuffer;
  PFN_vkDestroyBuffer destroyBuffer;
  PFN_vkGetBufferMemoryRequirements bufferRequirements;
  PFN_vkCreateImage createImage;
  PFN_vkDestroyImage destroyImage;
  PFN_vkGetImageMemoryRequirements imageRequirements;
  PFN_vkAllocateMemory allocateMemory;
  PFN_vkFreeMemory freeMemory;
  PFN_vkBindBufferMemory bindBufferMemory;
  PFN_vkBindImageMemory bindImageMemory;
  PFN_vkMapMemory mapMemory;
  PFN_vkCreateCommandPool createCommandPool;
  PFN_vkDestroyCommandPool destroyCommandPool;
  PFN_vkAllocateCommandBuffers allocateCommandBuffers;
  PFN_vkBeginCommandBuffer beginCommandBuffer;
  PFN_vkEndCommandBuffer endCommandBuffer;
  PFN_vkCmdPipelineBarrier cmdPipelineBarrier;
  PFN_vkCreateFence createFence;
  PFN_vkDestroyFence destroyFence;
  PFN_vkWaitForFences waitForFences;
  PFN_vkQueueSubmit queueSubmit;
  PFN_vkGetPhysicalDeviceMemoryProperties memoryProperties;
  VkPhysicalDeviceMemoryProperties properties;
  vkcnn_vulkan_handles handles;
  PFN_vkGetInstanceProcAddr getInstanceProcAddr;
} Vk;

static void* loaderFunction(PFN_vkGetDeviceProcAddr gdpa, VkDevice device, const char* name) {
  PFN_vkVoidFunction f = gdpa(device, name);
  if (!f) {
    fprintf(stderr, "no %s\n", name);
    exit(1);
  }
  /* Function pointers round-trip through void* on every platform Vulkan runs on (POSIX). */
  void* p;
  memcpy(&p, &f, sizeof p);
  return p;
}

static Vk loadVulkan(vkcnn_context context) {
  Vk vk;
  memset(&vk, 0, sizeof vk);
  REQUIRE_OK(vkcnn_context_vulkan_handles(context, &vk.handles));
  void* library = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) exit(1);
  PFN_vkGetInstanceProcAddr gipa;
  void* symbol = dlsym(library, "vkGetInstanceProcAddr");
  memcpy(&gipa, &symbol, sizeof gipa);
  vk.getInstanceProcAddr = gipa;
  PFN_vkVoidFunction f = gipa(vk.handles.instance, "vkGetDeviceProcAddr");
  PFN_vkGetDeviceProcAddr gdpa;
  memcpy(&gdpa, &f, sizeof gdpa);
  f = gipa(vk.handles.instance, "vkGetPhysicalDeviceMemoryProperties");
  memcpy(&vk.memoryProperties, &f, sizeof f);
  VkDevice d = vk.handles.device;
#define LOAD(field, name)                     \
  do {                                        \
    void* p_ = loaderFunction(gdpa, d, name); \
    memcpy(&vk.field, &p_, sizeof vk.field);  \
  } while (0)
  LOAD(createBuffer, "vkCreateBuffer");
  LOAD(destroyBuffer, "vkDestroyBuffer");
  LOAD(bufferRequirements, "vkGetBufferMemoryRequirements");
  LOAD(createImage, "vkCreateImage");
  LOAD(destroyImage, "vkDestroyImage");
  LOAD(imageRequirements, "vkGetImageMemoryRequirements");
  LOAD(allocateMemory, "vkAllocateMemory");
  LOAD(freeMemory, "vkFreeMemory");
  LOAD(bindBufferMemory, "vkBindBufferMemory");
  LOAD(bindImageMemory, "vkBindImageMemory");
  LOAD(mapMemory, "vkMapMemory");
  LOAD(createCommandPool, "vkCreateCommandPool");
  LOAD(destroyCommandPool, "vkDestroyCommandPool");
  LOAD(allocateCommandBuffers, "vkAllocateCommandBuffers");
  LOAD(beginCommandBuffer, "vkBeginCommandBuffer");
  LOAD(endCommandBuffer, "vkEndCommandBuffer");
  LOAD(cmdPipelineBarrier, "vkCmdPipelineBarrier");
  LOAD(createFence, "vkCreateFence");
  LOAD(destroyFence, "vkDestroyFence");
  LOAD(waitForFences, "vkWaitForFences");
  LOAD(queueSubmit, "vkQueueSubmit");
#undef LOAD
  vk.memoryProperties(vk.handles.physical_device, &vk.properties);
  return vk;
}

static VkDeviceMemory allocate(const Vk* vk, VkMemoryRequirements requirements,
                               VkMemoryPropertyFlags flags) {
  for (uint32_t i = 0; i < vk->properties.memoryTypeCount; ++i)
    if ((requirements.memoryTypeBits & (1u << i)) &&
        (vk->properties.memoryTypes[i].propertyFlags & flags) == flags) {
      VkMemoryAllocateInfo info = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, requirements.size,
                                   i};
      VkDeviceMemory memory = VK_NULL_HANDLE;
      if (vk->allocateMemory(vk->handles.device, &info, NULL, &memory) != VK_SUCCESS) exit(1);
      return memory;
    }
  exit(1);
}

/* A host-visible, coherent storage buffer of the application's own, mapped. */
typedef struct AppBuffer {
  VkBuffer buffer;
  VkDeviceMemory memory;
  float* mapped;
} AppBuffer;

static AppBuffer makeAppBuffer(const Vk* vk, VkDeviceSize size) {
  AppBuffer b;
  VkBufferCreateInfo info = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = size;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  if (vk->createBuffer(vk->handles.device, &info, NULL, &b.buffer) != VK_SUCCESS) exit(1);
  VkMemoryRequirements requirements;
  vk->bufferRequirements(vk->handles.device, b.buffer, &requirements);
  b.memory = allocate(vk, requirements,
                      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  if (vk->bindBufferMemory(vk->handles.device, b.buffer, b.memory, 0) != VK_SUCCESS) exit(1);
  void* mapped = NULL;
  if (vk->mapMemory(vk->handles.device, b.memory, 0, VK_WHOLE_SIZE, 0, &mapped) != VK_SUCCESS)
    exit(1);
  b.mapped = mapped;
  return b;
}

static void destroyAppBuffer(const Vk* vk, AppBuffer* b) {
  vk->destroyBuffer(vk->handles.device, b->buffer, NULL);
  vk->freeMemory(vk->handles.device, b->memory, NULL);
}

/* Records `record` (with `argument`) into one command buffer of the application's, submits it to
 * the context's queue and waits. */
static void submitOnce(const Vk* vk, void (*record)(const Vk*, VkCommandBuffer, void*),
                       void* argument) {
  VkDevice d = vk->handles.device;
  VkCommandPoolCreateInfo poolInfo = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  poolInfo.queueFamilyIndex = vk->handles.queue_family_index;
  VkCommandPool pool;
  if (vk->createCommandPool(d, &poolInfo, NULL, &pool) != VK_SUCCESS) exit(1);
  VkCommandBufferAllocateInfo allocateInfo = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  allocateInfo.commandPool = pool;
  allocateInfo.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  allocateInfo.commandBufferCount = 1;
  VkCommandBuffer cb;
  if (vk->allocateCommandBuffers(d, &allocateInfo, &cb) != VK_SUCCESS) exit(1);
  VkCommandBufferBeginInfo begin = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  if (vk->beginCommandBuffer(cb, &begin) != VK_SUCCESS) exit(1);
  record(vk, cb, argument);
  if (vk->endCommandBuffer(cb) != VK_SUCCESS) exit(1);
  VkFenceCreateInfo fenceInfo = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence;
  if (vk->createFence(d, &fenceInfo, NULL, &fence) != VK_SUCCESS) exit(1);
  VkSubmitInfo submit = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cb;
  if (vk->queueSubmit(vk->handles.queue, 1, &submit, fence) != VK_SUCCESS) exit(1);
  if (vk->waitForFences(d, 1, &fence, VK_TRUE, UINT64_MAX) != VK_SUCCESS) exit(1);
  vk->destroyFence(d, fence, NULL);
  vk->destroyCommandPool(d, pool, NULL);
}

/* The session encoded into the application's command buffer, on its buffers. */
typedef struct EncodeArguments {
  vkcnn_context context;
  vkcnn_session session;
  vkcnn_buffer input, output;
  vkcnn_command_buffer wrapped;
} EncodeArguments;

static void recordSession(const Vk* vk, VkCommandBuffer cb, void* argument) {
  (void)vk;
  EncodeArguments* a = argument;
  REQUIRE_OK(vkcnn_command_buffer_wrap(a->context, cb, "application", &a->wrapped));
  REQUIRE_OK(vkcnn_session_encode_buffers(a->session, a->wrapped, &a->input, 1, &a->output, 1));
  REQUIRE_OK(vkcnn_command_buffer_end_encoding(a->wrapped));
}

static void toGeneral(const Vk* vk, VkCommandBuffer cb, void* argument) {
  VkImageMemoryBarrier barrier = {VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
  barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  barrier.newLayout = VK_IMAGE_LAYOUT_GENERAL;
  barrier.srcQueueFamilyIndex = barrier.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  barrier.image = *(VkImage*)argument;
  barrier.subresourceRange.aspectMask = VK_IMAGE_ASPECT_COLOR_BIT;
  barrier.subresourceRange.levelCount = 1;
  barrier.subresourceRange.layerCount = BATCH;
  vk->cmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
                         0, NULL, 0, NULL, 1, &barrier);
}

int main(int argc, char** argv) {
  if (argc > 2) {
    fprintf(stderr, "usage: test_c_api [MODEL.onnx]\n");
    return 2;
  }
  const char* model = argc == 2 ? argv[1] : "fuzz/corpus/onnx/gap_flatten_gemm.onnx";

  /* Errors: a status, a message naming the function and argument, nothing thrown. */
  vkcnn_image_descriptor descriptor = {5, 4, 6, 1, VKCNN_CHANNEL_FORMAT_FLOAT32, "c image"};
  vkcnn_image image = NULL;
  CHECK(vkcnn_image_create(NULL, &descriptor, &image) == VKCNN_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(vkcnn_last_error(), "vkcnn_image_create: context is NULL") != NULL);
  CHECK(image == NULL);
  CHECK(strcmp(vkcnn_status_name(VKCNN_ERROR_OUT_OF_MEMORY), "out of memory") == 0);
  CHECK(vkcnn_version() == VKCNN_VERSION);

  uint32_t deviceCount = 0;
  REQUIRE_OK(vkcnn_enumerate_devices(NULL, &deviceCount));
  CHECK(deviceCount >= 1);
  CHECK(strcmp(vkcnn_last_error(), "") == 0);
  vkcnn_device_info devices[8];
  uint32_t written = 8;
  REQUIRE_OK(vkcnn_enumerate_devices(devices, &written));
  CHECK(written == (deviceCount < 8 ? deviceCount : 8));

  vkcnn_context_options options;
  vkcnn_context_options_init(&options);
  CHECK(options.matrix_units == -1 && options.winograd == -1 && options.validation == -1);
  CHECK(options.wait_spin_us == -1);
  {
    /* A wait that polls for longer than ContextOptions can hold is refused, saying why. */
    options.wait_spin_us = 5000000000;
    vkcnn_context refused = NULL;
    CHECK(vkcnn_context_create(&options, &refused) == VKCNN_ERROR_INVALID_ARGUMENT);
    CHECK(refused == NULL);
    CHECK(strstr(vkcnn_last_error(), "wait_spin_us 5000000000") != NULL);
    options.wait_spin_us = -1;
  }
  {
    /* The library's messages name the C fields, never the C++ options. */
    options.device = "no such device 1234";
    vkcnn_context refused = NULL;
    CHECK(vkcnn_context_create(&options, &refused) == VKCNN_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(vkcnn_last_error(), "(vkcnn_context_options.device or VKCNN_DEVICE)") != NULL);
    CHECK(strstr(vkcnn_last_error(), "Options::") == NULL);
    options.device = NULL;
  }
  {
    /* Winograd off (ContextOptions::winograd) and waits that poll for 50 us (wait_spin_us): a
       context like any other. */
    options.winograd = 0;
    options.wait_spin_us = 50;
    vkcnn_context lean = NULL;
    REQUIRE_OK(vkcnn_context_create(&options, &lean));
    vkcnn_context_destroy(lean);
    options.winograd = -1;
    options.wait_spin_us = -1;
  }
  options.log = onLog; /* validation: VKCNN_VALIDATION, as ctest sets it */
  vkcnn_context context = NULL;
  REQUIRE_OK(vkcnn_context_create(&options, &context));
  vkcnn_device_capabilities capabilities;
  REQUIRE_OK(vkcnn_context_capabilities(context, &capabilities));
  printf("device: %s, validation %s\n", capabilities.device_name,
         capabilities.validation_enabled ? "on" : "off");

  /* Images. */
  REQUIRE_OK(vkcnn_image_create(context, &descriptor, &image));
  float pixels[5 * 4 * 6], back[5 * 4 * 6];
  for (int i = 0; i < 5 * 4 * 6; ++i) pixels[i] = (float)(i % 13) - 6.5f;
  REQUIRE_OK(vkcnn_image_write_floats(image, pixels, 120, VKCNN_DATA_LAYOUT_HWC, 0));
  REQUIRE_OK(vkcnn_image_read_floats(image, back, 120, VKCNN_DATA_LAYOUT_HWC, 0));
  CHECK(memcmp(pixels, back, sizeof pixels) == 0);
  CHECK(vkcnn_image_read_floats(image, back, 119, VKCNN_DATA_LAYOUT_HWC, 0) ==
        VKCNN_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(vkcnn_last_error(), "count 119") != NULL);
  vkcnn_image_descriptor shape;
  REQUIRE_OK(vkcnn_image_descriptor_of(image, &shape));
  CHECK(shape.width == 5 && shape.height == 4 && shape.feature_channels == 6 &&
        shape.number_of_images == 1 && shape.channel_format == VKCNN_CHANNEL_FORMAT_FLOAT32);
  vkcnn_image_destroy(image);
  vkcnn_memory_statistics memory;
  REQUIRE_OK(vkcnn_context_memory_statistics(context, &memory));
  CHECK(memory.device_bytes_allocated > 0 && memory.memory_block_size > 0);
  REQUIRE_OK(vkcnn_context_trim_temporary_memory(context));

  /* A session on this context: batch 2, float32 storage. */
  vkcnn_session_options sessionOptions;
  vkcnn_session_options_init(&sessionOptions);
  sessionOptions.precision = VKCNN_CHANNEL_FORMAT_FLOAT32;
  sessionOptions.batch = BATCH;
  vkcnn_session session = NULL;
  CHECK(vkcnn_session_create(context, "/nonexistent/model.onnx", &sessionOptions, &session) ==
        VKCNN_ERROR_IO);
  CHECK(strstr(vkcnn_last_error(), "/nonexistent/model.onnx") != NULL);
  {
    const int64_t dims[4] = {BATCH, CHANNELS, 3, 3};
    const vkcnn_input_shape wrong = {"nope", dims, 4};
    sessionOptions.input_shapes = &wrong;
    sessionOptions.input_shape_count = 1;
    CHECK(vkcnn_session_create(context, model, &sessionOptions, &session) != VKCNN_SUCCESS);
    CHECK(strstr(vkcnn_last_error(), "vkcnn_session_options.input_shapes names 'nope'") != NULL);
    CHECK(strstr(vkcnn_last_error(), "Options::") == NULL);
    sessionOptions.input_shapes = NULL;
    sessionOptions.input_shape_count = 0;
  }
  /* The accumulator precision: float32 by default; a value out of the enum is named. */
  CHECK(sessionOptions.accumulator_precision == VKCNN_ACCUMULATOR_PRECISION_FLOAT32);
  sessionOptions.accumulator_precision = (vkcnn_accumulator_precision)7;
  CHECK(vkcnn_session_create(context, model, &sessionOptions, &session) ==
        VKCNN_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(vkcnn_last_error(), "vkcnn_session_options.accumulator_precision 7") != NULL);
  /* float16 accumulators: this float32-storage model has no half path, so the same results. */
  sessionOptions.accumulator_precision = VKCNN_ACCUMULATOR_PRECISION_FLOAT16;
  REQUIRE_OK(vkcnn_session_create(context, model, &sessionOptions, &session));
  CHECK(vkcnn_session_input_count(session) == 1 && vkcnn_session_output_count(session) == 1);
  vkcnn_tensor_info in, out;
  REQUIRE_OK(vkcnn_session_input_info(session, 0, &in));
  REQUIRE_OK(vkcnn_session_output_info(session, 0, &out));
  CHECK(strcmp(in.name, "x") == 0 && in.rank == 4 && in.shape[0] == BATCH && in.shape[1] == 4 &&
        in.element_count == BATCH * CHANNELS * PIXELS);
  CHECK(strcmp(out.name, "y") == 0 && out.rank == 2 && out.element_count == BATCH * CLASSES);
  CHECK(vkcnn_session_input_info(session, 1, &in) == VKCNN_ERROR_INVALID_ARGUMENT);

  float x[BATCH * CHANNELS * PIXELS], y[BATCH * CLASSES];
  for (int i = 0; i < BATCH * CHANNELS * PIXELS; ++i) x[i] = (float)(i % 11 - 5) * 0.25f;
  const float* inputs[1] = {x};
  float* outputs[1] = {y};
  vkcnn_load_statistics load;
  REQUIRE_OK(vkcnn_session_load_statistics(session, &load));
  CHECK(load.parse_ms > 0 && load.load_ms >= load.parse_ms && load.first_run_ms == 0);
  CHECK(load.context_ms == 0 && load.context_wait_ms == 0); /* the application's context */
  CHECK(vkcnn_session_load_statistics(session, NULL) == VKCNN_ERROR_INVALID_ARGUMENT);
  memset(y, 0xff, sizeof y); /* NaN */
  REQUIRE_OK(vkcnn_session_run(session, inputs, 1, outputs, 1));
  REQUIRE_OK(vkcnn_session_load_statistics(session, &load));
  CHECK(load.first_run_ms > 0);
  printf("run: largest difference %.1e\n", worstError(x, y));
  CHECK(worstError(x, y) < 1e-4);
  CHECK(vkcnn_session_run(session, inputs, 2, outputs, 1) == VKCNN_ERROR_INVALID_ARGUMENT);

  /* Encoded on vkcnn's shared buffers, into a vkcnn command buffer. */
  vkcnn_buffer inputBuffer, outputBuffer;
  REQUIRE_OK(vkcnn_buffer_create(context, sizeof x, 1, "c input", &inputBuffer));
  REQUIRE_OK(vkcnn_buffer_create(context, sizeof y, 1, "c output", &outputBuffer));
  void* contents;
  REQUIRE_OK(vkcnn_buffer_contents(inputBuffer, &contents));
  memcpy(contents, x, sizeof x);
  vkcnn_command_buffer commandBuffer;
  REQUIRE_OK(vkcnn_command_buffer_create(context, "c", &commandBuffer));
  REQUIRE_OK(
      vkcnn_session_encode_buffers(session, commandBuffer, &inputBuffer, 1, &outputBuffer, 1));
  REQUIRE_OK(vkcnn_command_buffer_commit(commandBuffer));
  REQUIRE_OK(vkcnn_command_buffer_wait_until_completed(commandBuffer));
  vkcnn_command_buffer_destroy(commandBuffer);
  memset(y, 0xff, sizeof y);
  REQUIRE_OK(vkcnn_buffer_read(outputBuffer, y, sizeof y, 0));
  printf("encode on buffers: largest difference %.1e\n", worstError(x, y));
  CHECK(worstError(x, y) < 1e-4);
  vkcnn_buffer_destroy(inputBuffer);
  vkcnn_buffer_destroy(outputBuffer);

  /* The application's own VkBuffers, in its own VkCommandBuffer, submitted by it. */
  Vk vk = loadVulkan(context);
  AppBuffer appIn = makeAppBuffer(&vk, sizeof x), appOut = makeAppBuffer(&vk, sizeof y);
  memcpy(appIn.mapped, x, sizeof x);
  memset(appOut.mapped, 0xff, sizeof y);
  const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                   VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                   VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  EncodeArguments encode = {context, session, NULL, NULL, NULL};
  REQUIRE_OK(vkcnn_buffer_wrap(context, appIn.buffer, 0, sizeof x, usage, "app in", &encode.input));
  REQUIRE_OK(
      vkcnn_buffer_wrap(context, appOut.buffer, 0, sizeof y, usage, "app out", &encode.output));
  submitOnce(&vk, recordSession, &encode);
  REQUIRE_OK(vkcnn_command_buffer_mark_completed(encode.wrapped));
  vkcnn_command_buffer_destroy(encode.wrapped);
  printf("encode into the application's command buffer: largest difference %.1e\n",
         worstError(x, appOut.mapped));
  CHECK(worstError(x, appOut.mapped) < 1e-4);
  vkcnn_buffer_destroy(encode.input);
  vkcnn_buffer_destroy(encode.output);
  destroyAppBuffer(&vk, &appIn);
  destroyAppBuffer(&vk, &appOut);

  /* The application's own VkImage (3x3, 4 channels, 2 layers: the batch) as the input. */
  VkImageCreateInfo imageInfo = {VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
  imageInfo.imageType = VK_IMAGE_TYPE_2D;
  imageInfo.format = VK_FORMAT_R32G32B32A32_SFLOAT;
  imageInfo.extent.width = 3;
  imageInfo.extent.height = 3;
  imageInfo.extent.depth = 1;
  imageInfo.mipLevels = 1;
  imageInfo.arrayLayers = BATCH;
  imageInfo.samples = VK_SAMPLE_COUNT_1_BIT;
  imageInfo.tiling = VK_IMAGE_TILING_OPTIMAL;
  imageInfo.usage = VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_STORAGE_BIT |
                    VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
  imageInfo.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  VkImage appImage;
  if (vk.createImage(vk.handles.device, &imageInfo, NULL, &appImage) != VK_SUCCESS) return 1;
  VkMemoryRequirements requirements;
  vk.imageRequirements(vk.handles.device, appImage, &requirements);
  VkDeviceMemory imageMemory = allocate(&vk, requirements, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  if (vk.bindImageMemory(vk.handles.device, appImage, imageMemory, 0) != VK_SUCCESS) return 1;
  submitOnce(&vk, toGeneral, &appImage);
  vkcnn_image wrapped, result;
  REQUIRE_OK(vkcnn_image_wrap(context, appImage, VK_FORMAT_R32G32B32A32_SFLOAT, 3, 3, BATCH,
                              CHANNELS, imageInfo.usage, VK_IMAGE_LAYOUT_GENERAL, "app image",
                              &wrapped));
  for (uint32_t n = 0; n < BATCH; ++n)
    REQUIRE_OK(vkcnn_image_write_floats(wrapped, x + n * CHANNELS * PIXELS, CHANNELS * PIXELS,
                                        VKCNN_DATA_LAYOUT_CHW, n));
  vkcnn_image_descriptor outDescriptor = {out.width,
                                          out.height,
                                          out.feature_channels,
                                          out.number_of_images,
                                          VKCNN_CHANNEL_FORMAT_FLOAT32,
                                          "c result"};
  REQUIRE_OK(vkcnn_image_create(context, &outDescriptor, &result));
  REQUIRE_OK(vkcnn_command_buffer_create(context, "c images", &commandBuffer));
  REQUIRE_OK(vkcnn_session_encode_images(session, commandBuffer, &wrapped, 1, &result, 1));
  REQUIRE_OK(vkcnn_command_buffer_commit(commandBuffer));
  REQUIRE_OK(vkcnn_command_buffer_wait_until_completed(commandBuffer));
  vkcnn_command_buffer_destroy(commandBuffer);
  memset(y, 0xff, sizeof y);
  for (uint32_t n = 0; n < BATCH; ++n)
    REQUIRE_OK(vkcnn_image_read_floats(result, y + n * CLASSES, CLASSES, VKCNN_DATA_LAYOUT_CHW, n));
  printf("encode on the application's image: largest difference %.1e\n", worstError(x, y));
  CHECK(worstError(x, y) < 1e-4);
  vkcnn_image_destroy(wrapped);
  vkcnn_image_destroy(result);
  REQUIRE_OK(vkcnn_context_wait_idle(context));
  vk.destroyImage(vk.handles.device, appImage, NULL);
  vk.freeMemory(vk.handles.device, imageMemory, NULL);

  /* The same device adopted as the application's (a second context on it, as an engine plugin
   * would make on the engine's device). */
  vkcnn_adopted_device adopted;
  memset(&adopted, 0, sizeof adopted);
  adopted.get_instance_proc_addr = vk.getInstanceProcAddr;
  adopted.instance = vk.handles.instance;
  adopted.physical_device = vk.handles.physical_device;
  adopted.device = vk.handles.device;
  adopted.queue_family_index = vk.handles.queue_family_index;
  adopted.queue = vk.handles.queue;
  vkcnn_context adoptedContext;
  CHECK(vkcnn_context_adopt(NULL, NULL, &adoptedContext) == VKCNN_ERROR_INVALID_ARGUMENT);
  REQUIRE_OK(vkcnn_context_adopt(&adopted, NULL, &adoptedContext));
  vkcnn_device_capabilities adoptedCapabilities;
  REQUIRE_OK(vkcnn_context_capabilities(adoptedContext, &adoptedCapabilities));
  CHECK(adoptedCapabilities.adopted == 1);
  CHECK(strcmp(adoptedCapabilities.device_name, capabilities.device_name) == 0);
  REQUIRE_OK(vkcnn_image_create(adoptedContext, &descriptor, &image));
  REQUIRE_OK(vkcnn_image_write_floats(image, pixels, 120, VKCNN_DATA_LAYOUT_CHW, 0));
  memset(back, 0, sizeof back);
  REQUIRE_OK(vkcnn_image_read_floats(image, back, 120, VKCNN_DATA_LAYOUT_CHW, 0));
  CHECK(memcmp(pixels, back, sizeof pixels) == 0);
  vkcnn_image_destroy(image);
  vkcnn_context_destroy(adoptedContext);

  vkcnn_session_destroy(session);
  CHECK(vkcnn_context_validation_message_count(context) == 0);
  CHECK(logMessages == 0);
  vkcnn_context_destroy(context);

  /* A session with a context of its own. */
  sessionOptions.batch = 1;
  sessionOptions.context_options = &options;
  REQUIRE_OK(vkcnn_session_create(NULL, model, &sessionOptions, &session));
  vkcnn_context own;
  REQUIRE_OK(vkcnn_session_context(session, &own));
  REQUIRE_OK(vkcnn_session_load_statistics(session, &load));
  CHECK(load.context_ms > 0 && load.context_wait_ms >= 0 &&
        load.context_wait_ms <= load.context_ms && load.load_ms >= load.context_wait_ms);
  REQUIRE_OK(vkcnn_session_run(session, inputs, 1, outputs, 1));
  vkcnn_session_destroy(session);
  CHECK(vkcnn_context_validation_message_count(own) == 0);
  vkcnn_context_destroy(own);

  /* A session pool over this device twice, a piece of one image: the batch's BATCH pieces. */
  {
    vkcnn_session_pool_options poolOptions;
    vkcnn_session_pool_options_init(&poolOptions);
    CHECK(poolOptions.queue_depth == 2 && poolOptions.session.optimize == 1);
    const char* twice[2] = {capabilities.device_name, capabilities.device_name};
    poolOptions.session = sessionOptions;
    poolOptions.session.accumulator_precision = VKCNN_ACCUMULATOR_PRECISION_FLOAT32;
    poolOptions.devices = twice;
    poolOptions.device_count = 2;
    poolOptions.piece_batch = 1;
    vkcnn_session_pool pool = NULL;
    REQUIRE_OK(vkcnn_session_pool_create(model, &poolOptions, &pool));
    CHECK(vkcnn_session_pool_piece_batch(pool) == 1 && vkcnn_session_pool_live_devices(pool) == 2);
    CHECK(vkcnn_session_pool_input_count(pool) == 1 && vkcnn_session_pool_output_count(pool) == 1);
    REQUIRE_OK(vkcnn_session_pool_input_info(pool, 0, &in));
    CHECK(in.shape[0] == 1 && in.element_count == CHANNELS * PIXELS);
    memset(y, 0xff, sizeof y); /* NaN */
    REQUIRE_OK(vkcnn_session_pool_run(pool, inputs, 1, BATCH, outputs, 1));
    printf("pool: largest difference %.1e\n", worstError(x, y));
    CHECK(worstError(x, y) < 1e-4);
    CHECK(vkcnn_session_pool_run(pool, inputs, 2, BATCH, outputs, 1) ==
          VKCNN_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(vkcnn_last_error(), "input_count 2 is not the pool's 1") != NULL);
    vkcnn_session_pool_destroy(pool);
    CHECK(logMessages == 0);
    poolOptions.devices = NULL;
    CHECK(vkcnn_session_pool_create(model, &poolOptions, &pool) == VKCNN_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(vkcnn_last_error(), "devices is NULL with device_count 2") != NULL);
  }

  /* From memory (the bytes need not outlive the call), on private buffers written by copy; the
   * VkImage behind a vkcnn image. */
  {
    FILE* file = fopen(model, "rb");
    CHECK(file != NULL);
    if (!file) return 1;
    fseek(file, 0, SEEK_END);
    const long size = ftell(file);
    fseek(file, 0, SEEK_SET);
    unsigned char* bytes = malloc((size_t)size);
    CHECK(bytes && fread(bytes, 1, (size_t)size, file) == (size_t)size);
    fclose(file);
    vkcnn_context memoryContext;
    REQUIRE_OK(vkcnn_context_create(&options, &memoryContext));
    sessionOptions.batch = BATCH;
    sessionOptions.context_options = NULL;
    CHECK(vkcnn_session_create_from_memory(memoryContext, bytes, 3, &sessionOptions, &session) ==
          VKCNN_ERROR_INVALID_MODEL);
    CHECK(strstr(vkcnn_last_error(), "3 bytes are not an ONNX model") != NULL);
    REQUIRE_OK(vkcnn_session_create_from_memory(memoryContext, bytes, (size_t)size, &sessionOptions,
                                                &session));
    memset(bytes, 0, (size_t)size);
    free(bytes);
    vkcnn_buffer input, output;
    REQUIRE_OK(vkcnn_buffer_create(memoryContext, sizeof x, 0, "c private input", &input));
    REQUIRE_OK(vkcnn_buffer_create(memoryContext, sizeof y, 0, "c private output", &output));
    REQUIRE_OK(vkcnn_buffer_write(input, x, sizeof x, 0));
    CHECK(vkcnn_buffer_write(input, x, sizeof x, 4) == VKCNN_ERROR_INVALID_ARGUMENT);
    vkcnn_command_buffer cb;
    REQUIRE_OK(vkcnn_command_buffer_create(memoryContext, "c from memory", &cb));
    REQUIRE_OK(vkcnn_session_encode_buffers(session, cb, &input, 1, &output, 1));
    REQUIRE_OK(vkcnn_command_buffer_commit(cb));
    REQUIRE_OK(vkcnn_command_buffer_wait_until_completed(cb));
    vkcnn_command_buffer_destroy(cb);
    memset(y, 0xff, sizeof y);
    REQUIRE_OK(vkcnn_buffer_read(output, y, sizeof y, 0));
    printf("from memory, private buffers: largest difference %.1e\n", worstError(x, y));
    CHECK(worstError(x, y) < 1e-4);
    vkcnn_buffer_destroy(input);
    vkcnn_buffer_destroy(output);
    vkcnn_session_destroy(session);

    vkcnn_image_descriptor small = {2, 2, 4, 1, VKCNN_CHANNEL_FORMAT_FLOAT16, "c handle"};
    vkcnn_image owned;
    REQUIRE_OK(vkcnn_image_create(memoryContext, &small, &owned));
    VkImage handle = VK_NULL_HANDLE;
    REQUIRE_OK(vkcnn_image_vk_image(owned, &handle));
    CHECK(handle != VK_NULL_HANDLE);
    CHECK(vkcnn_image_vk_image(NULL, &handle) == VKCNN_ERROR_INVALID_ARGUMENT);
    vkcnn_image_destroy(owned);
    CHECK(vkcnn_context_validation_message_count(memoryContext) == 0);
    vkcnn_context_destroy(memoryContext);
  }

  if (failures)
    fprintf(stderr, "%d checks failed\n", failures);
  else
    printf("ok\n");
  return failures ? 1 : 0;
}
