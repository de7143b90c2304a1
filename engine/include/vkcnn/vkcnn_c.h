/* vkcnn's C API: what a game-engine plugin (Unity, Godot, Unreal), another language or an engine
 * built without exceptions binds to. C11; included by vkcnn/vkcnn.h, or on its own.
 *
 * - Opaque handles (vkcnn_context, vkcnn_image, vkcnn_buffer, vkcnn_command_buffer,
 *   vkcnn_session), each made by a _create/_wrap/_adopt function and released by its _destroy
 *   (NULL is ignored). Handles share what they refer to: destroying a context while images made
 *   on it live is allowed; the device goes when the last of them does.
 * - Every function that can fail returns a vkcnn_status; VKCNN_SUCCESS is 0. Output parameters are
 *   written only on success. vkcnn_last_error() is the message of this thread's last call that
 *   returned a status (empty after a success), naming what was wrong and where.
 * - No exception crosses this API; callbacks given to it must not unwind through it either.
 * - Contexts, images, buffers and command buffers are in libvkcnn (pkg-config vkcnn,
 *   vkcnn::vkcnn); sessions (ONNX models) in libvkcnn_onnx (pkg-config vkcnn_onnx, vkcnn::onnx).
 * - Threads, lifetimes and semantics are those of the C++ types of the same names (context.h,
 *   image.h, buffer.h, command_buffer.h, session.h).
 *
 * Options structs are filled with defaults by their _init function first; later versions add
 * fields at their end only. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <vulkan/vulkan_core.h>

#include "vkcnn/export.h"
#include "vkcnn/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status and errors ---- */

/* What a call did: VKCNN_SUCCESS, or the kind of failure (vkcnn_last_error() says more). */
typedef enum vkcnn_status {
  VKCNN_SUCCESS = 0,                 /* it did what was asked */
  VKCNN_ERROR_INVALID_ARGUMENT = -1, /* a value, shape, name or NULL that does not fit */
  VKCNN_ERROR_LIMIT_EXCEEDED = -2,   /* a device limit would be broken */
  VKCNN_ERROR_UNSUPPORTED = -3,      /* the device or build lacks what was asked for */
  VKCNN_ERROR_MISUSE = -4,           /* an object used outside its rules */
  VKCNN_ERROR_OUT_OF_MEMORY = -5,    /* host or device memory, or the context's budget */
  VKCNN_ERROR_DEVICE_LOST = -6,      /* sticky for the context */
  VKCNN_ERROR_VULKAN = -7,           /* any other failing Vulkan call */
  VKCNN_ERROR_IO = -8,               /* a file could not be read or written */
  VKCNN_ERROR_INVALID_MODEL = -9,    /* a malformed model or weight file */
  VKCNN_ERROR_INTERNAL = -100,       /* anything else (a bug: please report the message) */
  VKCNN_STATUS_MAX_ENUM = 0x7FFFFFFF /* int-sized: any int passed is checked */
} vkcnn_status;

/* "success", "invalid argument", ... (static strings). */
VKCNN_API const char* vkcnn_status_name(vkcnn_status status);
/* This thread's last message (valid until this thread's next vkcnn call); "" after a success. */
VKCNN_API const char* vkcnn_last_error(void);

/* ---- devices ---- */

/* VkPhysicalDeviceType (DeviceType in context.h). */
typedef enum vkcnn_device_type {
  VKCNN_DEVICE_TYPE_OTHER = 0,            /* none of these */
  VKCNN_DEVICE_TYPE_INTEGRATED_GPU = 1,   /* a GPU sharing the host's memory */
  VKCNN_DEVICE_TYPE_DISCRETE_GPU = 2,     /* a GPU of its own memory */
  VKCNN_DEVICE_TYPE_VIRTUAL_GPU = 3,      /* a GPU of a virtual machine */
  VKCNN_DEVICE_TYPE_CPU = 4,              /* Vulkan on the CPU (lavapipe) */
  VKCNN_DEVICE_TYPE_MAX_ENUM = 0x7FFFFFFF /* int-sized: any int passed is checked */
} vkcnn_device_type;

