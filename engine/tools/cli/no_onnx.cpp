// The model commands of a vkcnn built without ONNX import (VKCNN_WITH_ONNX=OFF; the Windows build
// is one, since Debian has no Windows build of protobuf or onnx). tune, ops and compile say that
// ONNX import is not in this build, naming the model they were given, and so does inspect unless
// the model is a compiled one (.vkcnn, which inspect_compiled.cpp describes); run, bench and
// profile are built as they are and take .vkcnn models (common.cpp's prepareModel refuses an ONNX
// one with the same message). Built instead of tune.cpp, inspect.cpp and compile.cpp
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

int tune(const std::vector<std::string>& args) {
  withoutOnnx(args);
}
int inspect(const std::vector<std::string>& args) {
  for (const std::string& a : args)
    if (a.rfind("--", 0) != 0 && isCompiledFile(a))
      return inspectCompiled(a, Arguments("inspect", args, {{"--json", OptionKind::value}}));
  withoutOnnx(args);
}
int ops(const std::vector<std::string>& args) {
  withoutOnnx(args);
}
int compile(const std::vector<std::string>& args) {
  withoutOnnx(args);
}

}  // namespace vkcnn::cli
