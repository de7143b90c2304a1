// ONNX element-wise operators: neurons (Relu, Sigmoid, Clip, PRelu, Pow, ...), Add/Sub/Mul/Div of
// two images or of an image and a constant, Sum/Mean, Identity/Dropout/Cast, and the comparisons,
// logic and rounding that only ever run on constants and shapes.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <tuple>

#include "onnx/importer.h"
#include "vkcnn/tensor_ops.h"
#include "vkcnn/error.h"

namespace vkcnn::detail::onnx_import {

std::vector<int64_t> legacyBroadcastDims(Importer& im, const std::vector<int64_t>& a,
                                         const std::vector<int64_t>& b) {
  // Before opset 7, broadcast=1 aligned B with A starting at `axis` (default: the trailing axes).
  const int64_t rankA = int64_t(a.size()), rankB = int64_t(b.size());
  int64_t axis = im.attrInt("axis", rankA - rankB);
  if (axis < -rankA || axis > rankA)
    invalidModel("legacy broadcast axis " + std::to_string(axis) + " is out of range");
  if (axis < 0) axis += rankA;
  if (axis + rankB > rankA)
    invalidModel("legacy broadcast axis " + std::to_string(axis) + " does not fit " +
                 dimsToString(b) + " into " + dimsToString(a));
  std::vector<int64_t> dims = b;
  dims.resize(size_t(rankA - axis), 1);
  return dims;
}

namespace {

const HostTensor& operand(Importer& im, int k) {
  return im.constantInput(k, "operand");
}

// Element-wise ops of two constants, numpy (or, before opset 7, legacy) broadcasting. Max, Min
// (and Sum, Mean as translated) take any number of inputs.
void foldBinary(Importer& im) {
  const std::string& op = im.opType();
  HostTensor b = operand(im, 1);
  if (im.opset() < 7 && im.attrInt("broadcast", 0))
    b = reshaped(b, legacyBroadcastDims(im, operand(im, 0).dims, b.dims));
  im.setConstant(0, binary(op, operand(im, 0), b));
}

void foldVariadic(Importer& im) {
  HostTensor acc = operand(im, 0);
  for (int k = 1; k < im.inputCount(); ++k) acc = binary(im.opType(), acc, operand(im, k));
  im.setConstant(0, std::move(acc));
}

void foldUnary(Importer& im) {
  im.setConstant(0, unary(im.opType(), operand(im, 0)));
}

void foldDropout(Importer& im) {
  const HostTensor& x = operand(im, 0);
  im.setConstant(0, x);
  if (im.outputUsed(1)) {
    if (x.size() > kMaxComputedElements) unsupported("Dropout mask of a large constant");
    im.setConstant(1, HostTensor::int64s(x.dims, std::vector<int64_t>(size_t(x.size()), 1), kBool));
  }
}

void identity(Importer& im) {
  if (im.opType() == "Dropout") {
    if (im.opset() >= 12 && im.hasInput(2)) {
      const HostTensor& training = im.constantInput(2, "training_mode");
      if (training.size() == 1 && training.at(0) != 0) unsupported("Dropout in training mode");
    }
    if (im.outputUsed(1)) unsupported("the Dropout mask output of image data");
  }
  im.setImage(0, im.valueInput(0));
}

void cast(Importer& im) {
  const int32_t to = int32_t(im.attrInt("to", kFloat));
  if (!isFloatType(to))
    unsupported(std::string("Cast of image data to ") + elementTypeName(to) + " (data type)");
  im.setImage(0, im.valueInput(0));
}

TensorBinaryOperation tensorOperation(const std::string& op) {
  if (op == "Add" || op == "Sum" || op == "Mean") return TensorBinaryOperation::add;
  if (op == "Sub") return TensorBinaryOperation::subtract;
  if (op == "Mul") return TensorBinaryOperation::multiply;
  if (op == "Div") return TensorBinaryOperation::divide;
  if (op == "Pow") return TensorBinaryOperation::power;
  if (op == "Max") return TensorBinaryOperation::maximum;
  if (op == "Min") return TensorBinaryOperation::minimum;
  if (op == "Equal") return TensorBinaryOperation::equal;
  if (op == "Less") return TensorBinaryOperation::less;
  if (op == "Greater") return TensorBinaryOperation::greater;
  if (op == "LessOrEqual") return TensorBinaryOperation::lessOrEqual;
  if (op == "GreaterOrEqual") return TensorBinaryOperation::greaterOrEqual;
  if (op == "PRelu") return TensorBinaryOperation::prelu;
  unsupported("operator " + op + " on tensors (operator)");
}

// Inputs 0 and 1 (Graph values or constants) as Tensors combined by a Tensor kernel with numpy
// broadcasting: what leaves the image layout.
void tensorBinary(Importer& im, TensorBinaryOperation operation) {
  auto dimsOf = [&](int k) -> const std::vector<int64_t>& {
    const Value& v = im.input(k);
    return v.isImage ? v.image.dims : v.constant.dims;
  };
  const std::vector<int64_t> dims = broadcastShapes(dimsOf(0), dimsOf(1));
  GraphTensor a = im.tensorInput(0), b = im.tensorInput(1);
  im.setImage(0, im.graph().tensorBinary(a, b, operation, im.nodeName()), dims);
}

void arithmetic(Importer& im, const std::string& op) {
  const bool imageA = im.input(0).isImage, imageB = im.input(1).isImage;
  const bool legacy = im.opset() < 7 && im.attrInt("broadcast", 0) != 0;
  const ArithmeticOperation operation = op == "Add"   ? ArithmeticOperation::add
                                        : op == "Sub" ? ArithmeticOperation::subtract
                                        : op == "Mul" ? ArithmeticOperation::multiply
                                                      : ArithmeticOperation::divide;
  if (imageA && imageB) {
    ImageValue a = im.valueInput(0), b = im.valueInput(1);
    if (legacy) b.dims = legacyBroadcastDims(im, a.dims, b.dims);
    const ImageValue first = a, second = b;
    const std::vector<int64_t> dims = broadcastShapes(a.dims, b.dims);
    // The image kernels broadcast b onto a along the channels or over the whole plane (1x1).
    bool image = !im.isTensor(a) && !im.isTensor(b);
    bool swapped = false;
    if (image && b.dims == dims && a.dims != dims) {
      if (op == "Div") image = false;
      std::swap(a, b);
      swapped = true;
    }
    image = image && a.dims == dims;
    if (image && !(a.dims == b.dims && im.imageShape(a) == im.imageShape(b))) {
      std::vector<int64_t> bd = b.dims;
      bd.insert(bd.begin(), a.dims.size() - bd.size(), 1);
      const ImageValue bv{b.tensor, bd};
      image = im.canonical(a) && bd[0] == a.dims[0] && im.canonical(bv);
      if (image) {
        const Shape4 sa = im.imageShape(a), sb = im.imageShape(bv);
        image = ((sb.h == sa.h && sb.w == sa.w) || (sb.h == 1 && sb.w == 1)) &&
                (sb.c == sa.c || sb.c == 1);
      }
    }
    if (!image)
      return im.setImage(0,
                         im.graph().tensorBinary(im.tensorOf(first), im.tensorOf(second),
                                                 tensorOperation(op), im.nodeName()),
                         dims);
    GraphTensor out = im.graph().arithmetic(a.tensor, b.tensor, operation, im.nodeName());
    if (swapped && op == "Sub")
      out = im.graph().neuron(out, NeuronDescriptor::of(NeuronType::linear, -1.f, 0.f),
                              im.nodeName() + " (negated)");
    return im.setImage(0, out, dims);
  }
  // One constant operand: an affine node (the Graph decides what it folds into) when it is a
  // scalar or one value per channel of an image; else a Tensor kernel.
  const bool imageFirst = imageA;
  const ImageValue& x = im.valueInput(imageFirst ? 0 : 1);
  HostTensor k = im.constantInput(imageFirst ? 1 : 0, "constant operand");
  if (legacy && imageFirst) k = reshaped(k, legacyBroadcastDims(im, x.dims, k.dims));
  if (!k.isFloat()) unsupported("arithmetic with a non-float constant (data type)");
  if (k.size() == 0) invalidModel("an empty constant operand");
  const std::vector<int64_t> dims = broadcastShapes(x.dims, k.dims);
  auto onTensor = [&] {
    GraphTensor kt = im.constantTensor(k), xt = im.tensorOf(x);
    im.setImage(0,
                im.graph().tensorBinary(imageFirst ? xt : kt, imageFirst ? kt : xt,
                                        tensorOperation(op), im.nodeName()),
                dims);
  };
  if (dims != x.dims || (op == "Div" && !imageFirst) || im.isTensor(x)) return onTensor();
  // y = scale * x + shift for the constant value v.
  auto affineOf = [&](float v) -> std::pair<float, float> {
    if (op == "Add") return {1.f, v};
    if (op == "Sub") return imageFirst ? std::pair{1.f, -v} : std::pair{-1.f, v};
    if (op == "Mul") return {v, 0.f};
    return {1.f / v, 0.f};
  };
  const bool scalar = std::all_of(k.f.begin(), k.f.end(), [&](float v) { return v == k.f[0]; });
  std::vector<float> values = {k.f[0]};
  if (!scalar) {
    // Per channel: the constant is 1 everywhere but the channel axis.
    if (!im.canonical(x)) return onTensor();
    std::vector<int64_t> kd = k.dims;
    kd.insert(kd.begin(), x.dims.size() - kd.size(), 1);
    const size_t channelAxis = x.dims.size() == 1 ? 0 : 1;
    for (size_t a = 0; a < kd.size(); ++a)
      if (a != channelAxis && kd[a] != 1) return onTensor();
    values = k.f;
  }
  std::vector<float> scale(values.size()), shift(values.size());
  for (size_t c = 0; c < values.size(); ++c) std::tie(scale[c], shift[c]) = affineOf(values[c]);
  im.setImage(0, im.graph().affine(x.tensor, std::move(scale), std::move(shift), im.nodeName()),
              x.dims);
}

// Sum and Mean of any number of inputs: a chain of additions (two inputs may broadcast).
void sum(Importer& im, bool mean) {
  const int n = im.inputCount();
  if (n == 2 && !mean) return arithmetic(im, "Add");
  const ImageValue& first = im.imageInput(0);
  GraphTensor acc = first.tensor;
  for (int k = 1; k < n; ++k) {
    const ImageValue& x = im.imageInput(k);
    if (x.dims != first.dims || !(im.imageShape(x) == im.imageShape(first)))
      unsupported(std::string(mean ? "Mean" : "Sum") + " of more than two inputs that broadcast (" +
                  dimsToString(first.dims) + " and " + dimsToString(x.dims) + ")");
    acc = im.graph().arithmetic(
        acc, x.tensor, ArithmeticOperation::add,
        im.nodeName() + (k + 1 < n ? " #" + std::to_string(k) : std::string()));
  }
  if (mean && n > 1)
    acc = im.graph().neuron(acc, NeuronDescriptor::of(NeuronType::linear, 1.f / float(n), 0.f),
                            im.nodeName() + " (mean)");
  im.setImage(0, acc, first.dims);
}

void prelu(Importer& im) {
  const ImageValue& v = im.valueInput(0);
  const HostTensor& slope = im.floatConstant(1, "slope");
  if (slope.size() == 0) invalidModel("PRelu with an empty slope");
  NeuronDescriptor n{NeuronType::prelu};
  // Slopes along any axis but the channels, or a Tensor value: a Tensor kernel.
  auto onTensor = [&] {
    const std::vector<int64_t> dims = broadcastShapes(v.dims, slope.dims);
    if (dims != v.dims)
      invalidModel("PRelu slope " + dimsToString(slope.dims) + " does not broadcast onto " +
                   dimsToString(v.dims));
    im.setImage(0,
                im.graph().tensorBinary(im.tensorOf(v), im.constantTensor(slope),
                                        TensorBinaryOperation::prelu, im.nodeName()),
                v.dims);
  };
  if (im.isTensor(v)) return onTensor();
  const ImageValue& x = im.imageInput(0);
  if (slope.size() == 1 ||
      std::all_of(slope.f.begin(), slope.f.end(), [&](float f) { return f == slope.f[0]; })) {
    n.preluSlopes = {slope.f[0]};
    return im.setImage(0, im.neuron(x, n), x.dims);
  }
  if (!im.canonical(x)) return onTensor();
  const Shape4 s = im.imageShape(x);
  std::vector<int64_t> sd = slope.dims;
  // Before opset 7 a slope of C values was per channel; later it broadcasts numpy-style.
  if (im.opset() < 7 && sd.size() == 1 && sd[0] == s.c) sd = {s.c, 1, 1};
  while (sd.size() > x.dims.size() && sd.front() == 1) sd.erase(sd.begin());
  if (sd.size() > x.dims.size())
    invalidModel("PRelu slope " + dimsToString(slope.dims) + " is too large");
  sd.insert(sd.begin(), x.dims.size() - sd.size(), 1);
  for (size_t a = 0; a < sd.size(); ++a)
    if ((a == 1 && sd[a] != s.c) || (a != 1 && sd[a] != 1)) return onTensor();
  n.preluSlopes = slope.f;
  im.setImage(0, im.neuron(x, n), x.dims);
}

void clip(Importer& im) {
  float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  if (im.opset() < 11) {
    lo = im.attrFloat("min", lo);
    hi = im.attrFloat("max", hi);
  } else {
    auto scalar = [&](int k, const char* role) {
      const HostTensor& t = im.constantInput(k, role);
      if (t.size() != 1) invalidModel(std::string("Clip ") + role + " must be a scalar");
      return float(t.at(0));
    };
    if (im.hasInput(1)) lo = scalar(1, "min");
    if (im.hasInput(2)) hi = scalar(2, "max");
  }
  if (lo == 0 && hi == std::numeric_limits<float>::infinity())
    return im.neuronOp(NeuronDescriptor::relu());
  im.neuronOp(NeuronDescriptor::of(NeuronType::clamp, lo, hi));
}

void pow(Importer& im) {
  const ImageValue& xv = im.valueInput(0);
  const Value& ev = im.input(1);
  if (!ev.isImage && ev.constant.size() == 1 && !im.isTensor(xv)) {
    const ImageValue& x = im.imageInput(0);
    const double p = ev.constant.at(0);
    if (p == 1) return im.setImage(0, x);
    if (p == 2)
      return im.setImage(
          0,
          im.graph().arithmetic(x.tensor, x.tensor, ArithmeticOperation::multiply, im.nodeName()),
          x.dims);
    // The power neuron is pow(), undefined for negative bases: only exponents where ONNX gives
    // NaN there too (non-integers) map to it.
    if (p != std::floor(p))
      return im.neuronOp(NeuronDescriptor::of(NeuronType::power, 1.f, 0.f, float(p)));
  }
  // Integral exponents (numpy's pow of negative bases), exponent tensors: the Tensor kernel.
  if (im.opset() < 7 && im.attrInt("broadcast", 0) != 0) {
    const HostTensor& e = im.constantInput(1, "exponent");
    const std::vector<int64_t> dims = legacyBroadcastDims(im, xv.dims, e.dims);
    return im.setImage(
        0,
        im.graph().tensorBinary(im.tensorOf(xv), im.constantTensor(reshaped(e, dims)),
                                TensorBinaryOperation::power, im.nodeName()),
        broadcastShapes(xv.dims, dims));
  }
  tensorBinary(im, TensorBinaryOperation::power);
}

// A Tensor unary kernel on input 0 (Erf, Floor, Ceil, Reciprocal: no image kernel has them).
template <TensorUnaryOperation operation>
void tensorUnary(Importer& im) {
  const ImageValue& x = im.valueInput(0);
  im.setImage(0, im.graph().tensorUnary(im.tensorOf(x), operation, im.nodeName()), x.dims);
}

// Comparisons, Max and Min of two or more inputs, on Tensors (their results are 0 or 1).
void tensorVariadic(Importer& im) {
  if (im.inputCount() == 2) return tensorBinary(im, tensorOperation(im.opType()));
  const ImageValue& first = im.valueInput(0);
  GraphTensor acc = im.tensorInput(0);
  std::vector<int64_t> dims = first.dims;
  for (int k = 1; k < im.inputCount(); ++k) {
    const Value& v = im.input(k);
    dims = broadcastShapes(dims, v.isImage ? v.image.dims : v.constant.dims);
    acc = im.graph().tensorBinary(acc, im.tensorInput(k), tensorOperation(im.opType()),
                                  im.nodeName() + " #" + std::to_string(k));
  }
  im.setImage(0, acc, dims);
}

void where(Importer& im) {
  std::vector<int64_t> dims;
  for (int k = 0; k < 3; ++k) {
    const Value& v = im.input(k);
    dims = broadcastShapes(dims, v.isImage ? v.image.dims : v.constant.dims);
  }
  const GraphTensor c = im.tensorInput(0), x = im.tensorInput(1), y = im.tensorInput(2);
  im.setImage(0, im.graph().where(c, x, y, im.nodeName()), dims);
}

constexpr int64_t kLast = kNewestOpset;

}  // namespace

std::span<const OpEntry> elementwiseOps() {
  static const OpEntry ops[] = {
      // Neurons.
      {"Relu", 1, kLast, foldUnary, [](Importer& im) { im.neuronOp(NeuronDescriptor::relu()); }},
      {"LeakyRelu", 1, kLast, nullptr,
       [](Importer& im) {
         im.neuronOp(NeuronDescriptor::of(NeuronType::leakyRelu, im.attrFloat("alpha", 0.01f)));
       }},
      {"Sigmoid", 1, kLast, foldUnary,
       [](Importer& im) { im.neuronOp(NeuronDescriptor::of(NeuronType::sigmoid)); }},
      {"HardSigmoid", 1, kLast, nullptr,
       [](Importer& im) {
         im.neuronOp(NeuronDescriptor::of(NeuronType::hardSigmoid, im.attrFloat("alpha", 0.2f),
                                          im.attrFloat("beta", 0.5f)));
       }},
      {"HardSwish", 14, kLast, nullptr,
       [](Importer& im) { im.neuronOp(NeuronDescriptor::of(NeuronType::hardSwish)); }},
      {"Tanh", 1, kLast, foldUnary,
       [](Importer& im) { im.neuronOp(NeuronDescriptor::of(NeuronType::tanh, 1.f, 1.f)); }},
      {"Elu", 1, kLast, nullptr,
       [](Importer& im) {
         im.neuronOp(NeuronDescriptor::of(NeuronType::elu, im.attrFloat("alpha", 1.f)));
       }},
      {"Selu", 1, kLast, nullptr,
       [](Importer& im) {
         im.neuronOp(NeuronDescriptor::of(NeuronType::selu,
                                          im.attrFloat("alpha", 1.67326319217681884765625f),
                                          im.attrFloat("gamma", 1.05070102214813232421875f)));
       }},
      {"Softplus", 1, kLast, nullptr,
       [](Importer& im) { im.neuronOp(NeuronDescriptor::of(NeuronType::softplus, 1.f, 1.f)); }},
      {"Softsign", 1, kLast, nullptr,
       [](Importer& im) { im.neuronOp(NeuronDescriptor::of(NeuronType::softsign)); }},
      {"Abs", 1, kLast, foldUnary,
       [](Importer& im) { im.neuronOp(NeuronDescriptor::of(NeuronType::absolute)); }},
      {"Neg", 1, kLast, foldUnary,
       [](Importer& im) { im.neuronOp(NeuronDescriptor::of(NeuronType::linear, -1.f, 0.f)); }},
      {"Exp", 1, kLast, foldUnary,
       [](Importer& im) {
         im.neuronOp(NeuronDescriptor::of(NeuronType::exponential, 1.f, 0.f, 0.f));
       }},
      {"Log", 1, kLast, foldUnary,
       [](Importer& im) {
         im.neuronOp(NeuronDescriptor::of(NeuronType::logarithm, 1.f, 0.f, 0.f));
       }},
      {"Sqrt", 1, kLast, foldUnary,
       [](Importer& im) { im.neuronOp(NeuronDescriptor::of(NeuronType::power, 1.f, 0.f, 0.5f)); }},
      {"Clip", 1, kLast, nullptr, clip},
      {"PRelu", 1, kLast, nullptr, prelu},
      {"Pow", 1, kLast, foldBinary, pow},
      // Arithmetic.
      {"Add", 1, kLast, foldBinary, [](Importer& im) { arithmetic(im, im.opType()); }},
      {"Sub", 1, kLast, foldBinary, [](Importer& im) { arithmetic(im, im.opType()); }},
      {"Mul", 1, kLast, foldBinary, [](Importer& im) { arithmetic(im, im.opType()); }},
      {"Div", 1, kLast, foldBinary, [](Importer& im) { arithmetic(im, im.opType()); }},
      {"Sum", 1, kLast, nullptr, [](Importer& im) { sum(im, false); }},
      {"Mean", 1, kLast, nullptr, [](Importer& im) { sum(im, true); }},
      // Values passed on.
      {"Identity", 1, kLast, foldUnary, identity},
      {"Dropout", 1, kLast, foldDropout, identity},
      {"Cast", 1, kLast,
       [](Importer& im) {
         im.setConstant(0, castTo(operand(im, 0), int32_t(im.attrInt("to", kFloat))));
       },
       cast},
      // On constants and shapes only.
      {"Max", 1, kLast, foldVariadic, tensorVariadic},
      {"Min", 1, kLast, foldVariadic, tensorVariadic},
      {"Equal", 1, kLast, foldBinary, tensorVariadic},
      {"Less", 1, kLast, foldBinary, tensorVariadic},
      {"Greater", 1, kLast, foldBinary, tensorVariadic},
      {"LessOrEqual", 12, kLast, foldBinary, tensorVariadic},
      {"GreaterOrEqual", 12, kLast, foldBinary, tensorVariadic},
      {"And", 1, kLast, foldBinary, nullptr},
      {"Or", 1, kLast, foldBinary, nullptr},
      {"Xor", 1, kLast, foldBinary, nullptr},
      {"Not", 1, kLast, foldUnary, nullptr},
      {"Floor", 1, kLast, foldUnary, tensorUnary<TensorUnaryOperation::floor>},
      {"Ceil", 1, kLast, foldUnary, tensorUnary<TensorUnaryOperation::ceil>},
      {"Round", 11, kLast, foldUnary, nullptr},
      {"Reciprocal", 1, kLast, foldUnary, tensorUnary<TensorUnaryOperation::reciprocal>},
      {"Sign", 9, kLast, foldUnary, nullptr},
      {"Where", 9, kLast,
       [](Importer& im) {
         im.setConstant(0, onnx_import::where(operand(im, 0), operand(im, 1), operand(im, 2)));
       },
       where},
      {"Erf", 9, kLast, nullptr, tensorUnary<TensorUnaryOperation::erf>},
  };
  return ops;
}

}  // namespace vkcnn::detail::onnx_import
