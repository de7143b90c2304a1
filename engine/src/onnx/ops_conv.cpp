// ONNX convolutions and matrix products: Conv and ConvTranspose (rank 3 and 4), Gemm and MatMul
// of [N, K] by a constant [K, M] as fully-connected layers, any other MatMul (batched, computed B)
// and Gemm (transA, a bias per row) as Tensor kernels. Weights are reordered into MPS order
// here; the window geometry (windows()) is shared with pooling.
#include <algorithm>

#include "kernels/weights.h"
#include "onnx/importer.h"
#include "vkcnn/convolution.h"
#include "vkcnn/convolution_transpose.h"
#include "vkcnn/error.h"
#include "vkcnn/tensor_ops.h"

namespace vkcnn::detail::onnx_import {

// Weights a reorder must have per thread before another one is worth starting.
constexpr size_t kWeightsPerThread = size_t(1) << 20;

std::vector<Window> windows(Importer& im, const std::vector<int64_t>& spatial,
                            const std::vector<int64_t>& kernel, bool transposed) {
  const size_t n = spatial.size();
  auto list = [&](const char* name, int64_t fallback) {
    auto v = im.attrInts(name);
    if (!v) return std::vector<int64_t>(n, fallback);
    if (v->size() != n)
      invalidModel(std::string("attribute '") + name + "' has " + std::to_string(v->size()) +
                   " values for " + std::to_string(n) + " spatial axes");
    return *v;
  };
  const auto strides = list("strides", 1), dilations = list("dilations", 1);
  std::vector<int64_t> pads(2 * n, 0);
  if (auto p = im.attrInts("pads")) {
    if (p->size() != 2 * n)
      invalidModel("attribute 'pads' has " + std::to_string(p->size()) + " values for " +
                   std::to_string(n) + " spatial axes");
    pads = *p;
  }
  const std::string autoPad = im.attrString("auto_pad", "NOTSET");
  std::vector<Window> out(n);
  for (size_t k = 0; k < n; ++k) {
    Window& w = out[k];
    w.kernel = kernel[k];
    w.stride = strides[k];
    w.dilation = dilations[k];
    if (w.kernel < 1 || w.kernel > kMaxElements || w.stride < 1 || w.stride > kMaxElements ||
        w.dilation < 1 || w.dilation > kMaxElements ||
        (w.kernel - 1) * w.dilation + 1 > kMaxElements)
      invalidModel("kernel " + std::to_string(w.kernel) + ", stride " + std::to_string(w.stride) +
                   " and dilation " + std::to_string(w.dilation) + " must each be at least 1");
    w.padBegin = pads[k];
    w.padEnd = pads[k + n];
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      if (transposed) continue;  // ConvTranspose resolves its own
      const int64_t in = spatial[k];
      const int64_t outSize = (in + w.stride - 1) / w.stride;
      const int64_t dilated = (w.kernel - 1) * w.dilation + 1;
      const int64_t total = std::max<int64_t>(0, (outSize - 1) * w.stride + dilated - in);
      w.padBegin = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.padEnd = total - w.padBegin;
    } else if (autoPad == "VALID") {
      w.padBegin = w.padEnd = 0;
    } else if (autoPad != "NOTSET" && !autoPad.empty()) {
      invalidModel("auto_pad '" + autoPad + "' is not an ONNX value");
    }
    if (w.padBegin < 0 || w.padEnd < 0) unsupported("negative pads (cropping)");
    if (w.padBegin > kMaxElements || w.padEnd > kMaxElements) invalidModel("pads are too large");
  }
  return out;
}

