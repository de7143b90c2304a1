// The vkcnn tool's shared pieces (cli.h): options, Context and Session from a command line, input
// files, checked output paths, JSON, progress.
#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>

#include "archive/archive.h"
#include "cli.h"
#include "graph/serialize.h"
#include "npy.h"
#include "picture.h"
#include "platform/platform.h"
#include "vulkan/overrides.h"

namespace vkcnn::cli {

// ---- arguments ----------------------------------------------------------------------------------

Arguments::Arguments(std::string command, const std::vector<std::string>& args,
                     const std::vector<Option>& options)
    : command_(std::move(command)) {
  auto find = [&](const std::string& name) -> const Option* {
    for (const Option& o : options)
      if (o.name == name) return &o;
    return nullptr;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      values_["--help"].push_back({});
      continue;
    }
    if (a.rfind("--", 0) != 0 || a == "--") {
      positional_.push_back(a);
      continue;
    }
    const size_t eq = a.find('=');
    const std::string name = a.substr(0, eq);
    const Option* option = find(name);
    if (!option) throw UsageError("unknown option '" + name + "'");
    std::string value;
    if (option->kind == OptionKind::flag) {
      if (eq != std::string::npos) throw UsageError(name + " takes no value");
    } else if (eq != std::string::npos) {
      value = a.substr(eq + 1);
    } else {
      if (i + 1 >= args.size()) throw UsageError(name + " needs a value");
      value = args[++i];
    }
    auto& list = values_[name];
    if (!list.empty() && option->kind != OptionKind::repeated)
      throw UsageError(name + " is given twice");
    list.push_back(value);
  }
}

bool Arguments::has(const std::string& name) const {
  return values_.count(name) != 0;
}

std::string Arguments::get(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second.front();
}

std::vector<std::string> Arguments::all(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

long Arguments::number(const std::string& name, long fallback, long minimum) const {
  if (!has(name)) return fallback;
  const std::string text = get(name);
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end || errno == ERANGE || v < minimum || v > (1L << 30))
    throw UsageError(name + " needs a whole number from " + std::to_string(minimum) + " to " +
                     std::to_string(1L << 30) + ", not '" + text + "'");
  return v;
}

double Arguments::real(const std::string& name, double fallback, double minimum) const {
  if (!has(name)) return fallback;
  const std::string text = get(name);
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end || !std::isfinite(v) || v < minimum)
    throw UsageError(name + " needs a number of at least " + Json::number(minimum) + ", not '" +
                     text + "'");
  return v;
}

std::string Arguments::model() const {
  if (positional_.empty()) throw UsageError(command_ + " needs a model file (MODEL.onnx)");
  if (positional_.size() > 1) throw UsageError("unexpected argument '" + positional_[1] + "'");
  checkReadable(positional_[0], "the model");
  return positional_[0];
}

std::vector<Option> modelOptions() {
  return {{"--device", OptionKind::value},        {"--fp16", OptionKind::flag},
          {"--fp32", OptionKind::flag},           {"--accumulate", OptionKind::value},
          {"--batch", OptionKind::value},         {"--shape", OptionKind::repeated},
          {"--device-profile", OptionKind::value}};
}

const char* const kModelOptionsHelp =
    "  --device D          device index or name substring (default: VKCNN_DEVICE, else the\n"
    "                      first discrete GPU, then integrated, then CPU; see vkcnn info)\n"
    "  --device-profile P  native or mobile: run within a mobile-class device's limits (256\n"
    "                      array layers, 16 KiB shared memory, no float16 arithmetic, ...;\n"
    "                      default: VKCNN_DEVICE_PROFILE, else native)\n"
    "  --fp16 | --fp32     storage of intermediate images (default fp16)\n"
    "  --accumulate A      fp32 (default) or fp16: what the matrix units' convolutions sum in\n"
    "                      (fp16 is faster and less accurate; fp32 storage ignores it)\n"
    "  --batch N           images per inference for a model whose batch is dynamic (default 1)\n"
    "  --shape NAME=DIMS   the shape of input NAME, e.g. --shape input=1x3x48x320: sizes for its\n"
    "                      dynamic dimensions (once per input)\n";

// ---- context ------------------------------------------------------------------------------------

namespace {
std::atomic<uint64_t> validationMessageCounter{0};
}

uint64_t validationMessages() {
  return validationMessageCounter.load();
}

