#include "vkcnn/error.h"

namespace vkcnn {

const char* toString(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalidArgument:
      return "invalid argument";
    case ErrorCode::limitExceeded:
      return "limit exceeded";
    case ErrorCode::unsupported:
      return "unsupported";
    case ErrorCode::misuse:
      return "misuse";
    case ErrorCode::outOfMemory:
      return "out of memory";
    case ErrorCode::deviceLost:
      return "device lost";
    case ErrorCode::vulkan:
      return "Vulkan error";
    case ErrorCode::io:
      return "I/O error";
    case ErrorCode::invalidModel:
      return "invalid model";
  }
  return "unknown error";
}

Error::Error(ErrorCode code, const std::string& message)
    : std::runtime_error(std::string("vkcnn: ") + message), code_(code) {}

}  // namespace vkcnn
