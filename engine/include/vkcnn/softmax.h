// Softmax across feature channels (MPSCNNSoftMax, MPSCNNLogSoftMax; ONNX Softmax / LogSoftmax
// over the channel axis of an NCHW tensor).
//
// For every pixel of every image, over the C channels of the source channel window:
//   softmax:    y[c] = exp(x[c] - m) / sum_c' exp(x[c'] - m)
//   logSoftmax: y[c] = x[c] - m - log(sum_c' exp(x[c'] - m))
// with m = max_c x[c], which keeps any finite logits finite. The destination gets C channels at
// destinationFeatureChannelOffset (any offset). Pixels the offset moves outside the source read
// zeros (edge mode zero), so they come out as 1/C (softmax) or -log(C).
#pragma once

#include "vkcnn/export.h"
#include "vkcnn/kernel.h"

namespace vkcnn {

// y = exp(x - m) / sum exp(x - m) over the channels of each pixel.
class VKCNN_API Softmax : public UnaryKernel {
 public:
  // A kernel on `context` (it holds no weights).
  explicit Softmax(const Context& context);

 protected:
  void encodeKernel(detail::KernelEncoding& encoding) override;
};

// y = x - m - log(sum exp(x - m)) over the channels of each pixel.
class VKCNN_API LogSoftmax : public UnaryKernel {
 public:
  // A kernel on `context` (it holds no weights).
  explicit LogSoftmax(const Context& context);

 protected:
  void encodeKernel(detail::KernelEncoding& encoding) override;
};

}  // namespace vkcnn
