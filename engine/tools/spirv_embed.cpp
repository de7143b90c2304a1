// Build-time tool: reflects SPIR-V modules with SPIRV-Cross and writes C++ that embeds their code
// and reflection (bindings, push-constant size, local size) into the library.
//
//   vkcnn_spirv_embed OUT.h OUT.cpp family:variant:file.spv[:reflection.spv] ...
//
// A module SPIRV-Cross cannot parse (cooperative matrices) is reflected through a second build of
// the same shader with the same interface and a trivial body.
#include <spirv_cross_c.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "vkcnn_spirv_embed: %s\n", message.c_str());
  std::exit(1);
}

std::vector<uint32_t> readWords(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) fail("cannot open " + path);
  const auto size = static_cast<size_t>(in.tellg());
  if (size == 0 || size % 4 != 0)
    fail(path + " is not a SPIR-V module (size " + std::to_string(size) + ")");
  std::vector<uint32_t> words(size / 4);
  in.seekg(0);
  in.read(reinterpret_cast<char*>(words.data()), static_cast<std::streamsize>(size));
  return words;
}

// VkFormat values of the storage formats the shaders may declare.
uint32_t vkFormatOf(SpvImageFormat format) {
  switch (format) {
    case SpvImageFormatRgba16f:
      return 97;  // VK_FORMAT_R16G16B16A16_SFLOAT
    case SpvImageFormatRgba32f:
      return 109;  // VK_FORMAT_R32G32B32A32_SFLOAT
    case SpvImageFormatRgba8:
      return 37;  // VK_FORMAT_R8G8B8A8_UNORM
    case SpvImageFormatRg32ui:
      return 101;  // VK_FORMAT_R32G32_UINT
    case SpvImageFormatUnknown:
      return 0;
    default:
      fail("storage image format " + std::to_string(format) + " has no VkFormat mapping");
  }
}

struct Binding {
  unsigned set, binding;
  std::string type, name;
  uint32_t format = 0, dim = 0, arraySize = 1;
  bool arrayed = false;
};

struct Module {
  std::string family, variant;
  std::vector<uint32_t> words;
  std::vector<Binding> bindings;
  size_t pushConstantSize = 0;
  unsigned localSize[3] = {1, 1, 1};
  uint64_t sharedMemorySize = 0;
};

