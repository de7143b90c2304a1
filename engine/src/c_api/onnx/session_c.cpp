// The C API's session part (vkcnn/vkcnn_c.h, in libvkcnn_onnx): vkcnn::Session behind an opaque
// handle, with the tensor infos kept in C form for the handle's life.
#include <span>
#include <vector>

#include "c_api/c_api.h"
#include "c_api/onnx/session_c.h"
#include "vkcnn/session.h"

struct vkcnn_session_s {
  vkcnn::Session session;
  std::vector<vkcnn_tensor_info> inputs, outputs;

  explicit vkcnn_session_s(vkcnn::Session s) : session(std::move(s)) {
    for (const vkcnn::SessionTensorInfo& t : session.inputs())
      inputs.push_back(vkcnn::capi::tensorInfoOf(t));
    for (const vkcnn::SessionTensorInfo& t : session.outputs())
      outputs.push_back(vkcnn::capi::tensorInfoOf(t));
  }
};

using namespace vkcnn;
using namespace vkcnn::capi;

namespace vkcnn::capi {

vkcnn_tensor_info tensorInfoOf(const SessionTensorInfo& t) {
  vkcnn_tensor_info info{};
  info.name = t.name.c_str();
  info.shape = t.shape.data();
  info.rank = uint32_t(t.shape.size());
  info.element_count = t.elementCount;
  info.width = t.width;
  info.height = t.height;
  info.feature_channels = t.featureChannels;
  info.number_of_images = t.numberOfImages;
  return info;
}

SessionOptions sessionOptions(const vkcnn_session_options* options, const char* f) {
  SessionOptions o;
  if (!options) return o;
  o.precision = channelFormatOf(options->precision, f);
  o.batch = options->batch;
  if (options->input_shape_count && !options->input_shapes)
    badArgument(f, "input_shapes is NULL with input_shape_count " +
                       std::to_string(options->input_shape_count));
  for (uint32_t i = 0; i < options->input_shape_count; ++i) {
    const vkcnn_input_shape& s = options->input_shapes[i];
    if (!s.name) badArgument(f, "input_shapes[" + std::to_string(i) + "].name is NULL");
    if (s.rank && !s.dims) badArgument(f, "input_shapes[" + std::to_string(i) + "].dims is NULL");
    o.inputShapes[s.name] = std::vector<int64_t>(s.dims, s.dims + s.rank);
  }
  o.optimize = options->optimize != 0;
  switch (options->accumulator_precision) {
    case VKCNN_ACCUMULATOR_PRECISION_FLOAT32:
      o.accumulatorPrecision = AccumulatorPrecision::float32;
      break;
    case VKCNN_ACCUMULATOR_PRECISION_FLOAT16:
      o.accumulatorPrecision = AccumulatorPrecision::float16;
      break;
    default:
      badArgument(f, "vkcnn_session_options.accumulator_precision " +
                         std::to_string(int(options->accumulator_precision)) +
                         " is neither VKCNN_ACCUMULATOR_PRECISION_FLOAT32 nor _FLOAT16");
  }
  if (options->label) o.label = options->label;
  o.context = contextOptions(options->context_options);
  return o;
}

void checkCount(uint32_t given, size_t expected, const char* f, const char* what,
                const char* owner) {
  if (given != expected)
    badArgument(f, std::string(what) + " " + std::to_string(given) + " is not the " + owner +
                       "'s " + std::to_string(expected));
}

void checkHostArrays(const float* const* inputs, uint32_t inputCount, float* const* outputs,
                     uint32_t outputCount, const char* f) {
  if (inputCount && !inputs) badArgument(f, "inputs is NULL");
  if (outputCount && !outputs) badArgument(f, "outputs is NULL");
  for (uint32_t i = 0; i < inputCount; ++i)
    if (!inputs[i]) badArgument(f, "inputs[" + std::to_string(i) + "] is NULL");
  for (uint32_t o = 0; o < outputCount; ++o)
    if (!outputs[o]) badArgument(f, "outputs[" + std::to_string(o) + "] is NULL");
}

}  // namespace vkcnn::capi

namespace {

template <typename Handle, typename Value>
std::vector<Value> unwrap(const Handle* handles, uint32_t count, const char* f, const char* what) {
  if (count && !handles) badArgument(f, std::string(what) + " is NULL");
  std::vector<Value> values;
  for (uint32_t i = 0; i < count; ++i) {
    if (!handles[i]) badArgument(f, std::string(what) + "[" + std::to_string(i) + "] is NULL");
    if constexpr (std::is_same_v<Value, Image>)
      values.push_back(handles[i]->image);
    else
      values.push_back(handles[i]->buffer);
  }
  return values;
}

// vkcnn_session_encode_images and _buffers: the same checks, on Images' or Buffers' handles.
template <typename Handle, typename Value>
vkcnn_status encode(const char* f, vkcnn_session session, vkcnn_command_buffer commandBuffer,
                    const Handle* inputs, uint32_t inputCount, const Handle* outputs,
                    uint32_t outputCount) {
  return guarded([&] {
    vkcnn_session_s& s = need(session, f, "session");
    CommandBuffer& cb = need(commandBuffer, f, "command_buffer").commandBuffer;
    s.session.encode(cb, unwrap<Handle, Value>(inputs, inputCount, f, "inputs"),
                     unwrap<Handle, Value>(outputs, outputCount, f, "outputs"));
  });
}

}  // namespace

