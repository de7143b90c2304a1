// Element-wise arithmetic (MPSCNNArithmetic: MPSCNNAdd, MPSCNNSubtract, MPSCNNMultiply,
// MPSCNNDivide), with a fused neuron:
//
//   y = neuron(op(primaryScale * a, secondaryScale * b) + bias)
//
// a is the primary source, b the secondary. The destination has the primary window's shape; the
// secondary is broadcast along each axis where its extent is 1 and the primary's is larger
// (numpy/ONNX broadcasting restricted to the secondary), which gives:
//   same shape            W x H x C      b read where a is
//   per channel           1 x 1 x C      one value per channel (a bias, a scale)
//   scalar                1 x 1 x 1      one value for everything
//   spatial map           W x H x 1      one value per pixel for all channels (attention masks)
// and any other mix of axes. Batch: a secondary of exactly one image (and secondaryOffset.z 0) is
// used for every image of the primary (ONNX [1,C,H,W] against [N,C,H,W]); otherwise the secondary
// images [secondaryOffset.z, +n) pair with the primary images [offset.z, +n).
//
// Channels: sourceFeatureChannelMaxCount applies to both windows (as in MPS); the secondary window
// starts at secondaryFeatureChannelOffset and must hold as many channels as the primary window, or
// one. Pixels: along a non-broadcast axis the secondary is read at (p - clipRect.origin) +
// secondaryOffset, zero outside it (as the primary). Along a broadcast axis it is always read at 0.
//
// Constants known at init (a bias vector, a scalar) use ArithmeticWithConstant, which needs no
// secondary image. A broadcast primary (ONNX scalar - tensor) is not supported: swap the operands
// of add and multiply, and write a - b as add(-1 * b, a) through primaryScale.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "vkcnn/export.h"
#include "vkcnn/kernel.h"
#include "vkcnn/neuron.h"

namespace vkcnn {

// op(a, b) of the formula above: a + b, a - b, a * b, a / b.
enum class ArithmeticOperation : uint32_t { add = 0, subtract = 1, multiply = 2, divide = 3 };

// "add", "subtract", "multiply" or "divide".
VKCNN_API const char* toString(ArithmeticOperation operation);

// Double-precision reference of op(a, b) (tests and host-side folding).
VKCNN_API double applyArithmetic(ArithmeticOperation operation, double a, double b);

// The element-wise kernel of the formula above, on two images.
class VKCNN_API Arithmetic : public BinaryKernel {
 public:
  // PReLU slopes of the neuron are copied to the device.
  Arithmetic(const Context& context, ArithmeticOperation operation,
             const NeuronDescriptor& neuron = {});

  float primaryScale = 1;    // a's factor
  float secondaryScale = 1;  // b's factor
  float bias = 0;            // added after op, before the neuron

  // As given at construction.
  ArithmeticOperation operation() const { return operation_; }
  const NeuronDescriptor& neuron() const { return neuron_; }

 protected:
  void validate(const detail::BinaryKernelEncoding& encoding) const override;
  void encodeKernel(detail::BinaryKernelEncoding& encoding) override;

 private:
  ArithmeticOperation operation_;
  NeuronDescriptor neuron_;
  std::shared_ptr<void> slopes_;  // device buffer of PReLU slopes
};

// a + b (MPSCNNAdd).
class VKCNN_API Add : public Arithmetic {
 public:
  // With the neuron fused after the add.
  explicit Add(const Context& context, const NeuronDescriptor& neuron = {})
      : Arithmetic(context, ArithmeticOperation::add, neuron) {}
};

// a - b (MPSCNNSubtract).
class VKCNN_API Subtract : public Arithmetic {
 public:
  // With the neuron fused after the subtraction.
  explicit Subtract(const Context& context, const NeuronDescriptor& neuron = {})
      : Arithmetic(context, ArithmeticOperation::subtract, neuron) {}
};

// a * b (MPSCNNMultiply).
class VKCNN_API Multiply : public Arithmetic {
 public:
  // With the neuron fused after the product.
  explicit Multiply(const Context& context, const NeuronDescriptor& neuron = {})
      : Arithmetic(context, ArithmeticOperation::multiply, neuron) {}
};

// a / b (MPSCNNDivide).
class VKCNN_API Divide : public Arithmetic {
 public:
  // With the neuron fused after the quotient.
  explicit Divide(const Context& context, const NeuronDescriptor& neuron = {})
      : Arithmetic(context, ArithmeticOperation::divide, neuron) {}
};

// Arithmetic against constants given at init: y = neuron(op(primaryScale * x, secondaryScale *
// k) + bias) with k = constants[channel] (one per window channel) or constants[0] (a scalar).
// The constants live in a 1x1 float32 Image made here, read as a broadcast secondary.
class VKCNN_API ArithmeticWithConstant : public UnaryKernel {
 public:
  // The constants are uploaded at construction.
  ArithmeticWithConstant(const Context& context, ArithmeticOperation operation,
                         std::vector<float> constants, const NeuronDescriptor& neuron = {});

  float primaryScale = 1;    // a's factor
  float secondaryScale = 1;  // k's factor
  float bias = 0;            // added after op, before the neuron

  // As given at construction.
  ArithmeticOperation operation() const { return operation_; }
  const std::vector<float>& constants() const { return constants_; }
  const NeuronDescriptor& neuron() const { return neuron_; }

 protected:
  void validate(const detail::KernelEncoding& encoding) const override;
  void encodeKernel(detail::KernelEncoding& encoding) override;

 private:
  ArithmeticOperation operation_;
  std::vector<float> constants_;
  NeuronDescriptor neuron_;
  Image constantImage_;
  std::shared_ptr<void> slopes_;
};

}  // namespace vkcnn