ContextOptions contextOptions(const Arguments& args) {
  ContextOptions options;
  // The device is checked here so that the message names the option the user gave.
  std::string wanted = args.get("--device");
  std::string source = "--device";
  if (wanted.empty() && !detail::processOverrides().device.empty()) {
    wanted = detail::processOverrides().device;
    source = "VKCNN_DEVICE";
  }
  if (!wanted.empty()) {
    const auto devices = Context::enumerateDevices();
    const bool numeric = std::all_of(wanted.begin(), wanted.end(), ::isdigit);
    bool found = false;
    for (const auto& d : devices)
      found |= numeric ? wanted.size() <= 9 && std::stoul(wanted) == d.index
                       : d.name.find(wanted) != std::string::npos;
    if (!found) {
      std::string names;
      for (const auto& d : devices)
        names += (names.empty() ? "" : ", ") + std::to_string(d.index) + ": " + d.name;
      throw UsageError(source + " '" + wanted + "' matches no device (" +
                       (names.empty() ? "none" : names) + ")");
    }
    options.device = wanted;
  }
  const std::string profile = args.get("--device-profile");
  if (profile == "mobile")
    options.deviceProfile = DeviceProfile::mobile;
  else if (profile == "native")
    options.deviceProfile = DeviceProfile::native;
  else if (!profile.empty())
    throw UsageError("--device-profile '" + profile +
                     "' is not a device profile (native or mobile)");
  options.log = [](LogSeverity severity, std::string_view message) {
    if (severity < LogSeverity::warning) return;
    if (message.rfind("validation: ", 0) == 0) ++validationMessageCounter;
    std::fprintf(stderr, "vkcnn: %.*s\n", int(message.size()), message.data());
  };
  return options;
}

Context makeContext(const Arguments& args) {
  Context context(contextOptions(args));
  // TEST HOOK (tests/test_cli.cpp): a validation-layer message sent through the Context's own
  // debug messenger, to check that it changes the exit status.
  if (detail::processOverrides().cliInjectValidationMessage &&
      context.capabilities().validationEnabled) {
    void* loader = nullptr;
    auto gipa = reinterpret_cast<PFN_vkGetInstanceProcAddr>(platform::openVulkanLoader(&loader));
    auto submit = gipa ? reinterpret_cast<PFN_vkSubmitDebugUtilsMessageEXT>(
                             gipa(context.vkInstance(), "vkSubmitDebugUtilsMessageEXT"))
                       : nullptr;
    if (submit) {
      VkDebugUtilsMessengerCallbackDataEXT data{
          VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CALLBACK_DATA_EXT};
      data.pMessage = "a message injected by VKCNN_CLI_INJECT_VALIDATION_MESSAGE=1";
      submit(context.vkInstance(), VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
             VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT, &data);
    }
    platform::closeLibrary(loader);
  }
  return context;
}

// ---- the model and its inputs -------------------------------------------------------------------