extern "C" {

void vkcnn_session_options_init(vkcnn_session_options* options) {
  if (!options) return;
  *options = vkcnn_session_options{};
  options->precision = VKCNN_CHANNEL_FORMAT_FLOAT16;
  options->optimize = 1;
  options->accumulator_precision = VKCNN_ACCUMULATOR_PRECISION_FLOAT32;
}

vkcnn_status vkcnn_session_create(vkcnn_context context, const char* path,
                                  const vkcnn_session_options* options, vkcnn_session* session) {
  return guarded([&] {
    const char* f = "vkcnn_session_create";
    const char* p = &need(path, f, "path");
    vkcnn_session& out = need(session, f, "session");
    const SessionOptions o = sessionOptions(options, f);
    out = context ? new vkcnn_session_s(Session(context->context, p, o))
                  : new vkcnn_session_s(Session(p, o));
  });
}

vkcnn_status vkcnn_session_create_from_memory(vkcnn_context context, const void* bytes, size_t size,
                                              const vkcnn_session_options* options,
                                              vkcnn_session* session) {
  return guarded([&] {
    const char* f = "vkcnn_session_create_from_memory";
    if (!bytes && size) badArgument(f, "bytes is NULL");
    vkcnn_session& out = need(session, f, "session");
    const SessionOptions o = sessionOptions(options, f);
    const std::span<const uint8_t> data(static_cast<const uint8_t*>(bytes), size);
    out = context ? new vkcnn_session_s(Session::fromMemory(context->context, data, o))
                  : new vkcnn_session_s(Session::fromMemory(data, o));
  });
}

void vkcnn_session_destroy(vkcnn_session session) {
  delete session;
}

vkcnn_status vkcnn_session_context(vkcnn_session session, vkcnn_context* context) {
  return guarded([&] {
    const Session& s = need(session, "vkcnn_session_context", "session").session;
    need(context, "vkcnn_session_context", "context") = new vkcnn_context_s{s.context()};
  });
}

uint32_t vkcnn_session_input_count(vkcnn_session session) {
  return session ? uint32_t(session->inputs.size()) : 0;
}

uint32_t vkcnn_session_output_count(vkcnn_session session) {
  return session ? uint32_t(session->outputs.size()) : 0;
}

vkcnn_status vkcnn_session_input_info(vkcnn_session session, uint32_t index,
                                      vkcnn_tensor_info* info) {
  return tensorInfoAt(session, index, info, "vkcnn_session_input_info", "session", "input",
                      &vkcnn_session_s::inputs);
}

vkcnn_status vkcnn_session_output_info(vkcnn_session session, uint32_t index,
                                       vkcnn_tensor_info* info) {
  return tensorInfoAt(session, index, info, "vkcnn_session_output_info", "session", "output",
                      &vkcnn_session_s::outputs);
}

vkcnn_status vkcnn_session_load_statistics(vkcnn_session session,
                                           vkcnn_load_statistics* statistics) {
  return guarded([&] {
    const char* f = "vkcnn_session_load_statistics";
    const vkcnn_session_s& s = need(session, f, "session");
    vkcnn_load_statistics& out = need(statistics, f, "statistics");
    const vkcnn::SessionLoadStatistics& l = s.session.loadStatistics();
    out = vkcnn_load_statistics{l.readMs,
                                l.parseMs,
                                l.checkMs,
                                l.importMs,
                                l.shapeInferenceMs,
                                l.optimizeMs,
                                l.packMs,
                                l.uploadMs,
                                l.imagesMs,
                                l.totalMs,
                                l.firstRunMs,
                                l.pipelinesMs,
                                l.pipelinesCreated,
                                l.uploadBytes,
                                l.uploadSubmissions,
                                l.pipelineCacheLoaded ? 1 : 0,
                                l.contextMs,
                                l.contextWaitMs};
  });
}

vkcnn_status vkcnn_session_run(vkcnn_session session, const float* const* inputs,
                               uint32_t inputCount, float* const* outputs, uint32_t outputCount) {
  return guarded([&] {
    const char* f = "vkcnn_session_run";
    vkcnn_session_s& s = need(session, f, "session");
    checkCount(inputCount, s.inputs.size(), f, "input_count");
    checkCount(outputCount, s.outputs.size(), f, "output_count");
    checkHostArrays(inputs, inputCount, outputs, outputCount, f);
    std::vector<std::span<const float>> in;
    std::vector<std::span<float>> out;
    for (uint32_t i = 0; i < inputCount; ++i) in.emplace_back(inputs[i], s.inputs[i].element_count);
    for (uint32_t o = 0; o < outputCount; ++o)
      out.emplace_back(outputs[o], s.outputs[o].element_count);
    s.session.run(in, out);
  });
}

vkcnn_status vkcnn_session_encode_images(vkcnn_session session, vkcnn_command_buffer commandBuffer,
                                         const vkcnn_image* inputs, uint32_t inputCount,
                                         const vkcnn_image* outputs, uint32_t outputCount) {
  return encode<vkcnn_image, Image>("vkcnn_session_encode_images", session, commandBuffer, inputs,
                                    inputCount, outputs, outputCount);
}

vkcnn_status vkcnn_session_encode_buffers(vkcnn_session session, vkcnn_command_buffer commandBuffer,
                                          const vkcnn_buffer* inputs, uint32_t inputCount,
                                          const vkcnn_buffer* outputs, uint32_t outputCount) {
  return encode<vkcnn_buffer, Buffer>("vkcnn_session_encode_buffers", session, commandBuffer,
                                      inputs, inputCount, outputs, outputCount);
}

}  // extern "C"
