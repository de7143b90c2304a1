// Errors: every failure is a vkcnn::Error carrying a code and a message that names what was wrong
// and where (the object's label, the value and the limit it broke).
#pragma once

#include <stdexcept>
#include <string>

#include "vkcnn/export.h"

namespace vkcnn {

// What kind of failure an Error is (its message says what and where).
enum class ErrorCode {
  invalidArgument,  // a value, shape, offset or descriptor field that does not fit
  limitExceeded,    // a device limit (array layers, image dimension, memory) would be broken
  unsupported,      // the device or build lacks what was asked for
  misuse,           // an object used outside its rules (temporaries, command buffer states)
  outOfMemory,      // host or device memory could not be allocated
  deviceLost,       // VK_ERROR_DEVICE_LOST or a fence timeout; sticky for the Context
  vulkan,           // any other failing Vulkan call
  io,               // a file could not be read or has the wrong size
  invalidModel,     // a model or weight file is malformed
};

// The code in words: "invalid argument", "I/O error", ...
VKCNN_API const char* toString(ErrorCode code);

// The one exception vkcnn throws: what() is "vkcnn: " and the message.
class VKCNN_API Error : public std::runtime_error {
 public:
  // `message` names what was wrong; "vkcnn: " is put before it.
  Error(ErrorCode code, const std::string& message);
  // What kind of failure it is.
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace vkcnn