std::string shapeText(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

// Loading a model: a compiled one (.vkcnn) with the core library alone; an ONNX one needs ONNX
// import (VKCNN_WITH_ONNX), and a build without it says so, naming the model.
namespace {

std::string declaredText(const OnnxTensorInfo& info) {
  std::string s = "[";
  for (size_t i = 0; i < info.dims.size(); ++i) {
    s += i ? ", " : "";
    if (info.dims[i] >= 0)
      s += std::to_string(info.dims[i]);
    else
      s += i < info.dimParams.size() && !info.dimParams[i].empty() ? info.dimParams[i] : "?";
  }
  return s + "]";
}

std::string inputNames(const OnnxModelInfo& m) {
  std::string s;
  for (const auto& i : m.inputs) s += (s.empty() ? "'" : ", '") + i.name + "'";
  return s;
}

const OnnxTensorInfo* findInput(const OnnxModelInfo& m, const std::string& name) {
  for (const auto& i : m.inputs)
    if (i.name == name) return &i;
  return nullptr;
}

std::vector<int64_t> parseDims(const std::string& text, const std::string& option) {
  std::vector<int64_t> dims;
  size_t start = 0;
  while (true) {
    const size_t end = text.find_first_of("x,", start);
    const std::string item = text.substr(start, end == std::string::npos ? end : end - start);
    char* stop = nullptr;
    errno = 0;
    const long long v = std::strtoll(item.c_str(), &stop, 10);
    if (item.empty() || *stop || errno == ERANGE || v < 1 || v > (1LL << 24))
      throw UsageError(option + ": '" + item + "' is not a size from 1 to 16777216 (sizes are " +
                       "separated by x, e.g. 1x3x224x224)");
    dims.push_back(v);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return dims;
}

// `dims` for `input` must keep the model's rank and static sizes.
void checkAgainstModel(const OnnxTensorInfo& input, const std::vector<int64_t>& dims,
                       const std::string& what) {
  if (input.dims.empty()) return;  // no declared shape: anything goes
  if (dims.size() != input.dims.size())
    throw UsageError(what + " has rank " + std::to_string(dims.size()) +
                     " but the model's input '" + input.name + "' is " + declaredText(input) +
                     " (rank " + std::to_string(input.dims.size()) + ")");
  for (size_t k = 0; k < dims.size(); ++k)
    if (input.dims[k] >= 0 && input.dims[k] != dims[k])
      throw UsageError(what + ": dimension " + std::to_string(k) + " of input '" + input.name +
                       "' " + declaredText(input) + " is " + std::to_string(input.dims[k]) +
                       " in the model, not " + std::to_string(dims[k]));
}

// --accumulate fp16|fp32 (float32 when absent).
AccumulatorPrecision accumulatorPrecisionOf(const Arguments& args) {
  if (!args.has("--accumulate")) return AccumulatorPrecision::float32;
  const std::string value = args.get("--accumulate");
  if (value == "fp32") return AccumulatorPrecision::float32;
  if (value == "fp16") return AccumulatorPrecision::float16;
  throw UsageError("--accumulate takes fp16 or fp32, not '" + value + "'");
}

}  // namespace

bool isCompiledFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::array<char, sizeof(archive::kMagic)> magic{};
  in.read(magic.data(), magic.size());
  return in &&
         detail::isCompiledModel({reinterpret_cast<const uint8_t*>(magic.data()), magic.size()});
}

// A .vkcnn file's inputs and outputs, its shapes all known; --fp16 or --fp32 must be what it was
// compiled for (the precision is part of the compiled model).
OnnxModelInfo compiledInfo(const std::string& path, const Arguments& args) {
  const archive::Archive file = archive::Archive::open(path);
  const std::string precision = file.provenance().precision;
  for (const char* option : {"--fp16", "--fp32"})
    if (args.has(option) && precision != std::string(option).substr(2))
      throw UsageError(std::string(option) + ": " + path + " was compiled for " + precision +
                       " (compile it again with " + option + ")");
  return detail::readModelInfo(file);
}

ModelSetup prepareModel(const Arguments& args, bool takesInputFiles) {
  ModelSetup s;
  s.path = args.model();
  if (args.has("--fp16") && args.has("--fp32"))
    throw UsageError("--fp16 and --fp32 exclude each other");
  s.options.precision = args.has("--fp32") ? ChannelFormat::float32 : ChannelFormat::float16;
  s.options.accumulatorPrecision = accumulatorPrecisionOf(args);
#if VKCNN_WITH_ONNX
  s.declared = isCompiledFile(s.path) ? compiledInfo(s.path, args) : inspectOnnx(s.path);
#else
  if (!isCompiledFile(s.path))
    throw Error(ErrorCode::unsupported,
                s.path +
                    ": ONNX import is not in this build of vkcnn (it was configured with "
                    "VKCNN_WITH_ONNX=OFF): compile the model where vkcnn has it (vkcnn "
                    "compile MODEL.onnx -o MODEL.vkcnn) and give the .vkcnn");
  s.declared = compiledInfo(s.path, args);
#endif
  const OnnxModelInfo& m = s.declared;

  for (const std::string& spec : args.all("--shape")) {
    const size_t eq = spec.rfind('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--shape " + spec + ": give NAME=DIMS, e.g. --shape " +
                       (m.inputs.empty() ? std::string("input") : m.inputs[0].name) +
                       "=1x3x224x224");
    const std::string name = spec.substr(0, eq);
    const OnnxTensorInfo* input = findInput(m, name);
    if (!input)
      throw UsageError("--shape " + spec + ": the model has no input '" + name +
                       "' (inputs: " + inputNames(m) + ")");
    if (s.options.inputShapes.count(name))
      throw UsageError("--shape is given twice for input '" + name + "'");
    const std::vector<int64_t> dims = parseDims(spec.substr(eq + 1), "--shape " + spec);
    checkAgainstModel(*input, dims, "--shape " + spec);
    s.options.inputShapes[name] = dims;
  }

  if (takesInputFiles) {
    for (const std::string& value : args.all("--input")) {
      std::string name, file = value;
      const size_t eq = value.find('=');
      if (eq != std::string::npos && findInput(m, value.substr(0, eq))) {
        name = value.substr(0, eq);
        file = value.substr(eq + 1);
      } else if (eq != std::string::npos && m.inputs.size() > 1 &&
                 !std::filesystem::exists(value)) {
        throw UsageError("--input " + value + ": the model has no input '" + value.substr(0, eq) +
                         "' (inputs: " + inputNames(m) + ")");
      }
      if (name.empty()) {
        if (m.inputs.size() != 1)
          throw UsageError("the model has " + std::to_string(m.inputs.size()) + " inputs (" +
                           inputNames(m) + "): give each with --input NAME=FILE");
        name = m.inputs[0].name;
      }
      if (s.inputFiles.count(name))
        throw UsageError("--input is given twice for input '" + name + "'" +
                         (m.inputs.size() > 1 ? "" : " (the model has one input)"));
      checkReadable(file, "--input");
      s.inputFiles[name] = file;
    }
    // A .npy fixes the dynamic dimensions of its input from its own shape.
    for (const auto& [name, file] : s.inputFiles) {
      if (!endsWith(lower(file), ".npy") || s.options.inputShapes.count(name)) continue;
      const OnnxTensorInfo& input = *findInput(m, name);
      const bool dynamic = input.dims.empty() || std::any_of(input.dims.begin(), input.dims.end(),
                                                             [](int64_t d) { return d < 0; });
      if (!dynamic) continue;
      const std::vector<int64_t> dims = readNpyShape(file);
      checkAgainstModel(input, dims, "--input " + file + " " + shapeText(dims));
      s.options.inputShapes[name] = dims;
    }
  }

  if (args.has("--batch")) {
    const long batch = args.number("--batch", 1);
    for (const auto& input : m.inputs) {
      auto given = s.options.inputShapes.find(input.name);
      if (given != s.options.inputShapes.end()) {
        if (given->second.empty() || given->second[0] != batch)
          throw UsageError("--batch " + std::to_string(batch) + " disagrees with the shape " +
                           shapeText(given->second) + " given for input '" + input.name + "'");
      } else if (!input.dims.empty() && input.dims[0] >= 0 && input.dims[0] != batch) {
        throw UsageError("--batch " + std::to_string(batch) + ": the model's batch is fixed at " +
                         std::to_string(input.dims[0]) + " (input '" + input.name + "' is " +
                         declaredText(input) + ")");
      }
    }
    s.options.batch = uint32_t(batch);
  }

  // Every dimension but the batch must be known now.
  for (const auto& input : m.inputs) {
    if (s.options.inputShapes.count(input.name)) continue;
    std::string example;
    bool unknown = input.dims.empty();
    for (size_t k = 0; k < input.dims.size(); ++k) {
      unknown |= k > 0 && input.dims[k] < 0;
      example += (k ? "x" : "") + (input.dims[k] >= 0 ? std::to_string(input.dims[k])
                                   : k == 0           ? std::string("1")
                                                      : std::string("SIZE"));
    }
    if (unknown)
      throw UsageError("input '" + input.name + "' " +
                       (input.dims.empty() ? std::string("declares no shape")
                                           : declaredText(input) + " has dynamic dimensions") +
                       ": give its shape with --shape " + input.name + "=" +
                       (example.empty() ? "DIMS" : example) +
                       (takesInputFiles ? " (or a .npy --input)" : ""));
  }
  return s;
}

Session loadSession(const Context& context, const ModelSetup& setup) {
  Progress progress("loading " + setup.path);
  Session session(context, setup.path, setup.options);
  progress.finish();
  return session;
}

std::vector<Option> pictureOptions() {
  return {{"--mean", OptionKind::value},
          {"--std", OptionKind::value},
          {"--no-normalize", OptionKind::flag},
          {"--resize", OptionKind::value},
          {"--stretch", OptionKind::flag}};
}

const char* const kPictureOptionsHelp =
    "  pictures (PNG, JPEG, ...) are resized as torchvision's classification presets do: the\n"
    "  shorter side to --resize (default: the input's shorter side x 256/224), then cropped to\n"
    "  the input's size around the centre; scaled to [0, 1] and normalised with --mean, --std\n"
    "  --resize S          the shorter side before the centre crop\n"
    "  --stretch           resize to the input's size instead, ignoring the aspect ratio\n"
    "  --mean A,B,C        per-channel mean of a picture's [0,1] values (default "
    "0.485,0.456,0.406)\n"
    "  --std A,B,C         per-channel std (default 0.229,0.224,0.225)\n"
    "  --no-normalize      the picture's [0, 1] values as they are\n";

std::vector<float> loadInput(const std::string& path, const SessionTensorInfo& info,
                             const Arguments& args) {
  const std::string name = lower(path);
  if (endsWith(name, ".npy")) {
    Array a = readNpy(path);
    if (a.data.size() != info.elementCount)
      throw Error(ErrorCode::invalidArgument, "--input " + path + " holds " + shapeText(a.shape) +
                                                  " but input '" + info.name + "' is " +
                                                  shapeText(info.shape));
    return std::move(a.data);
  }
  if (endsWith(name, ".bin") || endsWith(name, ".raw") || endsWith(name, ".dat")) {
    std::vector<float> data = readRawFloats(path);
    if (data.size() != info.elementCount)
      throw Error(ErrorCode::invalidArgument,
                  "--input " + path + " holds " + std::to_string(data.size()) +
                      " float32 values but input '" + info.name + "' " + shapeText(info.shape) +
                      " has " + std::to_string(info.elementCount));
    return data;
  }
  const auto& d = info.shape;
  if (d.size() != 4 || (d[1] != 1 && d[1] != 3))
    throw Error(ErrorCode::invalidArgument,
                "--input " + path +
                    ": a picture can feed only an input of shape [N, 1 or 3, H, W]; '" + info.name +
                    "' is " + shapeText(d));
  PictureOptions p;
  p.channels = uint32_t(d[1]);
  p.height = uint32_t(d[2]);
  p.width = uint32_t(d[3]);
  p.resize = uint32_t(args.number("--resize", 0));
  p.stretch = args.has("--stretch");
  if (p.stretch && args.has("--resize"))
    throw UsageError("--resize and --stretch exclude each other");
  if (args.has("--no-normalize")) {
    if (args.has("--mean") || args.has("--std"))
      throw UsageError("--no-normalize excludes --mean and --std");
    p.mean = {0, 0, 0}, p.std = {1, 1, 1};
  }
  // --mean a,b,c and --std a,b,c (values on the [0, 1] scale; one value applies to all channels).
  auto triple = [&](const std::string& option, std::array<float, 3>& out) {
    const std::string text = args.get(option);
    if (text.empty()) return;
    std::vector<float> v;
    std::stringstream items(text);
    for (std::string item; std::getline(items, item, ',');) {
      char* end = nullptr;
      const float f = std::strtof(item.c_str(), &end);
      if (item.empty() || *end || !std::isfinite(f))
        throw UsageError(option + " takes numbers separated by commas, not '" + text + "'");
      v.push_back(f);
    }
    if (v.size() != 1 && v.size() != 3) throw UsageError(option + " takes one or three numbers");
    for (size_t c = 0; c < 3; ++c) out[c] = v[v.size() == 1 ? 0 : c];
  };
  triple("--mean", p.mean);
  triple("--std", p.std);
  if (p.std[0] == 0 || p.std[1] == 0 || p.std[2] == 0) throw UsageError("--std must not be 0");
  std::vector<float> one = loadPicture(path, p);
  std::vector<float> all;
  all.reserve(info.elementCount);
  for (int64_t i = 0; i < d[0]; ++i) all.insert(all.end(), one.begin(), one.end());
  return all;
}

// ---- files --------------------------------------------------------------------------------------

void checkWritable(const std::string& path, const std::string& option) {
  if (path == "-") return;
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw UsageError(option + " " + path + " is a directory; give a file name");
  fs::path parent = fs::path(path).parent_path();
  if (parent.empty()) parent = ".";
  if (!fs::is_directory(parent, ec))
    throw UsageError(option + " " + path + ": the folder " + parent.string() + " does not exist");
  if (const std::string problem =
          platform::accessProblem(fs::exists(path, ec) ? path : parent.string(), true);
      !problem.empty())
    throw UsageError(option + " " + path + ": cannot write there (" + problem + ")");
}

void checkReadable(const std::string& path, const std::string& option) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (!fs::exists(status)) throw UsageError(option + " " + path + ": no such file");
  if (fs::is_directory(status))
    throw UsageError(option + " " + path + " is a directory, not a file");
  // Never opened here: a FIFO or a device would block the open, or be consumed by it.
  if (const platform::FileType type = platform::fileType(path); type != platform::FileType::regular)
    throw UsageError(option + " " + path + " is not a regular file (" + platform::describe(type) +
                     ")");
  if (const std::string problem = platform::accessProblem(path, false); !problem.empty())
    throw UsageError(option + " " + path + ": cannot read it (" + problem + ")");
}