/* A device the Vulkan loader reports. */
typedef struct vkcnn_device_info {
  uint32_t index;         /* what vkcnn_context_options.device takes as a number */
  char name[256];         /* the driver's name for it, NUL-terminated */
  vkcnn_device_type type; /* its kind */
  uint32_t api_version;   /* the Vulkan version it supports (VK_MAKE_API_VERSION) */
} vkcnn_device_info;

/* Vulkan's two-call idiom: devices NULL sets *count; else up to *count entries are written and
 * *count becomes the number written. */
VKCNN_API vkcnn_status vkcnn_enumerate_devices(vkcnn_device_info* devices, uint32_t* count);

/* ---- contexts ---- */

/* A device and queue with vkcnn's state (Context in context.h). */
typedef struct vkcnn_context_s* vkcnn_context;

/* How much a log message matters (LogSeverity in context.h). */
typedef enum vkcnn_log_severity {
  VKCNN_LOG_VERBOSE = 0,                   /* detail for debugging */
  VKCNN_LOG_INFO = 1,                      /* what happened, nothing wrong */
  VKCNN_LOG_WARNING = 2,                   /* likely a problem */
  VKCNN_LOG_ERROR = 3,                     /* a failure (validation: a broken rule) */
  VKCNN_LOG_SEVERITY_MAX_ENUM = 0x7FFFFFFF /* int-sized: any int passed is checked */
} vkcnn_log_severity;

/* Receives validation messages and vkcnn's diagnostics (calls are serialised; it must not call
 * back into vkcnn). */
typedef void (*vkcnn_log_callback)(void* user_data, vkcnn_log_severity severity,
                                   const char* message);
/* ContextOptions::memoryCallbacks: return VK_SUCCESS with *memory set, or an error code. */
typedef VkResult (*vkcnn_allocate_memory_callback)(void* user_data, VkDevice device,
                                                   const VkMemoryAllocateInfo* info,
                                                   VkDeviceMemory* memory);
typedef void (*vkcnn_free_memory_callback)(void* user_data, VkDevice device, VkDeviceMemory memory,
                                           VkDeviceSize size, uint32_t memory_type_index);

/* How a context chooses and sets up its device (ContextOptions in context.h). Initialise it with
 * vkcnn_context_options_init: -1 and 0 mean "the environment variable, else the default". */
typedef struct vkcnn_context_options {
  const char* device;         /* index or name substring; NULL or "": VKCNN_DEVICE, else default */
  int validation;             /* 1 on, 0 off, -1 (default): VKCNN_VALIDATION */
  int matrix_units;           /* 1 on, 0 off, -1 (default): on unless VKCNN_NO_MATRIX_UNITS=1 */
  int64_t fence_timeout_ms;   /* -1 (default): VKCNN_FENCE_TIMEOUT_MS, else 300000 */
  uint64_t memory_block_size; /* 0 (default): sized to the device */
  uint64_t memory_budget;     /* bytes; 0 (default): none */
  vkcnn_allocate_memory_callback allocate_memory; /* both or neither */
  vkcnn_free_memory_callback free_memory;         /* both or neither */
  void* memory_user_data;                         /* passed to both */
  vkcnn_log_callback log;                         /* NULL: standard error */
  void* log_user_data;                            /* passed to log */
  int winograd; /* 1 on, 0 off, -1 (default): on unless VKCNN_NO_WINOGRAD=1 (ContextOptions) */
  /* How long a wait for the GPU polls the fence before it blocks, in microseconds; -1 (default):
     VKCNN_WAIT_SPIN_US, else 2000 on GPUs and 0 on CPU devices (ContextOptions). */
  int64_t wait_spin_us;
} vkcnn_context_options;

/* Every field to its default (the -1s and zeros above). */
VKCNN_API void vkcnn_context_options_init(vkcnn_context_options* options);