// Bytes of the module's Workgroup variables with its specialization constants at their defaults
// (an array sized by a specialization constant expression is evaluated): what a pipeline of it
// needs of maxComputeSharedMemorySize. spirv-cross's C API does not list Workgroup variables, so
// the module's words are read here.
uint64_t sharedMemorySize(const std::vector<uint32_t>& words, const std::string& path) {
  enum Kind { scalar, vector, array, structure, pointer };
  struct Type {
    Kind kind;
    uint32_t bytes = 0;               // scalar
    uint32_t element = 0, count = 0;  // vector and matrix (count), array (count is an id)
    std::vector<uint32_t> members;
    uint32_t storage = 0;
  };
  std::map<uint32_t, Type> types;
  struct Value {
    uint32_t opcode = 0;  // 0 a literal value, else OpSpecConstantOp's operation
    int64_t value = 0;
    std::vector<uint32_t> operands;
  };
  std::map<uint32_t, Value> values;
  std::vector<uint32_t> workgroupPointers;
  for (size_t i = 5; i < words.size();) {
    const uint32_t opcode = words[i] & 0xffff, length = words[i] >> 16;
    if (length == 0 || i + length > words.size()) fail(path + ": malformed SPIR-V");
    const uint32_t* w = &words[i];
    switch (opcode) {
      case SpvOpTypeBool:
        types[w[1]] = {scalar, 4};
        break;
      case SpvOpTypeInt:
      case SpvOpTypeFloat:
        types[w[1]] = {scalar, w[2] / 8};
        break;
      case SpvOpTypeVector:
      case SpvOpTypeMatrix:
        types[w[1]] = {vector, 0, w[2], w[3]};
        break;
      case SpvOpTypeArray:
        types[w[1]] = {array, 0, w[2], w[3]};
        break;
      case SpvOpTypeStruct:
        types[w[1]] = {structure};
        types[w[1]].members.assign(w + 2, w + length);
        break;
      case SpvOpTypePointer:
        types[w[1]] = {pointer, 0, w[3]};
        types[w[1]].storage = w[2];
        break;
      case SpvOpConstant:
      case SpvOpSpecConstant:
        values[w[2]] = {0, int64_t(int32_t(w[3]))};
        break;
      case SpvOpConstantTrue:
      case SpvOpSpecConstantTrue:
        values[w[2]] = {0, 1};
        break;
      case SpvOpConstantFalse:
      case SpvOpSpecConstantFalse:
        values[w[2]] = {0, 0};
        break;
      case SpvOpSpecConstantOp:
        values[w[2]] = {w[3], 0, std::vector<uint32_t>(w + 4, w + length)};
        break;
      case SpvOpConstantComposite:
      case SpvOpSpecConstantComposite:  // gl_WorkGroupSize among them
        values[w[2]] = {SpvOpConstantComposite, 0, std::vector<uint32_t>(w + 3, w + length)};
        break;
      case SpvOpVariable:
        if (w[3] == SpvStorageClassWorkgroup) workgroupPointers.push_back(w[1]);
        break;
      default:
        break;
    }
    i += length;
  }
  std::function<int64_t(uint32_t)> evaluate = [&](uint32_t id) -> int64_t {
    const auto it = values.find(id);
    if (it == values.end()) fail(path + ": an array size that is not a constant");
    const Value& v = it->second;
    if (v.opcode == 0) return v.value;
    auto at = [&](size_t k) { return evaluate(v.operands.at(k)); };
    switch (v.opcode) {
      case SpvOpCompositeExtract: {  // a composite id, then literal indices
        const auto composite = values.find(v.operands.at(0));
        if (composite == values.end() || composite->second.opcode != SpvOpConstantComposite ||
            v.operands.size() != 2)
          fail(path + ": an array size extracted from an unknown composite");
        return evaluate(composite->second.operands.at(v.operands[1]));
      }
      case SpvOpIAdd:
        return at(0) + at(1);
      case SpvOpISub:
        return at(0) - at(1);
      case SpvOpIMul:
        return at(0) * at(1);
      case SpvOpSDiv:
      case SpvOpUDiv:
        return at(1) ? at(0) / at(1) : 0;
      case SpvOpSRem:
      case SpvOpSMod:
      case SpvOpUMod:
        return at(1) ? at(0) % at(1) : 0;
      case SpvOpSNegate:
        return -at(0);
      case SpvOpShiftLeftLogical:
        return at(0) << at(1);
      case SpvOpShiftRightLogical:
      case SpvOpShiftRightArithmetic:
        return at(0) >> at(1);
      case SpvOpBitwiseAnd:
        return at(0) & at(1);
      case SpvOpBitwiseOr:
        return at(0) | at(1);
      case SpvOpSelect:
        return at(0) ? at(1) : at(2);
      case SpvOpIEqual:
        return at(0) == at(1);
      case SpvOpINotEqual:
        return at(0) != at(1);
      case SpvOpSLessThan:
        return at(0) < at(1);
      case SpvOpSGreaterThan:
        return at(0) > at(1);
      case SpvOpSLessThanEqual:
        return at(0) <= at(1);
      case SpvOpSGreaterThanEqual:
        return at(0) >= at(1);
      default:
        fail(path + ": specialization constant operation " + std::to_string(v.opcode) +
             " in an array size");
    }
  };
  std::function<uint64_t(uint32_t)> size = [&](uint32_t id) -> uint64_t {
    const auto it = types.find(id);
    if (it == types.end()) fail(path + ": a Workgroup variable of an unknown type");
    const Type& t = it->second;
    switch (t.kind) {
      case scalar:
        return t.bytes;
      case vector:
        return t.count * size(t.element);
      case array:
        return uint64_t(evaluate(t.count)) * size(t.element);
      case structure: {
        uint64_t bytes = 0;
        for (uint32_t m : t.members) bytes += size(m);
        return bytes;
      }
      case pointer:
        break;
    }
    fail(path + ": a pointer in Workgroup memory");
  };
  uint64_t bytes = 0;
  for (uint32_t p : workgroupPointers) {
    const Type& pointerType = types.at(p);
    bytes += size(pointerType.element);
  }
  return bytes;
}