void writeText(const std::string& path, const std::string& text, const std::string& option) {
  if (path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return;
  }
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f)
    throw Error(ErrorCode::io,
                option + " " + path + ": cannot write (" + std::strerror(errno) + ")");
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int writeErrno = errno;
  const bool closed = std::fclose(f) == 0;
  if (!ok || !closed)
    throw Error(ErrorCode::io, option + " " + path + ": write failed (" +
                                   std::strerror(ok ? errno : writeErrno) + ")");
}

// ---- JSON ---------------------------------------------------------------------------------------

std::string Json::quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
      out += buffer;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

std::string Json::number(double v) {
  if (!std::isfinite(v)) return "null";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", v);
  return buffer;
}

void Json::key(const std::string& k) {
  body_ += (body_.empty() ? "" : ", ") + quote(k) + ": ";
}
Json& Json::add(const std::string& k, const std::string& v) {
  key(k);
  body_ += quote(v);
  return *this;
}
Json& Json::add(const std::string& k, double v) {
  key(k);
  body_ += number(v);
  return *this;
}
Json& Json::add(const std::string& k, uint64_t v) {
  key(k);
  body_ += std::to_string(v);
  return *this;
}
Json& Json::add(const std::string& k, int64_t v) {
  key(k);
  body_ += std::to_string(v);
  return *this;
}
Json& Json::add(const std::string& k, bool v) {
  key(k);
  body_ += v ? "true" : "false";
  return *this;
}
Json& Json::raw(const std::string& k, const std::string& json) {
  key(k);
  body_ += json;
  return *this;
}

