// ONNX normalisations and softmax: BatchNormalization, InstanceNormalization, LRN, Softmax and
// LogSoftmax over the channels (a kernel) or the H x W plane (global pooling and arithmetic).
#include <cmath>

#include "onnx/importer.h"
#include "vkcnn/error.h"
#include "vkcnn/normalization.h"
#include "vkcnn/pooling.h"
#include "vkcnn/softmax.h"

namespace vkcnn::detail::onnx_import {
namespace {

void batchNormalization(Importer& im) {
  const ImageValue& x = im.imageInput(0);
  const Shape4 s = im.requireCanonical(x);
  if (im.opset() < 9 && im.attrInt("spatial", 1) == 0)
    unsupported("BatchNormalization with spatial = 0 (statistics per element)");
  if (im.attrInt("training_mode", 0) != 0) unsupported("BatchNormalization in training mode");
  for (int k = 1; k < im.outputCount(); ++k)
    if (im.outputUsed(k)) unsupported("BatchNormalization's training outputs (mean, variance)");
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
  GraphTensor out = im.graph().unary(
      x.tensor, std::make_shared<InstanceNormalization>(im.context(), d), im.nodeName());
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
  GraphTensor out = im.graph().unary(
      x.tensor, std::make_shared<LocalResponseNormalization>(im.context(), d), im.nodeName());
  im.setImage(0, out, x.dims);
}

// Softmax over the H x W plane of each channel, from global pooling and broadcast arithmetic:
//   m = max over the plane, e = exp(x - m), y = e / sum(e)  or  y = (x - m) - log(sum(e)).
// Softmax over the H x W plane of each channel, from global pooling and broadcast arithmetic:
//   m = max over the plane, e = exp(x - m), y = e / sum(e)  or  y = (x - m) - log(sum(e)).
void spatialSoftmax(Importer& im, const ImageValue& x, bool log, const Shape4& s) {
  const std::string name = im.nodeName();
  const float pixels = float(s.h * s.w);
  GraphTensor m =
      im.graph().unary(x.tensor, std::make_shared<GlobalPoolingMax>(im.context()), name + " (max)");
  GraphTensor t =
      im.graph().arithmetic(x.tensor, m, ArithmeticOperation::subtract, name + " (shift)");
  GraphTensor e = im.graph().neuron(t, NeuronDescriptor::of(NeuronType::exponential, 1.f, 0.f, 0.f),
                                    name + " (exp)");
  GraphTensor mean =
      im.graph().unary(e, std::make_shared<GlobalPoolingAverage>(im.context()), name + " (mean)");
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

void softmax(Importer& im, bool log) {
  const ImageValue& x = im.imageInput(0);
  const Shape4 s = im.requireCanonical(x);
  const int64_t rank = int64_t(x.dims.size());
  const int64_t axis = normalizeAxis(im.attrInt("axis", im.opset() < 13 ? 1 : -1), rank, "Softmax");
  const std::string what = log ? "LogSoftmax" : "Softmax";
  bool channels = false, spatial = false;
  std::vector<bool> reducedAxis(size_t(rank), false);
  for (int64_t a = 0; a < rank; ++a) {
    reducedAxis[size_t(a)] = im.opset() < 13 ? a >= axis : a == axis;
    if (!reducedAxis[size_t(a)] || x.dims[size_t(a)] == 1) continue;
    const ImageAxis ia = imageAxis(size_t(rank), a);
    if (ia == ImageAxis::n) unsupported(what + " over the batch axis");
    (ia == ImageAxis::c ? channels : spatial) = true;
  }
  if (channels && spatial)
    unsupported(what + " over channels and space together (" + dimsToString(x.dims) + ", axis " +
                std::to_string(axis) + ")");
  if (spatial) {
    for (int64_t a = 0; a < rank; ++a) {
      const ImageAxis ia = imageAxis(size_t(rank), a);
      if ((ia == ImageAxis::h || ia == ImageAxis::w) && x.dims[size_t(a)] > 1 &&
          !reducedAxis[size_t(a)])
        unsupported(what + " over one spatial axis of " + dimsToString(x.dims) +
                    " (only over the whole H x W plane)");
    }
    return spatialSoftmax(im, x, log, s);
  }
  if (!channels && s.c > 1) {
    // Every reduced axis has one element: softmax is 1, log-softmax 0.
    return im.setImage(
        0, im.neuron(x, NeuronDescriptor::of(NeuronType::linear, 0.f, log ? 0.f : 1.f)), x.dims);
  }
  std::shared_ptr<UnaryKernel> k;
  if (log)
    k = std::make_shared<LogSoftmax>(im.context());
  else
    k = std::make_shared<Softmax>(im.context());
  im.setImage(0, im.graph().unary(x.tensor, k, im.nodeName()), x.dims);
}

constexpr int64_t kLast = kNewestOpset;

}  // namespace

std::span<const OpEntry> normalizationOps() {
  static const OpEntry ops[] = {
      {"BatchNormalization", 1, kLast, nullptr, batchNormalization},
      {"InstanceNormalization", 1, kLast, nullptr, instanceNormalization},
      {"LRN", 1, kLast, nullptr, lrn},
      {"Softmax", 1, kLast, nullptr, [](Importer& im) { softmax(im, false); }},
      {"LogSoftmax", 1, kLast, nullptr, [](Importer& im) { softmax(im, true); }},
  };
  return ops;
}

}  // namespace vkcnn::detail::onnx_import