/* options may be NULL (defaults). */
VKCNN_API vkcnn_status vkcnn_context_create(const vkcnn_context_options* options,
                                            vkcnn_context* context);

/* An application's own Vulkan objects (AdoptedDevice in context.h): vkcnn never destroys them. */
typedef struct vkcnn_adopted_device {
  PFN_vkGetInstanceProcAddr get_instance_proc_addr;                  /* the loader entry point */
  VkInstance instance;                                               /* the application's */
  VkPhysicalDevice physical_device;                                  /* the device is on */
  VkDevice device;                                                   /* the application's */
  uint32_t queue_family_index;                                       /* of queue, with compute */
  VkQueue queue;                                                     /* where vkcnn submits */
  const VkPhysicalDeviceVulkan11Features* enabled_vulkan11_features; /* may be NULL */
  const VkPhysicalDeviceVulkan12Features* enabled_vulkan12_features; /* may be NULL */
  int debug_utils_enabled;                          /* VK_EXT_debug_utils on the instance */
  int cooperative_matrix_nv_enabled;                /* VK_NV_cooperative_matrix on the device */
  const VkPhysicalDeviceFeatures* enabled_features; /* may be NULL (AdoptedDevice) */
} vkcnn_adopted_device;

/* A context on the application's own objects (Context::adopt); options may be NULL. */
VKCNN_API vkcnn_status vkcnn_context_adopt(const vkcnn_adopted_device* device,
                                           const vkcnn_context_options* options,
                                           vkcnn_context* context);
/* Releases this handle (NULL is ignored); the device goes with the last object on it. */
VKCNN_API void vkcnn_context_destroy(vkcnn_context context);

/* What the context's device is and offers (DeviceCapabilities in context.h). */
typedef struct vkcnn_device_capabilities {
  char device_name[256];                                      /* NUL-terminated */
  char driver_name[256];                                      /* NUL-terminated */
  vkcnn_device_type device_type;                              /* its kind */
  uint32_t vendor_id, device_id, api_version, driver_version; /* as Vulkan reports them */
  /* 1 or 0: float16 arithmetic and 16-bit storage enabled, convolutions on the matrix units,
   * the validation layer on, the device adopted from the application. */
  int shader_float16, storage_16bit, matrix_units, validation_enabled, adopted;
  uint32_t max_image_array_layers, max_image_dimension_2d; /* the device's image limits */
} vkcnn_device_capabilities;

/* Fills *capabilities. */
VKCNN_API vkcnn_status vkcnn_context_capabilities(vkcnn_context context,
                                                  vkcnn_device_capabilities* capabilities);

/* The Vulkan objects behind a context, for interop (still owned by vkcnn unless adopted). */
typedef struct vkcnn_vulkan_handles {
  VkInstance instance;              /* the instance */
  VkPhysicalDevice physical_device; /* the physical device */
  VkDevice device;                  /* the logical device */
  uint32_t queue_family_index;      /* of queue */
  VkQueue queue;                    /* where vkcnn submits */
} vkcnn_vulkan_handles;

/* Fills *handles. */
VKCNN_API vkcnn_status vkcnn_context_vulkan_handles(vkcnn_context context,
                                                    vkcnn_vulkan_handles* handles);

/* The context's device memory now (MemoryStatistics in context.h). */
typedef struct vkcnn_memory_statistics {
  uint64_t device_bytes_allocated;      /* all VkDeviceMemory the context holds */
  uint64_t peak_device_bytes_allocated; /* the most that has been */
  uint64_t device_bytes_in_use;         /* handed out to images, buffers, pools */
  uint64_t device_bytes_cached;         /* kept for reuse; trim frees it */
  uint64_t memory_budget;               /* 0: none */
  uint64_t memory_block_size;           /* the largest shared block */
  uint32_t memory_objects;              /* VkDeviceMemory objects held */
  uint32_t live_allocations;            /* allocations handed out now */
  uint32_t pipelines;                   /* compute pipelines created */
} vkcnn_memory_statistics;