// ---- progress -----------------------------------------------------------------------------------

Progress::Progress(std::string what)
    : what_(std::move(what)), start_(Clock::now()), thread_([this] {
        platform::setThreadName("vkcnn-progress");
        loop();
      }) {}

Progress::~Progress() {
  finish();
}

void Progress::step(uint64_t done, uint64_t total) {
  done_ = done;
  total_ = total;
}

void Progress::loop() {
  std::unique_lock lock(mutex_);
  const bool tty = platform::isTerminal(stderr);
  while (!wake_.wait_for(lock, std::chrono::seconds(1), [&] { return finished_; })) {
    const double s = millisecondsSince(start_) / 1000;
    const uint64_t done = done_, total = total_;
    std::string line = "vkcnn: " + what_ + "...";
    if (total)
      line += " " + std::to_string(done) + "/" + std::to_string(total);
    else if (done)
      line += " " + std::to_string(done);
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, " (%.0f s)", s);
    line += buffer;
    std::fprintf(stderr, tty ? "\r%s\033[K" : "%s\n", line.c_str());
    std::fflush(stderr);
    reported_ = true;
  }
}

void Progress::finish() {
  {
    std::lock_guard lock(mutex_);
    if (finished_) return;
    finished_ = true;
  }
  wake_.notify_all();
  thread_.join();
  if (reported_) {
    const bool tty = platform::isTerminal(stderr);
    std::fprintf(stderr, "%svkcnn: %s: done in %.1f s\n", tty ? "\r\033[K" : "", what_.c_str(),
                 millisecondsSince(start_) / 1000);
  }
}

// ---- small things -------------------------------------------------------------------------------

double millisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

Stats summarize(std::vector<double> v) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  Stats s;
  s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  // Nearest rank: the smallest value with at least p% of the values at or below it.
  // (less a hair, so that a product that lands just above a whole number takes that number)
  auto rank = [&](double p) {
    return v[std::max<size_t>(size_t(std::ceil(p * double(n) - 1e-9)), 1) - 1];
  };
  s.p90 = rank(0.90);
  s.p95 = rank(0.95);
  s.p99 = rank(0.99);
  s.min = v.front();
  s.max = v.back();
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / double(n);
  return s;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

const char* precisionName(ChannelFormat format) {
  return format == ChannelFormat::float32 ? "fp32" : "fp16";
}

}  // namespace vkcnn::cli
