// ONNX normalisations and softmax: BatchNormalization, InstanceNormalization, LRN,
// LayerNormalization (a Tensor kernel), Softmax and LogSoftmax over the channels (a kernel), the
// H x W plane (global pooling and arithmetic) or any other axis (a Tensor kernel).
#include <cmath>

#include "onnx/importer.h"
#include "vkcnn/error.h"
#include "vkcnn/normalization.h"
#include "vkcnn/pooling.h"
#include "vkcnn/softmax.h"
#include "vkcnn/tensor_ops.h"

namespace vkcnn::detail::onnx_import {
namespace {

void batchNormalization(Importer& im) {
  if (im.opset() < 9 && im.attrInt("spatial", 1) == 0)
    unsupported("BatchNormalization with spatial = 0 (statistics per element)");
  if (im.attrInt("training_mode", 0) != 0) unsupported("BatchNormalization in training mode");
  for (int k = 1; k < im.outputCount(); ++k)
    if (im.outputUsed(k)) unsupported("BatchNormalization's training outputs (mean, variance)");
  const ImageValue& v = im.valueInput(0);
  if (v.dims.size() >= 2 && (im.isTensor(v) || v.dims.size() > 4 || !im.canonical(v))) {
    // On the Tensor (3-D data, a view): x * scale + shift, one pair per channel (axis 1).
    const int64_t c = v.dims[1];
    const float epsilon = im.attrFloat("epsilon", 1e-5f);
    const std::vector<float>&gamma = im.floatConstant(1, "scale").f,
          &beta = im.floatConstant(2, "B").f, &mean = im.floatConstant(3, "mean").f,
          &variance = im.floatConstant(4, "var").f;
    for (const auto* p : {&gamma, &beta, &mean, &variance})
      if (int64_t(p->size()) != c)
        invalidModel("BatchNormalization parameters need " + std::to_string(c) +
                     " values, one has " + std::to_string(p->size()));
    std::vector<float> scale(static_cast<size_t>(c)), shift(static_cast<size_t>(c));
    for (size_t k = 0; k < size_t(c); ++k) {
      const double a = double(gamma[k]) / std::sqrt(double(variance[k]) + double(epsilon));
      scale[k] = float(a);
      shift[k] = float(double(beta[k]) - a * double(mean[k]));
    }
    std::vector<int64_t> perChannel(v.dims.size() - 1, 1);
    perChannel[0] = c;
    Graph& g = im.graph();
    const GraphTensor y =
        g.tensorBinary(im.tensorOf(v), im.constantTensor(HostTensor::floats(perChannel, scale)),
                       TensorBinaryOperation::multiply, im.nodeName() + " (scale)");
    return im.setImage(0,
                       g.tensorBinary(y, im.constantTensor(HostTensor::floats(perChannel, shift)),
                                      TensorBinaryOperation::add, im.nodeName()),
                       v.dims);
  }
  const ImageValue& x = im.imageInput(0);
  const Shape4 s = im.requireCanonical(x);
  BatchNormalizationParameters p;
  p.gamma = im.floatConstant(1, "scale").f;
  p.beta = im.floatConstant(2, "B").f;
  p.mean = im.floatConstant(3, "mean").f;
  p.variance = im.floatConstant(4, "var").f;
  p.epsilon = im.attrFloat("epsilon", 1e-5f);
  for (const auto* v : {&p.gamma, &p.beta, &p.mean, &p.variance})
    if (int64_t(v->size()) != s.c)
      invalidModel("BatchNormalization parameters need " + std::to_string(s.c) +
                   " values, one has " + std::to_string(v->size()));
  // A node of its own: the Graph folds it into a convolution before it.
  im.setImage(0, im.graph().batchNormalization(x.tensor, p, im.nodeName()), x.dims);
}

void instanceNormalization(Importer& im) {
  const ImageValue& x = im.imageInput(0);
  const Shape4 s = im.requireCanonical(x, 3);
  InstanceNormalizationDescriptor d;
  d.featureChannels = u32(s.c, "channels");
  d.gamma = im.floatConstant(1, "scale").f;
  d.beta = im.floatConstant(2, "B").f;
  d.epsilon = im.attrFloat("epsilon", 1e-5f);
  GraphTensor out = im.graph().instanceNormalization(x.tensor, d, im.nodeName());
  im.setImage(0, out, x.dims);
}

void lrn(Importer& im) {
  const ImageValue& x = im.imageInput(0);
  im.requireCanonical(x);
  LocalResponseNormalizationDescriptor d;
  const int64_t size = im.attrInt("size", 0);
  if (size < 1) invalidModel("LRN size must be at least 1");
  d.size = u32(size, "size");
  d.alpha = im.attrFloat("alpha", 1e-4f);
  d.beta = im.attrFloat("beta", 0.75f);
  d.bias = im.attrFloat("bias", 1.0f);
  GraphTensor out = im.graph().localResponseNormalization(x.tensor, d, im.nodeName());
  im.setImage(0, out, x.dims);
}

// Softmax over the H x W plane of each channel, from global pooling and broadcast arithmetic:
//   m = max over the plane, e = exp(x - m), y = e / sum(e)  or  y = (x - m) - log(sum(e)).
void spatialSoftmax(Importer& im, const ImageValue& x, bool log, const Shape4& s) {
  const std::string name = im.nodeName();
  const float pixels = float(s.h * s.w);
  GraphTensor m = im.graph().globalPooling(x.tensor, true, name + " (max)");
  GraphTensor t =
      im.graph().arithmetic(x.tensor, m, ArithmeticOperation::subtract, name + " (shift)");
  GraphTensor e = im.graph().neuron(t, NeuronDescriptor::of(NeuronType::exponential, 1.f, 0.f, 0.f),
                                    name + " (exp)");
  GraphTensor mean = im.graph().globalPooling(e, false, name + " (mean)");
  if (!log) {
    GraphTensor y = im.graph().arithmetic(e, mean, ArithmeticOperation::divide, name);
    y = im.graph().neuron(y, NeuronDescriptor::of(NeuronType::linear, 1.f / pixels, 0.f),
                          name + " (scale)");
    return im.setImage(0, y, x.dims);
  }
  GraphTensor l = im.graph().neuron(
      mean, NeuronDescriptor::of(NeuronType::logarithm, pixels, 0.f, 0.f), name + " (log)");
  im.setImage(0, im.graph().arithmetic(t, l, ArithmeticOperation::subtract, name), x.dims);
}

// Softmax along one axis (opset 13) or over the axes from `axis` on (older opsets: a reshape to
// [outer, inner]) as the Tensor kernel.
void tensorSoftmax(Importer& im, const ImageValue& x, int64_t axis, bool log) {
  GraphTensor t = im.tensorOf(x);
  if (im.opset() < 13 && axis + 1 < int64_t(x.dims.size())) {
    int64_t outer = 1, inner = 1;
    for (size_t a = 0; a < x.dims.size(); ++a) (int64_t(a) < axis ? outer : inner) *= x.dims[a];
    t = im.graph().reshape(t, {u32(outer, "rows"), u32(inner, "columns")},
                           im.nodeName() + " (rows)");
    axis = 1;
  }
  im.setImage(0, im.graph().softmax(t, int32_t(axis), log, im.nodeName()), x.dims);
}

void softmax(Importer& im, bool log) {
  const ImageValue& x = im.valueInput(0);
  const int64_t rank = int64_t(x.dims.size());
  const int64_t axis = normalizeAxis(im.attrInt("axis", im.opset() < 13 ? 1 : -1), rank, "Softmax");
  // On an Image: over the channels (a kernel) or the whole H x W plane (pooling and arithmetic);
  // anything else (the batch, one spatial axis, a Tensor or a reshaped view) on the Tensor.
  if (im.isTensor(x) || rank > 4 || !im.canonical(x)) return tensorSoftmax(im, x, axis, log);
  bool channels = false, spatial = false, batch = false;
  std::vector<bool> reducedAxis(size_t(rank), false);
  for (int64_t a = 0; a < rank; ++a) {
    reducedAxis[size_t(a)] = im.opset() < 13 ? a >= axis : a == axis;
    if (!reducedAxis[size_t(a)] || x.dims[size_t(a)] == 1) continue;
    const ImageAxis ia = imageAxis(size_t(rank), a);
    (ia == ImageAxis::n ? batch : ia == ImageAxis::c ? channels : spatial) = true;
  }
  bool onTensor = batch || (channels && spatial);
  if (spatial)
    for (int64_t a = 0; a < rank; ++a) {
      const ImageAxis ia = imageAxis(size_t(rank), a);
      if ((ia == ImageAxis::h || ia == ImageAxis::w) && x.dims[size_t(a)] > 1 &&
          !reducedAxis[size_t(a)])
        onTensor = true;
    }
  if (onTensor) return tensorSoftmax(im, x, axis, log);
  const Shape4 s = im.requireCanonical(x);
  if (spatial) return spatialSoftmax(im, x, log, s);
  if (!channels && s.c > 1) {
    // Every reduced axis has one element: softmax is 1, log-softmax 0.
    return im.setImage(
        0, im.neuron(x, NeuronDescriptor::of(NeuronType::linear, 0.f, log ? 0.f : 1.f)), x.dims);
  }
  im.setImage(0, im.graph().channelSoftmax(x.tensor, log, im.nodeName()), x.dims);
}

// LayerNormalization (opset 17) over the axes from `axis` on, on the Tensor.
void layerNormalization(Importer& im) {
  const ImageValue& x = im.valueInput(0);
  const int64_t axis =
      normalizeAxis(im.attrInt("axis", -1), int64_t(x.dims.size()), "LayerNormalization");
  if (im.attrInt("stash_type", 1) != 1) unsupported("LayerNormalization with stash_type != 1");
  const float epsilon = im.attrFloat("epsilon", 1e-5f);
  const GraphTensor t = im.tensorOf(x);
  const GraphTensor scale = im.tensorInput(1);
  const GraphTensor bias = im.hasInput(2) ? im.tensorInput(2) : GraphTensor{};
  const std::vector<int64_t> dims = x.dims;
  im.setImage(0,
              im.graph().layerNormalization(t, scale, bias, int32_t(axis), epsilon, im.nodeName()),
              dims);
  if (!im.outputUsed(1) && !im.outputUsed(2)) return;
  // The training outputs: Mean and InvStdDev = 1 / sqrt(mean((x - Mean)^2) + epsilon), over the
  // normalised axes (kept as extent 1).
  std::vector<int32_t> axes;
  std::vector<int64_t> reducedDims = dims;
  for (int64_t a = axis; a < int64_t(dims.size()); ++a) {
    axes.push_back(int32_t(a));
    reducedDims[size_t(a)] = 1;
  }
  Graph& g = im.graph();
  const std::string name = im.nodeName();
  const GraphTensor mean =
      g.reduction(t, TensorReductionOperation::mean, axes, true, name + " (mean)");
  im.setImage(1, mean, reducedDims);
  if (!im.outputUsed(2)) return;
  const GraphTensor d =
      g.tensorBinary(t, mean, TensorBinaryOperation::subtract, name + " (centre)");
  const GraphTensor d2 = g.tensorBinary(d, d, TensorBinaryOperation::multiply, name + " (square)");
  GraphTensor v = g.reduction(d2, TensorReductionOperation::mean, axes, true, name + " (variance)");
  v = g.tensorNeuron(v, NeuronDescriptor::of(NeuronType::linear, 1.f, epsilon),
                     name + " (+ epsilon)");
  v = g.tensorUnary(v, TensorUnaryOperation::sqrt, name + " (sqrt)");
  im.setImage(2, g.tensorUnary(v, TensorUnaryOperation::reciprocal, name + " (inverse)"),
              reducedDims);
}

constexpr int64_t kLast = kNewestOpset;

}  // namespace

std::span<const OpEntry> normalizationOps() {
  static const OpEntry ops[] = {
      {"BatchNormalization", 1, kLast, nullptr, batchNormalization},
      {"InstanceNormalization", 1, kLast, nullptr, instanceNormalization},
      {"LRN", 1, kLast, nullptr, lrn},
      {"LayerNormalization", 17, kLast, nullptr, layerNormalization},
      {"Softmax", 1, kLast, nullptr, [](Importer& im) { softmax(im, false); }},
      {"LogSoftmax", 1, kLast, nullptr, [](Importer& im) { softmax(im, true); }},
  };
  return ops;
}

}  // namespace vkcnn::detail::onnx_import