namespace {

void conv(Importer& im) {
  const ImageValue& x = im.imageInput(0);
  const size_t rank = x.dims.size();
  const Shape4 s = im.requireCanonical(x, 3);
  const HostTensor& w = im.floatConstant(1, "weights");
  if (w.rank() != int64_t(rank))
    invalidModel("weights " + dimsToString(w.dims) + " do not match the input rank " +
                 std::to_string(rank));
  const int64_t group = im.attrInt("group", 1);
  const int64_t m = w.dims[0], perGroup = w.dims[1];
  // Rank 3 ([N, C, L]) runs down the image's height.
  const int64_t kh = w.dims[2], kw = rank == 4 ? w.dims[3] : 1;
  if (group < 1 || group > s.c || perGroup * group != s.c || m % group)
    invalidModel("weights " + dimsToString(w.dims) + " with group " + std::to_string(group) +
                 " do not fit an input of " + std::to_string(s.c) + " channels");
  if (auto ks = im.attrInts("kernel_shape"))
    if (*ks != std::vector<int64_t>(w.dims.begin() + 2, w.dims.end()))
      invalidModel("kernel_shape " + dimsToString(*ks) + " disagrees with weights " +
                   dimsToString(w.dims));
  const auto win = rank == 4 ? windows(im, {s.h, s.w}, {kh, kw}) : windows(im, {s.h}, {kh});
  const Window wy = win[0], wx = rank == 4 ? win[1] : Window{1, 1, 1, 0, 0};

  ConvolutionDescriptor d = ConvolutionDescriptor::make(
      u32(kw, "kernel width"), u32(kh, "kernel height"), u32(s.c, "channels"), u32(m, "outputs"));
  d.strideInPixelsX = u32(wx.stride, "stride");
  d.strideInPixelsY = u32(wy.stride, "stride");
  d.dilationRateX = u32(wx.dilation, "dilation");
  d.dilationRateY = u32(wy.dilation, "dilation");
  d.groups = u32(group, "group");
  // ONNX [M][C/g][kH][kW] -> MPS [M][kH][kW][C/g], written in order (the reads stay within one
  // output channel's weights, which the cache holds), ranges of outputs on threads.
  // A 1x1 kernel's weights are in MPS order already: taken as they are.
  const int64_t taps = kh * kw;
  std::vector<float> weights;
  if (taps == 1) {
    weights = im.takeFloats(1, "weights");
  } else {
    weights.resize(w.f.size());
    detail::parallelRanges(size_t(m), 1, kWeightsPerThread / size_t(taps * perGroup) + 1,
                           [&](size_t o0, size_t o1) {
                             for (int64_t o = int64_t(o0); o < int64_t(o1); ++o)
                               for (int64_t tap = 0; tap < taps; ++tap)
                                 for (int64_t i = 0; i < perGroup; ++i)
                                   weights[size_t((o * taps + tap) * perGroup + i)] =
                                       w.f[size_t((o * perGroup + i) * taps + tap)];
                           });
  }
  std::vector<float> bias;
  if (im.hasInput(2)) {
    bias = im.floatConstant(2, "bias").f;
    if (int64_t(bias.size()) != m)
      invalidModel(std::to_string(bias.size()) + " bias values for " + std::to_string(m) +
                   " outputs");
  }
  const Padding padding = Padding::explicitPadding(uint32_t(wy.padBegin), uint32_t(wx.padBegin),
                                                   uint32_t(wy.padEnd), uint32_t(wx.padEnd));
  GraphTensor out = im.graph().convolution(x.tensor, d, std::move(weights), std::move(bias),
                                           padding, im.nodeName());
  im.setImage(0, out, im.dimsLike(x, im.graph().shape(out)));
}

void convTranspose(Importer& im) {
  const ImageValue& x = im.imageInput(0);
  const size_t rank = x.dims.size();
  const Shape4 s = im.requireCanonical(x, 3);
  const HostTensor& w = im.floatConstant(1, "weights");
  if (w.rank() != int64_t(rank))
    invalidModel("weights " + dimsToString(w.dims) + " do not match the input rank");
  const int64_t group = im.attrInt("group", 1);
  const int64_t c = w.dims[0], mPerGroup = w.dims[1];
  // Rank 3 ([N, C, L]) runs down the image's height.
  const int64_t kh = w.dims[2], kw = rank == 4 ? w.dims[3] : 1;
  if (group < 1 || group > s.c || c != s.c || c % group)
    invalidModel("weights " + dimsToString(w.dims) + " with group " + std::to_string(group) +
                 " do not fit an input of " + std::to_string(s.c) + " channels");
  const std::vector<int64_t> spatial =
      rank == 4 ? std::vector<int64_t>{s.h, s.w} : std::vector<int64_t>{s.h};
  const std::vector<int64_t> kernel =
      rank == 4 ? std::vector<int64_t>{kh, kw} : std::vector<int64_t>{kh};
  auto win = windows(im, spatial, kernel, true);
  const size_t n = spatial.size();
  std::vector<int64_t> outputPadding(n, 0);
  if (auto op = im.attrInts("output_padding")) {
    if (op->size() != n) invalidModel("output_padding needs one value per spatial axis");
    outputPadding = *op;
  }
  for (int64_t p : outputPadding)
    if (p < 0 || p > kMaxInputDimension)
      invalidModel("output_padding " + std::to_string(p) + " is out of range");
  std::optional<std::vector<int64_t>> outputShape = im.attrInts("output_shape");
  if (outputShape && outputShape->size() == n + 2)
    outputShape = std::vector<int64_t>(outputShape->begin() + 2, outputShape->end());
  if (outputShape && outputShape->size() != n)
    invalidModel("output_shape needs one value per spatial axis");
  if (outputShape)
    for (int64_t v : *outputShape)
      if (v < 1 || v > kMaxInputDimension)
        invalidModel("output_shape " + dimsToString(*outputShape) + " is out of range");
  const std::string autoPad = im.attrString("auto_pad", "NOTSET");
  for (size_t k = 0; k < n; ++k) {
    Window& wk = win[k];
    const int64_t dilated = (wk.kernel - 1) * wk.dilation + 1;
    const bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
    if (!outputShape && !same) continue;
    const int64_t target = outputShape ? (*outputShape)[k] : spatial[k] * wk.stride;
    int64_t total = wk.stride * (spatial[k] - 1) + outputPadding[k] + dilated - target;
    if (total < 0) {
      // The requested size is beyond the full output: the extra pixels come from output padding.
      outputPadding[k] -= total;
      total = 0;
    }
    if (autoPad == "SAME_UPPER") {
      wk.padBegin = total / 2;
      wk.padEnd = total - total / 2;
    } else {
      wk.padBegin = total - total / 2;
      wk.padEnd = total / 2;
    }
  }
  const Window wy = win[0], wx = n == 2 ? win[1] : Window{1, 1, 1, 0, 0};
  ConvolutionTransposeDescriptor d;
  d.kernelWidth = u32(kw, "kernel width");
  d.kernelHeight = u32(kh, "kernel height");
  d.inputFeatureChannels = u32(c, "channels");
  d.outputFeatureChannels = u32(mPerGroup * group, "outputs");
  d.strideInPixelsX = u32(wx.stride, "stride");
  d.strideInPixelsY = u32(wy.stride, "stride");
  d.dilationRateX = u32(wx.dilation, "dilation");
  d.dilationRateY = u32(wy.dilation, "dilation");
  d.groups = u32(group, "group");
  d.padding = Padding::explicitPadding(uint32_t(wy.padBegin), uint32_t(wx.padBegin),
                                       uint32_t(wy.padEnd), uint32_t(wx.padEnd));
  d.outputPaddingY = u32(outputPadding[0], "output padding");
  d.outputPaddingX = n == 2 ? u32(outputPadding[1], "output padding") : 0;
  std::vector<float> bias;
  if (im.hasInput(2)) bias = im.floatConstant(2, "bias").f;
  GraphTensor out = im.graph().convolutionTranspose(
      x.tensor, d, convolutionTransposeWeightsFromOnnx(d, w.f), std::move(bias), im.nodeName());
  im.setImage(0, out, im.dimsLike(x, im.graph().shape(out)));
}

// The dims of a value or a constant.
const std::vector<int64_t>& operandDims(Importer& im, int k) {
  const Value& v = im.input(k);
  return v.isImage ? v.image.dims : v.constant.dims;
}

// MatMul and Gemm as Tensor kernels: batched, transposed, with a matrix bias, B computed, ...
void tensorGemm(Importer& im, bool matmul) {
  std::vector<int64_t> da = operandDims(im, 0), db = operandDims(im, 1);
  if (da.empty() || db.empty()) invalidModel("a MatMul or Gemm operand is a scalar");
  if (matmul) {
    const bool row = da.size() == 1, column = db.size() == 1;
    if (row) da.insert(da.begin(), 1);
    if (column) db.push_back(1);
    if (da.back() != db[db.size() - 2])
      invalidModel("A " + dimsToString(operandDims(im, 0)) + " and B " +
                   dimsToString(operandDims(im, 1)) + " do not multiply");
    std::vector<int64_t> dims = broadcastShapes(std::vector<int64_t>(da.begin(), da.end() - 2),
                                                std::vector<int64_t>(db.begin(), db.end() - 2));
    if (!row) dims.push_back(da[da.size() - 2]);
    if (!column) dims.push_back(db.back());
    return im.setImage(0, im.graph().matMul(im.tensorInput(0), im.tensorInput(1), im.nodeName()),
                       dims);
  }
  GemmDescriptor d;
  d.transposeA = im.attrInt("transA", 0) != 0;
  d.transposeB = im.attrInt("transB", 0) != 0;
  d.alpha = im.attrFloat("alpha", 1.f);
  d.beta = im.attrFloat("beta", 1.f);
  if (da.size() != 2 || db.size() != 2)
    invalidModel("Gemm of " + dimsToString(da) + " and " + dimsToString(db) + " (matrices only)");
  const int64_t m = d.transposeA ? da[1] : da[0], n = d.transposeB ? db[0] : db[1];
  if ((d.transposeA ? da[0] : da[1]) != (d.transposeB ? db[1] : db[0]))
    invalidModel("A " + dimsToString(da) + " and B " + dimsToString(db) + " do not multiply");
  GraphTensor c;
  if (im.hasInput(2)) {
    if (broadcastShapes(operandDims(im, 2), {m, n}) != std::vector<int64_t>{m, n})
      invalidModel("C " + dimsToString(operandDims(im, 2)) + " does not broadcast to the output");
    c = im.tensorInput(2);
  }
  im.setImage(0, im.graph().gemm(im.tensorInput(0), im.tensorInput(1), c, d, im.nodeName()),
              {m, n});
}

void gemm(Importer& im, bool matmul) {
  // A fully-connected layer where A is an Image [N, K] (its batch the images) and B a constant
  // matrix; anything else runs on the Tensor.
  const Value& av = im.input(0);
  const Value& bv = im.input(1);
  bool fullyConnected = av.isImage && !im.isTensor(av.image) && av.image.dims.size() == 2 &&
                        !bv.isImage && bv.constant.isFloat() && bv.constant.rank() == 2 &&
                        (matmul || im.attrInt("transA", 0) == 0);
  if (fullyConnected && av.image.dims[0] != im.imageShape(av.image).n) fullyConnected = false;
  if (fullyConnected && !matmul && im.hasInput(2)) {
    const Value& cv = im.input(2);
    fullyConnected =
        !cv.isImage && cv.constant.isFloat() &&
        (cv.constant.rank() < 2 || cv.constant.dims[0] == 1 || im.imageShape(av.image).n == 1);
  }
  if (!fullyConnected) return tensorGemm(im, matmul);
  const ImageValue& a = im.imageInput(0);
  const Shape4 s = im.imageShape(a);
  const int64_t k = a.dims[1];
  const HostTensor& b = im.floatConstant(1, "B");
  const bool transB = !matmul && im.attrInt("transB", 0) != 0;
  const int64_t bk = transB ? b.dims[1] : b.dims[0], m = transB ? b.dims[0] : b.dims[1];
  if (bk != k)
    invalidModel("A " + dimsToString(a.dims) + " and B " + dimsToString(b.dims) +
                 (transB ? " (transposed)" : "") + " do not multiply");
  const float alpha = matmul ? 1.f : im.attrFloat("alpha", 1.f);
  const float beta = matmul ? 1.f : im.attrFloat("beta", 1.f);
  // k indexes A's row in CHW order of its image; MPS wants [out][h][w][c].
  const int64_t hw = s.h * s.w;
  // Written in order (vgg16's first classifier has 100 million weights): the reads stay within
  // one output's row of B, or stride down a column.
  // Ranges of outputs on threads.
  // B transposed over one pixel, unscaled, is in MPS order already: taken as it is.
  std::vector<float> weights;
  if (transB && hw == 1 && alpha == 1.f) {
    weights = im.takeFloats(1, "B");
  } else {
    weights.resize(size_t(m * k));
    detail::parallelRanges(
        size_t(m), 1, kWeightsPerThread / size_t(k) + 1, [&](size_t o0, size_t o1) {
          for (int64_t o = int64_t(o0); o < int64_t(o1); ++o)
            for (int64_t pixel = 0; pixel < hw; ++pixel)
              for (int64_t c = 0; c < s.c; ++c) {
                const int64_t kk = c * hw + pixel;
                const float v = transB ? b.f[size_t(o * k + kk)] : b.f[size_t(kk * m + o)];
                weights[size_t((o * hw + pixel) * s.c + c)] = alpha * v;
              }
        });
  }
  std::vector<float> bias;
  if (!matmul && im.hasInput(2)) {
    const HostTensor& cT = im.floatConstant(2, "C");
    const auto dims = broadcastShapes(cT.dims, {a.dims[0], m});
    if (dims != std::vector<int64_t>{a.dims[0], m})
      invalidModel("C " + dimsToString(cT.dims) + " does not broadcast to the output");
    const bool perRow = cT.rank() == 2 && cT.dims[0] != 1;
    if (perRow && s.n != 1) unsupported("a Gemm bias C that differs between batch rows");
    bias.resize(size_t(m));
    for (int64_t o = 0; o < m; ++o) {
      const int64_t column = cT.dims.empty() || cT.dims.back() == 1 ? 0 : o;
      bias[size_t(o)] = beta * cT.f[size_t(column)];
    }
  }
  ConvolutionDescriptor d = ConvolutionDescriptor::make(u32(s.w, "width"), u32(s.h, "height"),
                                                        u32(s.c, "channels"), u32(m, "outputs"));
  GraphTensor out =
      im.graph().fullyConnected(a.tensor, d, std::move(weights), std::move(bias), im.nodeName());
  im.setImage(0, out, {a.dims[0], m});
}

constexpr int64_t kLast = kNewestOpset;

}  // namespace

std::span<const OpEntry> convolutionOps() {
  static const OpEntry ops[] = {
      {"Conv", 1, kLast, nullptr, conv},
      {"ConvTranspose", 1, kLast, nullptr, convTranspose},
      {"Gemm", 1, kLast, nullptr, [](Importer& im) { gemm(im, false); }},
      {"MatMul", 1, kLast, nullptr, [](Importer& im) { gemm(im, true); }},
  };
  return ops;
}

}  // namespace vkcnn::detail::onnx_import