/* Fills *statistics. */
VKCNN_API vkcnn_status vkcnn_context_memory_statistics(vkcnn_context context,
                                                       vkcnn_memory_statistics* statistics);
/* Frees the memory kept only for reuse (Context::trimTemporaryMemory). */
VKCNN_API vkcnn_status vkcnn_context_trim_temporary_memory(vkcnn_context context);
/* Blocks until the device is idle. */
VKCNN_API vkcnn_status vkcnn_context_wait_idle(vkcnn_context context);
/* Validation messages (warning or error) seen so far; 0 for NULL. */
VKCNN_API uint64_t vkcnn_context_validation_message_count(vkcnn_context context);

/* ---- images ---- */

/* A batch of images of feature channels (Image in image.h). */
typedef struct vkcnn_image_s* vkcnn_image;

/* How an image stores its channels (ChannelFormat in image.h). */
typedef enum vkcnn_channel_format {
  VKCNN_CHANNEL_FORMAT_FLOAT16 = 0,          /* 2 bytes, 11 bits of precision: the default */
  VKCNN_CHANNEL_FORMAT_FLOAT32 = 1,          /* 4 bytes */
  VKCNN_CHANNEL_FORMAT_UNORM8 = 2,           /* 1 byte, 0..1: input pictures */
  VKCNN_CHANNEL_FORMAT_MAX_ENUM = 0x7FFFFFFF /* int-sized: any int passed is checked */
} vkcnn_channel_format;

/* The order of host data (DataLayout in image.h). */
typedef enum vkcnn_data_layout {
  VKCNN_DATA_LAYOUT_CHW = 0,              /* FeatureChannelsxHeightxWidth: channel planes */
  VKCNN_DATA_LAYOUT_HWC = 1,              /* HeightxWidthxFeatureChannels: interleaved */
  VKCNN_DATA_LAYOUT_MAX_ENUM = 0x7FFFFFFF /* int-sized: any int passed is checked */
} vkcnn_data_layout;

/* An image's shape and format. */
typedef struct vkcnn_image_descriptor {
  uint32_t width, height, feature_channels, number_of_images; /* number_of_images 0 means 1 */
  vkcnn_channel_format channel_format;                        /* storage */
  const char* label;                                          /* may be NULL */
} vkcnn_image_descriptor;

/* A new image, zero-filled. */
VKCNN_API vkcnn_status vkcnn_image_create(vkcnn_context context,
                                          const vkcnn_image_descriptor* descriptor,
                                          vkcnn_image* image);
/* Image::wrap: the application's VkImage, in `layout` whenever vkcnn uses it (GENERAL for images
 * kernels write); vkcnn never destroys it. */
VKCNN_API vkcnn_status vkcnn_image_wrap(vkcnn_context context, VkImage vk_image, VkFormat format,
                                        uint32_t width, uint32_t height, uint32_t array_layers,
                                        uint32_t feature_channels, VkImageUsageFlags usage,
                                        VkImageLayout layout, const char* label,
                                        vkcnn_image* image);
VKCNN_API void vkcnn_image_destroy(vkcnn_image image);
/* Its shape and format (label NULL). */
VKCNN_API vkcnn_status vkcnn_image_descriptor_of(vkcnn_image image,
                                                 vkcnn_image_descriptor* descriptor);
VKCNN_API vkcnn_status vkcnn_image_vk_image(vkcnn_image image, VkImage* vk_image);
/* float32 host data of image `image_index`, exactly width*height*feature_channels floats. */
VKCNN_API vkcnn_status vkcnn_image_write_floats(vkcnn_image image, const float* data, size_t count,
                                                vkcnn_data_layout layout, uint32_t image_index);
VKCNN_API vkcnn_status vkcnn_image_read_floats(vkcnn_image image, float* data, size_t count,
                                               vkcnn_data_layout layout, uint32_t image_index);

