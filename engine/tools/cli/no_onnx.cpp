// The model commands of a vkcnn built without ONNX import (VKCNN_WITH_ONNX=OFF; the Windows build
// is one, since Debian has no Windows build of protobuf or onnx). run, bench, profile, tune,
// inspect, ops and compile say that ONNX import is not in this build, naming the model they were
// given.
// Built instead of run.cpp, bench.cpp, profile.cpp, tune.cpp and inspect.cpp
// (engine/CMakeLists.txt).
#include "cli.h"

namespace vkcnn::cli {

namespace {

[[noreturn]] void withoutOnnx(const std::vector<std::string>& args) {
  std::string model;
  for (const std::string& a : args)
    if (endsWith(lower(a), ".onnx")) {
      model = a + ": ";
      break;
    }
  throw Error(ErrorCode::unsupported,
              model +
                  "ONNX import is not in this build of vkcnn (it was configured with "
                  "VKCNN_WITH_ONNX=OFF; a build with Debian's libonnx-dev and libprotobuf-dev "
                  "has it)");
}

}  // namespace

int run(const std::vector<std::string>& args) {
  withoutOnnx(args);
}
int bench(const std::vector<std::string>& args) {
  withoutOnnx(args);
}
int profile(const std::vector<std::string>& args) {
  withoutOnnx(args);
}
int tune(const std::vector<std::string>& args) {
  withoutOnnx(args);
}
int inspect(const std::vector<std::string>& args) {
  withoutOnnx(args);
}
int ops(const std::vector<std::string>& args) {
  withoutOnnx(args);
}
int compile(const std::vector<std::string>& args) {
  withoutOnnx(args);
}

}  // namespace vkcnn::cli
