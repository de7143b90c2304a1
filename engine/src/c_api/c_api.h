// What the C API's translation units share: the handle structs (each holds a C++ handle, which
// shares ownership as the C++ types do) and the guard that turns every exception into a status
// and this thread's last-error message. Not installed.
#pragma once

#include <exception>
#include <new>
#include <string>

#include "vkcnn/buffer.h"
#include "vkcnn/command_buffer.h"
#include "vkcnn/context.h"
#include "vkcnn/error.h"
#include "vkcnn/image.h"
#include "vkcnn/vkcnn_c.h"

struct vkcnn_context_s {
  vkcnn::Context context;
};
struct vkcnn_image_s {
  vkcnn::Image image;
};
struct vkcnn_buffer_s {
  vkcnn::Buffer buffer;
};
struct vkcnn_command_buffer_s {
  vkcnn::CommandBuffer commandBuffer;
};

namespace vkcnn::capi {

// Sets this thread's last-error message (one per process: libvkcnn_onnx calls this too), the
// library's C++ option names (ContextOptions::device) given as the C API's fields
// (vkcnn_context_options.device).
VKCNN_API vkcnn_status setLastError(vkcnn_status status, const char* message) noexcept;
VKCNN_API vkcnn_status statusOf(ErrorCode code) noexcept;
VKCNN_API ContextOptions contextOptions(const vkcnn_context_options* options);

// Runs `body`; any exception becomes a status and the message. `function` names the C function
// in messages about its own arguments.
template <typename Body>
vkcnn_status guarded(Body&& body) noexcept {
  try {
    body();
    return setLastError(VKCNN_SUCCESS, "");
  } catch (const Error& e) {
    return setLastError(statusOf(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    return setLastError(VKCNN_ERROR_OUT_OF_MEMORY, "vkcnn: out of host memory");
  } catch (const std::exception& e) {
    return setLastError(VKCNN_ERROR_INTERNAL, (std::string("vkcnn: ") + e.what()).c_str());
  } catch (...) {
    return setLastError(VKCNN_ERROR_INTERNAL, "vkcnn: unknown exception");
  }
}

// An invalidArgument error for a NULL (or otherwise unusable) argument of `function`.
[[noreturn]] inline void badArgument(const char* function, const std::string& what) {
  throw Error(ErrorCode::invalidArgument, std::string(function) + ": " + what);
}
template <typename T>
T& need(T* pointer, const char* function, const char* name) {
  if (!pointer) badArgument(function, std::string(name) + " is NULL");
  return *pointer;
}

inline ChannelFormat channelFormatOf(vkcnn_channel_format format, const char* function) {
  switch (format) {
    case VKCNN_CHANNEL_FORMAT_FLOAT16:
      return ChannelFormat::float16;
    case VKCNN_CHANNEL_FORMAT_FLOAT32:
      return ChannelFormat::float32;
    case VKCNN_CHANNEL_FORMAT_UNORM8:
      return ChannelFormat::unorm8;
    default:  // a caller's int out of the enum
      break;
  }
  badArgument(function, "channel format " + std::to_string(int(format)) + " is not one of vkcnn's");
}

}  // namespace vkcnn::capi