/* ---- buffers ---- */

/* A device buffer (Buffer in buffer.h). */
typedef struct vkcnn_buffer_s* vkcnn_buffer;

/* `shared`: host-mapped for life (vkcnn_buffer_contents); else device-local. Zero-filled. */
VKCNN_API vkcnn_status vkcnn_buffer_create(vkcnn_context context, size_t size, int shared,
                                           const char* label, vkcnn_buffer* buffer);
/* Bytes [offset, +size) of the application's VkBuffer (STORAGE_BUFFER usage). */
VKCNN_API vkcnn_status vkcnn_buffer_wrap(vkcnn_context context, VkBuffer vk_buffer,
                                         VkDeviceSize offset, VkDeviceSize size,
                                         VkBufferUsageFlags usage, const char* label,
                                         vkcnn_buffer* buffer);
VKCNN_API void vkcnn_buffer_destroy(vkcnn_buffer buffer);
VKCNN_API vkcnn_status vkcnn_buffer_contents(vkcnn_buffer buffer, void** contents);
VKCNN_API vkcnn_status vkcnn_buffer_write(vkcnn_buffer buffer, const void* data, size_t bytes,
                                          size_t offset);
VKCNN_API vkcnn_status vkcnn_buffer_read(vkcnn_buffer buffer, void* data, size_t bytes,
                                         size_t offset);

/* ---- command buffers ---- */

/* Work recorded for the context's queue (CommandBuffer in command_buffer.h). */
typedef struct vkcnn_command_buffer_s* vkcnn_command_buffer;

/* A new command buffer in the encoding state; label may be NULL. */
VKCNN_API vkcnn_status vkcnn_command_buffer_create(vkcnn_context context, const char* label,
                                                   vkcnn_command_buffer* command_buffer);
/* CommandBuffer::wrap: records into the application's VkCommandBuffer (in the recording state);
 * call vkcnn_command_buffer_end_encoding before vkEndCommandBuffer, submit it yourself, and
 * vkcnn_command_buffer_mark_completed once that submission finished. */
VKCNN_API vkcnn_status vkcnn_command_buffer_wrap(vkcnn_context context,
                                                 VkCommandBuffer vk_command_buffer,
                                                 const char* label,
                                                 vkcnn_command_buffer* command_buffer);
VKCNN_API void vkcnn_command_buffer_destroy(vkcnn_command_buffer command_buffer);
VKCNN_API vkcnn_status vkcnn_command_buffer_commit(vkcnn_command_buffer command_buffer);
VKCNN_API vkcnn_status
vkcnn_command_buffer_wait_until_completed(vkcnn_command_buffer command_buffer);
VKCNN_API vkcnn_status vkcnn_command_buffer_end_encoding(vkcnn_command_buffer command_buffer);
VKCNN_API vkcnn_status vkcnn_command_buffer_mark_completed(vkcnn_command_buffer command_buffer);

/* ---- sessions (libvkcnn_onnx) ---- */

/* An ONNX model loaded and compiled (Session in session.h). */
typedef struct vkcnn_session_s* vkcnn_session;

/* The shape of one named input: how its dynamic dimensions get their size. */
typedef struct vkcnn_input_shape {
  const char* name;    /* the ONNX input name */
  const int64_t* dims; /* rank dimensions, every one listed */
  uint32_t rank;       /* of the input */
} vkcnn_input_shape;

/* What convolutions accumulate in (AccumulatorPrecision in convolution.h): FLOAT16 is faster on
 * the matrix units and less accurate; paths without a float16 accumulator ignore it. */
typedef enum vkcnn_accumulator_precision {
  VKCNN_ACCUMULATOR_PRECISION_FLOAT32 = 0,          /* the default */
  VKCNN_ACCUMULATOR_PRECISION_FLOAT16 = 1,          /* faster on the matrix units, less accurate */
  VKCNN_ACCUMULATOR_PRECISION_MAX_ENUM = 0x7FFFFFFF /* int-sized: any int passed is checked */
} vkcnn_accumulator_precision;