void reflect(Module& module, const std::string& path) {
  module.sharedMemorySize = sharedMemorySize(module.words, path);
  spvc_context context = nullptr;
  if (spvc_context_create(&context) != SPVC_SUCCESS) fail("spvc_context_create failed");
  spvc_parsed_ir ir = nullptr;
  if (spvc_context_parse_spirv(context, module.words.data(), module.words.size(), &ir) !=
      SPVC_SUCCESS)
    fail(path + ": " + spvc_context_get_last_error_string(context));
  spvc_compiler compiler = nullptr;
  spvc_context_create_compiler(context, SPVC_BACKEND_NONE, ir, SPVC_CAPTURE_MODE_TAKE_OWNERSHIP,
                               &compiler);
  spvc_resources resources = nullptr;
  spvc_compiler_create_shader_resources(compiler, &resources);

  const std::pair<spvc_resource_type, const char*> kinds[] = {
      {SPVC_RESOURCE_TYPE_SAMPLED_IMAGE, "sampledImage"},
      {SPVC_RESOURCE_TYPE_STORAGE_IMAGE, "storageImage"},
      {SPVC_RESOURCE_TYPE_STORAGE_BUFFER, "storageBuffer"},
      {SPVC_RESOURCE_TYPE_UNIFORM_BUFFER, "uniformBuffer"},
      {SPVC_RESOURCE_TYPE_SEPARATE_IMAGE, nullptr},
      {SPVC_RESOURCE_TYPE_SEPARATE_SAMPLERS, nullptr},
  };
  for (auto [kind, typeName] : kinds) {
    const spvc_reflected_resource* list = nullptr;
    size_t count = 0;
    spvc_resources_get_resource_list_for_type(resources, kind, &list, &count);
    if (count && !typeName)
      fail(path + ": separate images/samplers are not supported; use combined sampler2DArray");
    for (size_t i = 0; i < count; ++i) {
      Binding b;
      b.set = spvc_compiler_get_decoration(compiler, list[i].id, SpvDecorationDescriptorSet);
      b.binding = spvc_compiler_get_decoration(compiler, list[i].id, SpvDecorationBinding);
      b.type = typeName;
      b.name = list[i].name;
      spvc_type type = spvc_compiler_get_type_handle(compiler, list[i].type_id);
      if (spvc_type_get_num_array_dimensions(type) > 0)
        b.arraySize = spvc_type_get_array_dimension(type, 0);
      if (kind == SPVC_RESOURCE_TYPE_SAMPLED_IMAGE || kind == SPVC_RESOURCE_TYPE_STORAGE_IMAGE) {
        b.dim = spvc_type_get_image_dimension(type);
        b.arrayed = spvc_type_get_image_arrayed(type);
        if (kind == SPVC_RESOURCE_TYPE_STORAGE_IMAGE)
          b.format = vkFormatOf(spvc_type_get_image_storage_format(type));
      }
      module.bindings.push_back(b);
    }
  }
  const spvc_reflected_resource* push = nullptr;
  size_t pushCount = 0;
  spvc_resources_get_resource_list_for_type(resources, SPVC_RESOURCE_TYPE_PUSH_CONSTANT, &push,
                                            &pushCount);
  if (pushCount > 1) fail(path + ": more than one push-constant block");
  if (pushCount == 1)
    spvc_compiler_get_declared_struct_size(
        compiler, spvc_compiler_get_type_handle(compiler, push[0].base_type_id),
        &module.pushConstantSize);
  for (unsigned i = 0; i < 3; ++i)
    module.localSize[i] =
        spvc_compiler_get_execution_mode_argument_by_index(compiler, SpvExecutionModeLocalSize, i);
  spvc_context_destroy(context);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) fail("usage: vkcnn_spirv_embed OUT.h OUT.cpp family:variant:file.spv ...");
  const std::vector<std::string> variants = {"f16", "f32", "u8", "f16bits"};
  std::map<std::string, std::map<std::string, Module>> families;
  for (int i = 3; i < argc; ++i) {
    std::string arg = argv[i];
    auto a = arg.find(':'), b = arg.find(':', a + 1), r = arg.find(':', b + 1);
    if (a == std::string::npos || b == std::string::npos) fail("bad argument " + arg);
    Module m;
    m.family = arg.substr(0, a);
    m.variant = arg.substr(a + 1, b - a - 1);
    const std::string path = arg.substr(b + 1, r == std::string::npos ? r : r - b - 1);
    if (r == std::string::npos) {
      m.words = readWords(path);
      reflect(m, path);
    } else {
      const std::string reflectionPath = arg.substr(r + 1);
      m.words = readWords(reflectionPath);
      reflect(m, reflectionPath);
      m.words = readWords(path);
    }
    families[m.family][m.variant] = std::move(m);
  }

  std::ostringstream h;
  h << "// Generated by vkcnn_spirv_embed from glsl/*.comp. Do not edit.\n#pragma once\n#include "
       "<cstdint>\n\n"
    << "namespace vkcnn::detail {\n\nenum class ShaderId : uint32_t {\n";
  for (auto& [family, _] : families) h << "  " << family << ",\n";
  h << "};\ninline constexpr uint32_t kShaderIdCount = " << families.size()
    << ";\n\n}  // namespace vkcnn::detail\n";

  std::ostringstream c;
  c << "// Generated by vkcnn_spirv_embed from glsl/*.comp. Do not edit.\n"
    << "#include \"vkcnn_shader_ids.h\"\n#include \"vulkan/shader_module_info.h\"\n\nnamespace "
       "vkcnn::detail {\nnamespace {\n";
  for (auto& [family, byVariant] : families) {
    for (auto& variant : variants) {
      auto it = byVariant.find(variant);
      if (it == byVariant.end()) fail(family + " lacks variant " + variant);
      const Module& m = it->second;
      const std::string id = family + "_" + variant;
      c << "const uint32_t " << id << "_code[] = {";
      for (size_t w = 0; w < m.words.size(); ++w)
        c << (w % 12 ? " " : "\n    ") << m.words[w] << "u,";
      c << "\n};\n";
      c << "const ShaderBinding " << id << "_bindings[] = {\n";
      for (auto& b : m.bindings)
        c << "    {" << b.set << ", " << b.binding << ", BindingType::" << b.type << ", "
          << b.format << ", " << b.dim << ", " << (b.arrayed ? "true" : "false") << ", "
          << b.arraySize << ", \"" << b.name << "\"},\n";
      if (m.bindings.empty())
        c << "    {0, 0, BindingType::storageBuffer, 0, 0, false, 0, nullptr},\n";
      c << "};\n";
    }
  }
  c << "}  // namespace\n\nextern const ShaderModuleInfo kShaderModules[][kShaderVariantCount];\n"
    << "const ShaderModuleInfo kShaderModules[][kShaderVariantCount] = {\n";
  for (auto& [family, byVariant] : families) {
    c << "    {\n";
    for (auto& variant : variants) {
      const Module& m = byVariant.at(variant);
      const std::string id = family + "_" + variant;
      c << "        {\"" << id << "\", " << id << "_code, sizeof(" << id << "_code) / 4, " << id
        << "_bindings, " << m.bindings.size() << ", " << m.pushConstantSize << ", {"
        << m.localSize[0] << ", " << m.localSize[1] << ", " << m.localSize[2] << "}, "
        << m.sharedMemorySize << "},\n";
    }
    c << "    },\n";
  }
  c << "};\n\n}  // namespace vkcnn::detail\n";

  auto writeIfChanged = [](const std::string& path, const std::string& text) {
    std::ifstream old(path);
    std::stringstream existing;
    existing << old.rdbuf();
    if (old && existing.str() == text) return;
    std::ofstream out(path);
    out << text;
    if (!out) fail("cannot write " + path);
  };
  writeIfChanged(argv[1], h.str());
  writeIfChanged(argv[2], c.str());
  return 0;
}
