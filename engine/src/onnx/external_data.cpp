// External data of ONNX tensors: see external_data.h.
#include "onnx/external_data.h"

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <limits>

#include "onnx/onnx_tensor.h"
#include "platform/platform.h"

namespace vkcnn::detail::onnx_import {
namespace {

namespace fs = std::filesystem;

struct Location {
  std::string file;
  int64_t offset = 0;
  int64_t length = -1;  // -1: to the end of the file
};

int64_t parseCount(const std::string& value, const std::string& key, const std::string& what) {
  size_t used = 0;
  long long v = -1;
  try {
    v = std::stoll(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != value.size() || v < 0)
    invalidModel(what + ": external data " + key + " '" + value +
                 "' is not a non-negative integer");
  return int64_t(v);
}

Location parseLocation(const onnx::TensorProto& t, const std::string& what) {
  Location l;
  bool hasFile = false;
  for (const auto& entry : t.external_data()) {
    if (entry.key() == "location") {
      l.file = entry.value();
      hasFile = true;
    } else if (entry.key() == "offset") {
      l.offset = parseCount(entry.value(), "offset", what);
    } else if (entry.key() == "length") {
      l.length = parseCount(entry.value(), "length", what);
    }
    // "checksum" and unknown keys are informative only.
  }
  if (!hasFile || l.file.empty())
    invalidModel(what + ": external data without a 'location' (the file holding the tensor)");
  return l;
}

// The file `location` names inside `directory`, or an error: the model may only read files under
// its own directory, whatever the location says (the model is untrusted input).
fs::path containedPath(const fs::path& directory, const std::string& location,
                       const std::string& what) {
  const fs::path relative(location);
  if (relative.is_absolute() || relative.has_root_name() || relative.has_root_directory())
    invalidModel(what + ": external data file '" + location +
                 "' is an absolute path; it must be relative to the model's directory");
  for (const auto& part : relative.lexically_normal())
    if (part == "..")
      invalidModel(what + ": external data file '" + location +
                   "' leads outside the model's directory");
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(directory, ec);
  const fs::path file = ec ? fs::path() : fs::weakly_canonical(directory / relative, ec);
  if (ec)
    invalidModel(what + ": external data file '" + location + "' cannot be resolved (" +
                 ec.message() + ")");
  // A symbolic link inside the directory may still point elsewhere.
  const auto rel = file.lexically_relative(base);
  if (rel.empty() || *rel.begin() == "..")
    invalidModel(what + ": external data file '" + location +
                 "' leads outside the model's directory (through a symbolic link)");
  return file;
}

void resolveTensor(onnx::TensorProto& t, const fs::path& directory, const std::string& what) {
  if (t.data_location() != onnx::TensorProto::EXTERNAL && t.external_data_size() == 0) return;
  const Location l = parseLocation(t, what);
  const fs::path path = containedPath(directory, l.file, what);
  const std::string name = "'" + l.file + "'";
  const platform::FileType type = platform::fileType(path.string());
  if (type == platform::FileType::missing)
    invalidModel(what + ": external data file " + name +
                 " does not exist in the model's directory");
  if (type != platform::FileType::regular)
    invalidModel(what + ": external data file " + name + " is not a regular file (" +
                 platform::describe(type) + ")");
  // Mapped, never opened as a stream: a path that became a FIFO since is refused, not waited on.
  const platform::MappedFile file(path.string(), what + ": external data file " + name);
  const uintmax_t size = file.size();
  if (uintmax_t(l.offset) > size)
    invalidModel(what + ": external data offset " + std::to_string(l.offset) +
                 " is past the end of " + name + " (" + std::to_string(size) + " bytes)");
  const uintmax_t length = l.length < 0 ? size - uintmax_t(l.offset) : uintmax_t(l.length);
  if (length > size - uintmax_t(l.offset))
    invalidModel(what + ": external data file " + name +
                 " is too short: " + std::to_string(length) + " bytes at offset " +
                 std::to_string(l.offset) + " wanted, the file has " + std::to_string(size));
  // Bounded by the declared shape before anything is allocated (validation checks it exactly).
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  const int64_t elements = checkedElementCount(dims, what);
  if (length > uintmax_t(elements) * 16)
    invalidModel(what + ": external data length " + std::to_string(length) + " in " + name +
                 " does not fit shape " + dimsToString(dims) + " of " +
                 elementTypeName(t.data_type()));
  t.set_raw_data(
      length ? std::string(reinterpret_cast<const char*>(file.bytes().data()) + size_t(l.offset),
                           size_t(length))
             : std::string());
  t.clear_external_data();
  t.set_data_location(onnx::TensorProto::DEFAULT);
}

void resolveGraph(onnx::GraphProto& graph, const fs::path& directory, int depth) {
  if (depth > 16) return;  // validation reports the nesting
  const std::string where = graph.name().empty() ? "graph" : "graph '" + graph.name() + "'";
  for (auto& t : *graph.mutable_initializer())
    resolveTensor(t, directory, where + " initializer '" + t.name() + "'");
  for (auto& node : *graph.mutable_node()) {
    for (auto& a : *node.mutable_attribute()) {
      const std::string what = where + " node '" + node.name() + "' (" + node.op_type() +
                               ") attribute '" + a.name() + "'";
      if (a.has_t()) resolveTensor(*a.mutable_t(), directory, what);
      for (auto& t : *a.mutable_tensors()) resolveTensor(t, directory, what);
      if (a.has_g()) resolveGraph(*a.mutable_g(), directory, depth + 1);
      for (auto& g : *a.mutable_graphs()) resolveGraph(g, directory, depth + 1);
    }
  }
}

}  // namespace

void resolveExternalData(onnx::ModelProto& model, const std::string& directory) {
  if (directory.empty() || !model.has_graph()) return;
  resolveGraph(*model.mutable_graph(), fs::path(directory), 0);
}

}  // namespace vkcnn::detail::onnx_import