/* How a session loads its model (SessionOptions in session.h). */
typedef struct vkcnn_session_options {
  vkcnn_channel_format precision;        /* FLOAT16 (default) or FLOAT32 */
  uint32_t batch;                        /* 0 (default): the model's, or 1 where dynamic */
  const vkcnn_input_shape* input_shapes; /* input_shape_count entries; may be NULL */
  uint32_t input_shape_count;            /* entries of input_shapes */
  int optimize;                          /* 1 (default) */
  const char* label;                     /* may be NULL */
  /* For the context a session makes itself (a NULL context argument); NULL: defaults. */
  const vkcnn_context_options* context_options;
  /* SessionOptions::accumulatorPrecision: FLOAT32 (default) or FLOAT16. */
  vkcnn_accumulator_precision accumulator_precision;
} vkcnn_session_options;

/* Every field to its default: FLOAT16, the model's batch, no shapes, optimize 1, FLOAT32
 * accumulators. */
VKCNN_API void vkcnn_session_options_init(vkcnn_session_options* options);
/* context NULL: the session makes its own (vkcnn_session_context gives it). options may be NULL. */
VKCNN_API vkcnn_status vkcnn_session_create(vkcnn_context context, const char* path,
                                            const vkcnn_session_options* options,
                                            vkcnn_session* session);
VKCNN_API vkcnn_status vkcnn_session_create_from_memory(vkcnn_context context, const void* bytes,
                                                        size_t size,
                                                        const vkcnn_session_options* options,
                                                        vkcnn_session* session);
VKCNN_API void vkcnn_session_destroy(vkcnn_session session);
/* A new handle to the session's context (destroy it too). */
VKCNN_API vkcnn_status vkcnn_session_context(vkcnn_session session, vkcnn_context* context);

/* One input or output; the pointers stay valid while the session lives. */
typedef struct vkcnn_tensor_info {
  const char* name;     /* the ONNX name */
  const int64_t* shape; /* the ONNX shape of the whole batch */
  uint32_t rank;        /* entries of shape */
  size_t element_count; /* floats in a host tensor of it */
  uint32_t width, height, feature_channels, number_of_images; /* its Images, per chunk */
} vkcnn_tensor_info;

/* The session's inputs and outputs (0 for NULL), and the info of one by index (an index out of
 * range is VKCNN_ERROR_INVALID_ARGUMENT). */
VKCNN_API uint32_t vkcnn_session_input_count(vkcnn_session session);
VKCNN_API uint32_t vkcnn_session_output_count(vkcnn_session session);
VKCNN_API vkcnn_status vkcnn_session_input_info(vkcnn_session session, uint32_t index,
                                                vkcnn_tensor_info* info);
VKCNN_API vkcnn_status vkcnn_session_output_info(vkcnn_session session, uint32_t index,
                                                 vkcnn_tensor_info* info);
/* Where the session's load went, in milliseconds (session.h, SessionLoadStatistics); the first
 * run's figures are 0 until vkcnn_session_run was called. context_ms and context_wait_ms: a
 * session on a context of its own (vkcnn_session_create with a NULL context) starts the context
 * while the model loads; its creation and the part the load waited for (0 otherwise). */
typedef struct vkcnn_load_statistics {
  /* The load's phases and its total (load_ms), as SessionLoadStatistics names them. */
  double read_ms, parse_ms, check_ms, import_ms, shape_inference_ms, optimize_ms, pack_ms,
      upload_ms, images_ms, load_ms;
  double first_run_ms, pipelines_ms;                            /* the first run, its pipelines */
  uint64_t pipelines_created, upload_bytes, upload_submissions; /* counts and bytes */
  int pipeline_cache_loaded;          /* 1: the context read a pipeline cache file */
  double context_ms, context_wait_ms; /* see above */
} vkcnn_load_statistics;
/* Fills *statistics. */
VKCNN_API vkcnn_status vkcnn_session_load_statistics(vkcnn_session session,
                                                     vkcnn_load_statistics* statistics);
