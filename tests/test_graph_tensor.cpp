// Graph with Tensor values: values that leave the image layout (transposes, broadcasting along
// any axis, slices with steps, concatenation along any axis) live as Tensors, converted only
// where Images and Tensors meet; results against a double-precision reference with poisoned
// outputs, the batch check, and hostile arguments as errors.
#include <algorithm>
#include <cmath>

#include "test_support.h"
#include "vkcnn/graph.h"
#include "vkcnn/tensor_ops.h"

using namespace vkcnn;
namespace vt = vkcnn::test;

// Values that leave the image layout live as Tensors: conversions only where Images and Tensors
// meet (one per value), transposes, broadcasting with constants, erf, where, slices with steps,
// concatenation along a spatial axis, and an Image node (a neuron) after a Tensor.
TEST_CASE("graph: tensor values between images") {
  const uint32_t n = 2, c = 3, h = 4, w = 5;
  const std::vector<float> scale = {0.5f, -2.f, 1.5f};
  auto build = [&](ChannelFormat format) {
    GraphOptions options;
    options.channelFormat = format;
    options.numberOfImages = n;
    Graph g(vt::context(), options);
    GraphTensor x = g.input("x", {w, h, c});
    GraphTensor t = g.transpose(x, {0, 2, 3, 1}, "to nhwc");  // [n, h, w, c]
    GraphTensor k = g.constant({c}, scale, "scale");
    GraphTensor u = g.tensorUnary(g.tensorBinary(t, k, TensorBinaryOperation::multiply, "mul"),
                                  TensorUnaryOperation::erf, "erf");
    GraphTensor v = g.transpose(u, {0, 3, 1, 2}, "to nchw");
    g.output(v, "v");
    g.output(g.neuron(v, NeuronDescriptor::relu(), "relu"), "relu");
    GraphTensor zero = g.constant({1}, {0.f}, "zero");
    GraphTensor positive = g.tensorBinary(t, zero, TensorBinaryOperation::greater, "positive");
    GraphTensor masked = g.where(positive, t, k, "where");  // [n, h, w, c]
    g.output(g.reshape(masked, {n, h * w * c, 1, 1}, "flat"), "masked");
    GraphTensor backwards = g.slice(t, {2}, {-1}, {-6}, {-2}, "backwards");  // w 4, 2, 0
    g.output(g.reshape(backwards, {n, h * 3 * c, 1, 1}), "backwards");
    GraphTensor wide = g.concat({t, u}, 2, "wide");  // [n, h, 2w, c]
    g.output(g.transpose(wide, {0, 3, 1, 2}, "wide nchw"), "wide");
    return g;
  };
  for (ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16}) {
    CAPTURE(std::string(toString(format)));
    const vt::Tensor x = vt::roundedTo(vt::randomTensor(n, c, h, w, 60), format);
    Graph g = build(format);
    // References, in the images' NCHW element order of each output.
    vt::Tensor v(n, c, h, w), relu(n, c, h, w), masked(n, h * w * c, 1, 1),
        backwards(n, h * 3 * c, 1, 1), wide(n, c, h, 2 * w);
    for (uint32_t i = 0; i < n; ++i)
      for (uint32_t y = 0; y < h; ++y)
        for (uint32_t xx = 0; xx < w; ++xx)
          for (uint32_t ch = 0; ch < c; ++ch) {
            const double in = x.at(i, ch, y, xx), e = std::erf(in * scale[ch]);
            v.at(i, ch, y, xx) = e;
            relu.at(i, ch, y, xx) = std::max(e, 0.0);
            masked.at(i, (y * w + xx) * c + ch, 0, 0) = in > 0 ? in : scale[ch];
            if (xx % 2 == 0) backwards.at(i, (y * 3 + (4 - xx) / 2) * c + ch, 0, 0) = in;
            wide.at(i, ch, y, xx) = in;
            wide.at(i, ch, y, w + xx) = e;
          }
    std::vector<Image> outputs = {vt::makePoisoned(vt::context(), {w, h, c, n, format}),
                                  vt::makePoisoned(vt::context(), {w, h, c, n, format}),
                                  vt::makePoisoned(vt::context(), {1, 1, h * w * c, n, format}),
                                  vt::makePoisoned(vt::context(), {1, 1, h * 3 * c, n, format}),
                                  vt::makePoisoned(vt::context(), {2 * w, h, c, n, format})};
    CommandBuffer cb(vt::context());
    g.encode(cb, {vt::makeImage(x, format)}, outputs);
    cb.commit();
    cb.waitUntilCompleted();
    const double tol = format == ChannelFormat::float32 ? 1e-5 : 4e-3;
    CHECK(vt::relativeL2(vt::download(outputs[0]), v) <= tol);
    CHECK(vt::relativeL2(vt::download(outputs[1]), relu) <= tol);
    CHECK(vt::relativeL2(vt::download(outputs[2]), masked) <= tol);
    CHECK(vt::relativeL2(vt::download(outputs[3]), backwards) <= tol);
    CHECK(vt::relativeL2(vt::download(outputs[4]), wide) <= tol);
    // x -> tensor once; v, flat, backwards' view and the wide transpose -> image once each.
    CHECK(g.statistics().conversions == 5);
    const std::vector<std::string> lines = g.describe();
    CHECK(std::find(lines.begin(), lines.end(), "to nhwc (transpose) -> tensor [2, 4, 5, 3]") !=
          lines.end());
    CHECK(std::find(lines.begin(), lines.end(),
                    "x (as tensor) (image to tensor) -> tensor [2, 3, "
                    "4, 5]") != lines.end());
    // The batch is part of the Tensors.
    VKCNN_CHECK_ERROR(vt::runOnce([&](CommandBuffer& other) {
                        g.encode(other, {vt::makeImage(vt::randomTensor(1, c, h, w, 61), format)});
                      }),
                      ErrorCode::invalidArgument, "holds Tensor values of a batch of 2 images");
  }
  Graph plain(vt::context());
  GraphTensor x = plain.input("x", {w, h, c});
  VKCNN_CHECK_ERROR(plain.transpose(x, {0, 2, 3, 1}), ErrorCode::invalidArgument,
                    "set GraphOptions::numberOfImages");
  GraphOptions options;
  options.numberOfImages = n;
  Graph g(vt::context(), options);
  x = g.input("x", {w, h, c});
  VKCNN_CHECK_ERROR(g.transpose(x, {0, 2, 2, 1}), ErrorCode::invalidArgument,
                    "is not a permutation");
  GraphTensor t = g.transpose(x, {0, 2, 3, 1});
  VKCNN_CHECK_ERROR(g.reshape(t, {n, 7}), ErrorCode::invalidArgument, "cannot become");
  VKCNN_CHECK_ERROR(g.slice(t, {1}, {9}, {12}, {1}), ErrorCode::invalidArgument, "is empty");
  VKCNN_CHECK_ERROR(g.concat({t, x}, 1), ErrorCode::invalidArgument, "does not concatenate");
  VKCNN_CHECK_ERROR(g.neuron(g.reshape(t, {n * h, w * c}), NeuronDescriptor::relu()),
                    ErrorCode::invalidArgument, "is not an image [N, C, H, W]");
}
