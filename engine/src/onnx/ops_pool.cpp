// ONNX pooling and reductions: MaxPool, AveragePool, the global poolings, ReduceMean / Sum / Max /
// Min over the channels or the whole H x W plane of an Image, every Reduce* over any other axes and
// ArgMax / ArgMin as Tensor kernels.
#include <algorithm>

#include "onnx/importer.h"
#include "vkcnn/convolution.h"
#include "vkcnn/error.h"
#include "vkcnn/pooling.h"
#include "vkcnn/tensor_ops.h"

namespace vkcnn::detail::onnx_import {
namespace {

void pool(Importer& im, bool max) {
  const ImageValue& x = im.imageInput(0);
  const size_t rank = x.dims.size();
  const Shape4 s = im.requireCanonical(x, 3);
  if (max && im.outputUsed(1)) unsupported("the MaxPool Indices output");
  auto ks = im.attrInts("kernel_shape");
  if (!ks || ks->size() != rank - 2) invalidModel("kernel_shape needs one value per spatial axis");
  const auto win = rank == 4 ? windows(im, {s.h, s.w}, *ks) : windows(im, {s.h}, *ks);
  const Window wy = win[0], wx = rank == 4 ? win[1] : Window{1, 1, 1, 0, 0};
  if (!max && im.attrInts("dilations") && (wx.dilation != 1 || wy.dilation != 1))
    unsupported("AveragePool with dilations");
  // A 1x1 window at stride 1 without padding passes its input through: no kernel (torchvision's
  // AdaptiveAvgPool2d((7, 7)) after VGG's features, exported as such a window).
  if (wx.kernel == 1 && wy.kernel == 1 && wx.stride == 1 && wy.stride == 1 && wx.padBegin == 0 &&
      wx.padEnd == 0 && wy.padBegin == 0 && wy.padEnd == 0)
    return im.setImage(0, x);
  PoolingDescriptor d = PoolingDescriptor::of(u32(wx.kernel, "kernel"), u32(wy.kernel, "kernel"),
                                              u32(wx.stride, "stride"), u32(wy.stride, "stride"));
  d.dilationRateX = u32(wx.dilation, "dilation");
  d.dilationRateY = u32(wy.dilation, "dilation");
  d.padding = Padding::explicitPadding(uint32_t(wy.padBegin), uint32_t(wx.padBegin),
                                       uint32_t(wy.padEnd), uint32_t(wx.padEnd));
  d.padding.ceilMode = im.attrInt("ceil_mode", 0) != 0;
  d.countIncludePad = im.attrInt("count_include_pad", 0) != 0;
  GraphTensor out = im.graph().pooling(x.tensor, max, d, im.nodeName());
  im.setImage(0, out, im.dimsLike(x, im.graph().shape(out)));
}

void globalPool(Importer& im, bool max) {
  const ImageValue& x = im.imageInput(0);
  im.requireCanonical(x, 3);
  GraphTensor out = im.graph().globalPooling(x.tensor, max, im.nodeName());
  im.setImage(0, out, im.dimsLike(x, im.graph().shape(out)));
}

std::optional<std::vector<int64_t>> reduceAxes(Importer& im, const std::string& op, bool& noop) {
  noop = false;
  if (op == "ReduceSum" && im.opset() >= 13) {
    if (im.hasInput(1)) {
      auto axes = toInt64s(im.constantInput(1, "axes"));
      if (!axes.empty()) return axes;
    }
    noop = im.attrInt("noop_with_empty_axes", 0) != 0;
    return std::nullopt;
  }
  return im.attrInts("axes");
}

TensorReductionOperation reductionOperation(const std::string& op) {
  static const std::pair<const char*, TensorReductionOperation> table[] = {
      {"ReduceSum", TensorReductionOperation::sum},
      {"ReduceMean", TensorReductionOperation::mean},
      {"ReduceMax", TensorReductionOperation::maximum},
      {"ReduceMin", TensorReductionOperation::minimum},
      {"ReduceProd", TensorReductionOperation::product},
      {"ReduceL1", TensorReductionOperation::l1},
      {"ReduceL2", TensorReductionOperation::l2},
      {"ReduceLogSumExp", TensorReductionOperation::logSumExp},
      {"ReduceSumSquare", TensorReductionOperation::sumSquare},
      {"ReduceLogSum", TensorReductionOperation::logSum},
  };
  for (const auto& [name, operation] : table)
    if (op == name) return operation;
  unsupported(op);
}

void reduce(Importer& im, const std::string& op) {
  const ImageValue& x = im.valueInput(0);
  bool noop = false;
  auto axesOpt = reduceAxes(im, op, noop);
  if (noop) return im.setImage(0, x);
  const int64_t rank = int64_t(x.dims.size());
  const bool keep = im.attrInt("keepdims", 1) != 0;
  std::vector<bool> reducedAxis(size_t(rank), !axesOpt);
  if (axesOpt)
    for (int64_t a : *axesOpt) reducedAxis[size_t(normalizeAxis(a, rank, op))] = true;
  std::vector<int64_t> dims;
  for (int64_t a = 0; a < rank; ++a)
    if (!reducedAxis[size_t(a)])
      dims.push_back(x.dims[size_t(a)]);
    else if (keep)
      dims.push_back(1);
  // On an Image: ReduceMean / Sum over the channels (a 1x1 convolution), and Mean / Sum / Max /
  // Min over the whole H x W plane (global pooling). Anything else runs on the Tensor.
  bool spatial = false, channels = false, onTensor = im.isTensor(x) || rank > 4 || !im.canonical(x);
  const bool imageOp =
      op == "ReduceMean" || op == "ReduceSum" || op == "ReduceMax" || op == "ReduceMin";
  onTensor = onTensor || !imageOp;
  for (int64_t a = 0; a < rank && !onTensor; ++a) {
    if (!reducedAxis[size_t(a)] || x.dims[size_t(a)] == 1) continue;
    switch (imageAxis(size_t(rank), a)) {
      case ImageAxis::n:
        onTensor = true;
        break;
      case ImageAxis::c:
        channels = true;
        break;
      default:
        spatial = true;
    }
  }
  if (channels && op != "ReduceMean" && op != "ReduceSum") onTensor = true;
  // A reduced spatial axis must take the whole plane (global pooling reduces H and W together).
  if (spatial && !onTensor)
    for (int64_t a = 0; a < rank; ++a) {
      const ImageAxis ia = imageAxis(size_t(rank), a);
      if ((ia == ImageAxis::h || ia == ImageAxis::w) && x.dims[size_t(a)] > 1 &&
          !reducedAxis[size_t(a)])
        onTensor = true;
    }
  if (onTensor) {
    std::vector<int32_t> axes;
    for (int64_t a = 0; a < rank; ++a)
      if (reducedAxis[size_t(a)]) axes.push_back(int32_t(a));
    return im.setImage(
        0, im.graph().reduction(im.tensorOf(x), reductionOperation(op), axes, keep, im.nodeName()),
        dims);
  }
  const Shape4 s = im.requireCanonical(x);
  GraphTensor t = x.tensor;
  const std::string name = im.nodeName();
  if (spatial) {
    if (op == "ReduceMean" || op == "ReduceSum") {
      t = im.graph().globalPooling(t, false, name);
      if (op == "ReduceSum")
        t = im.graph().neuron(t, NeuronDescriptor::of(NeuronType::linear, float(s.h * s.w), 0.f),
                              name + " (sum)");
    } else if (op == "ReduceMax") {
      t = im.graph().globalPooling(t, true, name);
    } else {
      // min(x) = -max(-x)
      t = im.graph().neuron(t, NeuronDescriptor::of(NeuronType::linear, -1.f, 0.f),
                            name + " (negate)");
      t = im.graph().globalPooling(t, true, name);
      t = im.graph().neuron(t, NeuronDescriptor::of(NeuronType::linear, -1.f, 0.f),
                            name + " (negate back)");
    }
  }
  if (channels) {
    // A 1x1 convolution to one channel sums (or averages) the channels.
    const TensorShape ts = im.graph().shape(t);
    const float w = op == "ReduceMean" ? 1.f / float(s.c) : 1.f;
    t = im.graph().convolution(t, ConvolutionDescriptor::make(1, 1, ts.featureChannels, 1),
                               std::vector<float>(ts.featureChannels, w), {}, {},
                               name + " (channels)");
  }
  if (!spatial && !channels) return im.setImage(0, x.tensor, dims);
  im.setImage(0, t, dims);
}

void foldReduce(Importer& im) {
  const HostTensor& x = im.constantInput(0, "operand");
  bool noop = false;
  auto axes = reduceAxes(im, im.opType(), noop);
  if (noop)
    im.setConstant(0, x);
  else
    im.setConstant(0, reduced(x, im.opType(), axes ? *axes : std::vector<int64_t>{},
                              im.attrInt("keepdims", 1) != 0));
}

// ArgMax / ArgMin on the Tensor (the indices as floats).
void argReduce(Importer& im, bool maximum) {
  const ImageValue& x = im.valueInput(0);
  const int64_t rank = int64_t(x.dims.size());
  const int64_t axis = normalizeAxis(im.attrInt("axis", 0), rank, im.opType());
  const bool keep = im.attrInt("keepdims", 1) != 0;
  std::vector<int64_t> dims = x.dims;
  if (keep)
    dims[size_t(axis)] = 1;
  else
    dims.erase(dims.begin() + axis);
  im.setImage(0,
              im.graph().argReduction(im.tensorOf(x), maximum, int32_t(axis), keep,
                                      im.attrInt("select_last_index", 0) != 0, im.nodeName()),
              dims);
}

void translateReduce(Importer& im) {
  reduce(im, im.opType());
}

constexpr int64_t kLast = kNewestOpset;

}  // namespace

std::span<const OpEntry> poolingOps() {
  static const OpEntry ops[] = {
      {"MaxPool", 1, kLast, nullptr, [](Importer& im) { pool(im, true); }},
      {"AveragePool", 1, kLast, nullptr, [](Importer& im) { pool(im, false); }},
      {"GlobalMaxPool", 1, kLast, nullptr, [](Importer& im) { globalPool(im, true); }},
      {"GlobalAveragePool", 1, kLast, nullptr, [](Importer& im) { globalPool(im, false); }},
      {"ReduceMean", 1, kLast, foldReduce, translateReduce},
      {"ReduceSum", 1, kLast, foldReduce, translateReduce},
      {"ReduceMax", 1, kLast, foldReduce, translateReduce},
      {"ReduceMin", 1, kLast, foldReduce, translateReduce},
      {"ReduceProd", 1, kLast, foldReduce, translateReduce},
      {"ReduceL1", 1, kLast, nullptr, translateReduce},
      {"ReduceL2", 1, kLast, nullptr, translateReduce},
      {"ReduceLogSum", 1, kLast, nullptr, translateReduce},
      {"ReduceLogSumExp", 1, kLast, nullptr, translateReduce},
      {"ReduceSumSquare", 1, kLast, nullptr, translateReduce},
      {"ArgMax", 1, kLast, nullptr, [](Importer& im) { argReduce(im, true); }},
      {"ArgMin", 1, kLast, nullptr, [](Importer& im) { argReduce(im, false); }},
  };
  return ops;
}

}  // namespace vkcnn::detail::onnx_import