/* Host to host in one submission: inputs[i] holds input i's element_count floats (row-major),
 * outputs[o] receives output o's; input_count and output_count must be the session's. */
VKCNN_API vkcnn_status vkcnn_session_run(vkcnn_session session, const float* const* inputs,
                                         uint32_t input_count, float* const* outputs,
                                         uint32_t output_count);
/* GPU-resident, into the caller's command buffer (committed by the caller): on images shaped as
 * the infos say (one chunk), or on buffers holding float32 NCHW tensors of the whole batch. */
VKCNN_API vkcnn_status vkcnn_session_encode_images(vkcnn_session session,
                                                   vkcnn_command_buffer command_buffer,
                                                   const vkcnn_image* inputs, uint32_t input_count,
                                                   const vkcnn_image* outputs,
                                                   uint32_t output_count);
VKCNN_API vkcnn_status vkcnn_session_encode_buffers(
    vkcnn_session session, vkcnn_command_buffer command_buffer, const vkcnn_buffer* inputs,
    uint32_t input_count, const vkcnn_buffer* outputs, uint32_t output_count);

/* ---- several devices: vkcnn_session_pool (SessionPool in session_pool.h) ---- */

/* One model on several devices: every device's session is compiled for piece_batch images; a
 * run's batch is cut into pieces that the devices take as they become free; a lost device leaves
 * the pool and its piece runs on another. */
typedef struct vkcnn_session_pool_s* vkcnn_session_pool;

typedef struct vkcnn_session_pool_options {
  /* Every device's session (its batch is ignored; its context_options are each device's base). */
  vkcnn_session_options session;
  /* Device indices or name substrings, device_count of them (one may repeat); NULL: every GPU. */
  const char* const* devices;
  uint32_t device_count;
  uint32_t piece_batch; /* images per piece; 0: the model's batch, or 1 where dynamic */
  uint32_t queue_depth; /* queued pieces per device beyond those running; 2 by default */
} vkcnn_session_pool_options;

/* Every field to its default (vkcnn_session_options_init for session). */
VKCNN_API void vkcnn_session_pool_options_init(vkcnn_session_pool_options* options);
VKCNN_API vkcnn_status vkcnn_session_pool_create(const char* path,
                                                 const vkcnn_session_pool_options* options,
                                                 vkcnn_session_pool* pool);
VKCNN_API void vkcnn_session_pool_destroy(vkcnn_session_pool pool);
/* Images per piece, devices not lost (0 for a NULL pool). */
VKCNN_API uint32_t vkcnn_session_pool_piece_batch(vkcnn_session_pool pool);
VKCNN_API uint32_t vkcnn_session_pool_live_devices(vkcnn_session_pool pool);
VKCNN_API uint32_t vkcnn_session_pool_input_count(vkcnn_session_pool pool);
VKCNN_API uint32_t vkcnn_session_pool_output_count(vkcnn_session_pool pool);
/* Of one piece, as vkcnn_session_input_info (pointers valid for the pool's life). */
VKCNN_API vkcnn_status vkcnn_session_pool_input_info(vkcnn_session_pool pool, uint32_t index,
                                                     vkcnn_tensor_info* info);
VKCNN_API vkcnn_status vkcnn_session_pool_output_info(vkcnn_session_pool pool, uint32_t index,
                                                      vkcnn_tensor_info* info);
/* `pieces` pieces at once, on every live device: inputs[i] holds pieces times input i's
 * element_count floats, outputs[o] receives pieces times output o's, pieces in order. */
VKCNN_API vkcnn_status vkcnn_session_pool_run(vkcnn_session_pool pool, const float* const* inputs,
                                              uint32_t input_count, uint32_t pieces,
                                              float* const* outputs, uint32_t output_count);

#ifdef __cplusplus
}
#endif
