// The graph section's Image nodes (serialize.h): convolutions (their batch normalisations and
// affines folded in by optimize()), batch normalisations, affines, neurons, arithmetic,
// concatenations, squeeze-excitation blocks and the Image kernels' parameters, one line per field
// each way. Keys are per node kind and are the file's: never renumber one, only add. A decoder
// checks enumerators; the kernels made from these parameters in lower() check the rest (weights'
// counts against their descriptors), as they check a caller's.
#include <type_traits>

#include "graph/serialize.h"
#include "vkcnn/convolution_transpose.h"

namespace vkcnn::detail {

using archive::FieldKey;
using archive::RecordReader;
using archive::RecordWriter;

namespace {

// NeuronDescriptor
constexpr FieldKey kNeuronType{1, "type"}, kNeuronA{2, "a"}, kNeuronB{3, "b"}, kNeuronC{4, "c"},
    kPreluSlopes{5, "prelu slopes"};
// Padding
constexpr FieldKey kPaddingMode{1, "mode"}, kTop{2, "top"}, kLeft{3, "left"}, kBottom{4, "bottom"},
    kRight{5, "right"}, kCeilMode{6, "ceil mode"};

// A window's geometry, shared by convolutions, their transposes and pooling.
constexpr FieldKey kKernelWidth{1, "kernel width"}, kKernelHeight{2, "kernel height"},
    kInputChannels{3, "input channels"}, kOutputChannels{4, "output channels"},
    kStrideX{5, "stride x"}, kStrideY{6, "stride y"}, kDilationX{7, "dilation x"},
    kDilationY{8, "dilation y"}, kGroups{9, "groups"};

// ConvolutionNode
constexpr FieldKey kConvNeuron{10, "neuron"}, kBatchNormalization{11, "batch normalization"},
    kDestinationFormat{12, "destination format"}, kSourceActivation{13, "source activation"},
    kAccumulator{14, "accumulator precision"}, kWeights{15, "weights"}, kBias{16, "bias"},
    kConvPadding{17, "padding"}, kFullyConnected{18, "fully connected"},
    kFoldedBatchNormalizations{19, "folded batch normalizations"},
    kFoldedAffines{20, "folded affines"};
// BatchNormalizationParameters
constexpr FieldKey kMean{1, "mean"}, kVariance{2, "variance"}, kGamma{3, "gamma"}, kBeta{4, "beta"},
    kEpsilon{5, "epsilon"};
// SourceActivation
constexpr FieldKey kScale{1, "scale"}, kShift{2, "shift"}, kActivation{3, "neuron"};
// BatchNormalizationNode, AffineNode, NeuronNode, ArithmeticNode (field 1 or 3: the neuron)
constexpr FieldKey kParameters{1, "parameters"}, kNeuron{2, "neuron"};
constexpr FieldKey kAffineScale{1, "scale"}, kAffineShift{2, "shift"}, kAffineNeuron{3, "neuron"};
constexpr FieldKey kOperation{1, "operation"};
// ConcatNode
constexpr FieldKey kInputOffsets{1, "input offsets"};
// SqueezeExcitationNode
constexpr FieldKey kFeatureChannels{1, "feature channels"}, kReducedChannels{2, "reduced channels"},
    kInner{3, "inner"}, kGate{4, "gate"}, kFc1Weights{5, "fc1 weights"}, kFc1Bias{6, "fc1 bias"},
    kFc2Weights{7, "fc2 weights"}, kFc2Bias{8, "fc2 bias"};
// PoolingParameters (with the window's geometry)
constexpr FieldKey kMaximum{10, "maximum"}, kGlobal{11, "global"}, kPoolPadding{12, "padding"},
    kCountIncludePad{13, "count include pad"};
// PadDescriptor (with kTop .. kRight as i32)
constexpr FieldKey kPadMode{1, "mode"}, kPadValue{6, "value"};
// ResizeDescriptor
constexpr FieldKey kWidth{1, "width"}, kHeight{2, "height"}, kResizeMode{3, "mode"},
    kCoordinates{4, "coordinate transformation"}, kNearestMode{5, "nearest mode"};
// ImageWindow
constexpr FieldKey kChannel{1, "channel"}, kChannels{2, "channels"}, kX{3, "x"}, kY{4, "y"},
    kWindowWidth{5, "width"}, kWindowHeight{6, "height"};
// ChannelShuffleParameters, DepthToSpaceParameters, SpaceToDepthParameters,
// ChannelSoftmaxParameters
constexpr FieldKey kShuffleGroups{1, "groups"}, kBlockSize{1, "block size"}, kDepthMode{2, "mode"},
    kLogarithm{1, "logarithm"};
// InstanceNormalizationDescriptor
constexpr FieldKey kInstanceChannels{1, "feature channels"}, kInstanceGamma{2, "gamma"},
    kInstanceBeta{3, "beta"}, kInstanceEpsilon{4, "epsilon"}, kInstanceNeuron{5, "neuron"};
// LocalResponseNormalizationDescriptor
constexpr FieldKey kSize{1, "size"}, kAlpha{2, "alpha"}, kLrnBeta{3, "beta"}, kLrnBias{4, "bias"};
// ConvolutionTransposeParameters (with the window's geometry)
constexpr FieldKey kTransposePadding{10, "padding"}, kOutputPaddingX{11, "output padding x"},
    kOutputPaddingY{12, "output padding y"}, kTransposeNeuron{13, "neuron"},
    kTransposeWeights{14, "weights"}, kTransposeBias{15, "bias"};

bool flag(const RecordReader& r, FieldKey key) {
  return r.u32(key, 0) != 0;
}

template <class D>
void encodeWindow(RecordWriter& r, const D& d) {
  r.u32(kKernelWidth, d.kernelWidth).u32(kKernelHeight, d.kernelHeight);
  r.u32(kStrideX, d.strideInPixelsX).u32(kStrideY, d.strideInPixelsY);
  r.u32(kDilationX, d.dilationRateX).u32(kDilationY, d.dilationRateY);
  if constexpr (!std::is_same_v<D, PoolingDescriptor>) {
    r.u32(kInputChannels, d.inputFeatureChannels).u32(kOutputChannels, d.outputFeatureChannels);
    r.u32(kGroups, d.groups);
  }
}
template <class D>
void decodeWindow(const RecordReader& r, D& d) {
  d.kernelWidth = r.u32(kKernelWidth);
  d.kernelHeight = r.u32(kKernelHeight);
  d.strideInPixelsX = r.u32(kStrideX);
  d.strideInPixelsY = r.u32(kStrideY);
  d.dilationRateX = r.u32(kDilationX, 1);
  d.dilationRateY = r.u32(kDilationY, 1);
  for (FieldKey k : {kKernelWidth, kKernelHeight, kStrideX, kStrideY, kDilationX, kDilationY})
    if (r.has(k) && (r.u32(k) == 0 || r.u32(k) > 65536))
      r.fail(k, std::to_string(r.u32(k)) + " is not 1 to 65536");
  if constexpr (!std::is_same_v<D, PoolingDescriptor>) {
    d.inputFeatureChannels = r.u32(kInputChannels);
    d.outputFeatureChannels = r.u32(kOutputChannels);
    d.groups = r.u32(kGroups, 1);
    if (!d.groups) r.fail(kGroups, "0 groups");
  }
}

RecordWriter encodeBatchNormalization(const BatchNormalizationParameters& p, WeightSink& w) {
  RecordWriter r;
  w.floats(r, kMean, p.mean);
  w.floats(r, kVariance, p.variance);
  w.floats(r, kGamma, p.gamma);
  w.floats(r, kBeta, p.beta);
  r.f32(kEpsilon, p.epsilon);
  return r;
}
BatchNormalizationParameters decodeBatchNormalization(const RecordReader& r,
                                                      const WeightSource& w) {
  BatchNormalizationParameters p;
  p.mean = w.floats(r, kMean);
  p.variance = w.floats(r, kVariance);
  p.gamma = w.floats(r, kGamma);
  p.beta = w.floats(r, kBeta);
  p.epsilon = r.f32(kEpsilon);
  const size_t n = p.variance.size();
  if (p.mean.size() != n || (!p.gamma.empty() && p.gamma.size() != n) ||
      (!p.beta.empty() && p.beta.size() != n))
    r.fail("mean, variance, gamma and beta differ in length");
  return p;
}

void encodeConvolution(const ConvolutionNode& c, RecordWriter& r, WeightSink& w) {
  const ConvolutionDescriptor& d = c.descriptor;
  encodeWindow(r, d);
  r.record(kConvNeuron, encodeNeuron(d.neuron));
  if (d.batchNormalization)
    r.record(kBatchNormalization, encodeBatchNormalization(*d.batchNormalization, w));
  if (d.destinationFormat) r.u32(kDestinationFormat, uint32_t(*d.destinationFormat));
  if (const auto& a = d.sourceActivation) {
    RecordWriter s;
    s.f32s(kScale, a->scale).f32s(kShift, a->shift).u32(kActivation, uint32_t(a->neuron));
    r.record(kSourceActivation, s);
  }
  r.u32(kAccumulator, uint32_t(d.accumulatorPrecision));
  w.floats(r, kWeights, c.weights);
  w.floats(r, kBias, c.bias);
  r.record(kConvPadding, encodePadding(c.padding));
  r.u32(kFullyConnected, c.fullyConnected ? 1 : 0);
  r.u32(kFoldedBatchNormalizations, c.foldedBatchNormalizations);
  r.u32(kFoldedAffines, c.foldedAffines);
}
ConvolutionNode decodeConvolution(const RecordReader& r, const WeightSource& w) {
  ConvolutionNode c;
  ConvolutionDescriptor& d = c.descriptor;
  decodeWindow(r, d);
  d.neuron = decodeNeuron(r.record(kConvNeuron));
  if (r.has(kBatchNormalization))
    d.batchNormalization = decodeBatchNormalization(r.record(kBatchNormalization), w);
  if (r.has(kDestinationFormat))
    d.destinationFormat = enumerator(r, kDestinationFormat, ChannelFormat::float32);
  if (r.has(kSourceActivation)) {
    const RecordReader s = r.record(kSourceActivation);
    d.sourceActivation = SourceActivation{s.f32s(kScale), s.f32s(kShift),
                                          enumerator(s, kActivation, NeuronType::relu)};
  }
  d.accumulatorPrecision =
      enumerator(r, kAccumulator, AccumulatorPrecision::float16, AccumulatorPrecision::float32);
  c.mappedWeights = w.mapped(r, kWeights);
  if (c.mappedWeights.empty()) c.weights = w.floats(r, kWeights);
  c.bias = w.floats(r, kBias);
  c.padding = decodePadding(r.record(kConvPadding));
  c.fullyConnected = flag(r, kFullyConnected);
  c.foldedBatchNormalizations = r.u32(kFoldedBatchNormalizations, 0);
  c.foldedAffines = r.u32(kFoldedAffines, 0);
  return c;
}

void encodeSqueezeExcitation(const SqueezeExcitationNode& n, RecordWriter& r, WeightSink& w) {
  r.u32(kFeatureChannels, n.descriptor.featureChannels);
  r.u32(kReducedChannels, n.descriptor.reducedChannels);
  r.record(kInner, encodeNeuron(n.descriptor.inner));
  r.record(kGate, encodeNeuron(n.descriptor.gate));
  w.floats(r, kFc1Weights, n.fc1Weights);
  w.floats(r, kFc1Bias, n.fc1Bias);
  w.floats(r, kFc2Weights, n.fc2Weights);
  w.floats(r, kFc2Bias, n.fc2Bias);
}
SqueezeExcitationNode decodeSqueezeExcitation(const RecordReader& r, const WeightSource& w) {
  SqueezeExcitationNode n;
  n.descriptor.featureChannels = r.u32(kFeatureChannels);
  n.descriptor.reducedChannels = r.u32(kReducedChannels);
  n.descriptor.inner = decodeNeuron(r.record(kInner));
  n.descriptor.gate = decodeNeuron(r.record(kGate));
  n.fc1Weights = w.floats(r, kFc1Weights);
  n.fc1Bias = w.floats(r, kFc1Bias);
  n.fc2Weights = w.floats(r, kFc2Weights);
  n.fc2Bias = w.floats(r, kFc2Bias);
  return n;
}

// The Image kernels' parameters: their kind and fields.
struct EncodeImageKernel {
  RecordWriter& r;
  WeightSink& w;
  NodeKind operator()(const PoolingParameters& p) const {
    r.u32(kMaximum, p.maximum).u32(kGlobal, p.global);
    if (!p.global) {
      encodeWindow(r, p.descriptor);
      r.record(kPoolPadding, encodePadding(p.descriptor.padding));
      r.u32(kCountIncludePad, p.descriptor.countIncludePad);
    }
    return NodeKind::pooling;
  }
  NodeKind operator()(const PadDescriptor& d) const {
    r.u32(kPadMode, uint32_t(d.mode)).i32(kTop, d.top).i32(kLeft, d.left);
    r.i32(kBottom, d.bottom).i32(kRight, d.right).f32(kPadValue, d.value);
    return NodeKind::pad;
  }
  NodeKind operator()(const ResizeDescriptor& d) const {
    r.u32(kWidth, d.width).u32(kHeight, d.height).u32(kResizeMode, uint32_t(d.mode));
    r.u32(kCoordinates, uint32_t(d.coordinateTransformationMode));
    r.u32(kNearestMode, uint32_t(d.nearestMode));
    return NodeKind::resize;
  }
  NodeKind operator()(const ImageWindow& d) const {
    r.u32(kChannel, d.channel).u32(kChannels, d.channels).u32(kX, d.x).u32(kY, d.y);
    r.u32(kWindowWidth, d.width).u32(kWindowHeight, d.height);
    return NodeKind::window;
  }
  NodeKind operator()(const ChannelShuffleParameters& p) const {
    r.u32(kShuffleGroups, p.groups);
    return NodeKind::channelShuffle;
  }
  NodeKind operator()(const DepthToSpaceParameters& p) const {
    r.u32(kBlockSize, p.blockSize).u32(kDepthMode, uint32_t(p.mode));
    return NodeKind::depthToSpace;
  }
  NodeKind operator()(const SpaceToDepthParameters& p) const {
    r.u32(kBlockSize, p.blockSize);
    return NodeKind::spaceToDepth;
  }
  NodeKind operator()(const InstanceNormalizationDescriptor& d) const {
    r.u32(kInstanceChannels, d.featureChannels);
    w.floats(r, kInstanceGamma, d.gamma);
    w.floats(r, kInstanceBeta, d.beta);
    r.f32(kInstanceEpsilon, d.epsilon).record(kInstanceNeuron, encodeNeuron(d.neuron));
    return NodeKind::instanceNormalization;
  }
  NodeKind operator()(const LocalResponseNormalizationDescriptor& d) const {
    r.u32(kSize, d.size).f32(kAlpha, d.alpha).f32(kLrnBeta, d.beta).f32(kLrnBias, d.bias);
    return NodeKind::localResponseNormalization;
  }
  NodeKind operator()(const ChannelSoftmaxParameters& p) const {
    r.u32(kLogarithm, p.logarithm);
    return NodeKind::channelSoftmax;
  }
  NodeKind operator()(const ConvolutionTransposeParameters& p) const {
    const ConvolutionTransposeDescriptor& d = p.descriptor;
    encodeWindow(r, d);
    r.record(kTransposePadding, encodePadding(d.padding));
    r.u32(kOutputPaddingX, d.outputPaddingX).u32(kOutputPaddingY, d.outputPaddingY);
    r.record(kTransposeNeuron, encodeNeuron(d.neuron));
    w.floats(r, kTransposeWeights, p.weights);
    w.floats(r, kTransposeBias, p.bias);
    return NodeKind::convolutionTranspose;
  }
};

bool decodeImageKernel(NodeKind kind, const RecordReader& r, const WeightSource& w,
                       ImageKernelParameters& out) {
  switch (kind) {
    case NodeKind::pooling: {
      PoolingParameters p;
      p.maximum = flag(r, kMaximum);
      p.global = flag(r, kGlobal);
      if (!p.global) {
        decodeWindow(r, p.descriptor);
        p.descriptor.padding = decodePadding(r.record(kPoolPadding));
        p.descriptor.countIncludePad = flag(r, kCountIncludePad);
      }
      out = p;
      return true;
    }
    case NodeKind::pad:
      out = PadDescriptor{enumerator(r, kPadMode, PadMode::wrap),
                          r.i32(kTop),
                          r.i32(kLeft),
                          r.i32(kBottom),
                          r.i32(kRight),
                          r.f32(kPadValue)};
      return true;
    case NodeKind::resize: {
      ResizeDescriptor d;
      d.width = r.u32(kWidth);
      d.height = r.u32(kHeight);
      d.mode = enumerator(r, kResizeMode, ResizeMode::bilinear);
      d.coordinateTransformationMode =
          enumerator(r, kCoordinates, CoordinateTransformationMode::tfHalfPixelForNN);
      d.nearestMode = enumerator(r, kNearestMode, NearestMode::ceil);
      out = d;
      return true;
    }
    case NodeKind::window:
      out = ImageWindow{r.u32(kChannel), r.u32(kChannels),    r.u32(kX),
                        r.u32(kY),       r.u32(kWindowWidth), r.u32(kWindowHeight)};
      return true;
    case NodeKind::channelShuffle:
      out = ChannelShuffleParameters{r.u32(kShuffleGroups)};
      return true;
    case NodeKind::depthToSpace:
      out = DepthToSpaceParameters{r.u32(kBlockSize),
                                   enumerator(r, kDepthMode, DepthToSpace::Mode::CRD)};
      return true;
    case NodeKind::spaceToDepth:
      out = SpaceToDepthParameters{r.u32(kBlockSize)};
      return true;
    case NodeKind::instanceNormalization:
      out = InstanceNormalizationDescriptor{r.u32(kInstanceChannels), w.floats(r, kInstanceGamma),
                                            w.floats(r, kInstanceBeta), r.f32(kInstanceEpsilon),
                                            decodeNeuron(r.record(kInstanceNeuron))};
      return true;
    case NodeKind::localResponseNormalization:
      out = LocalResponseNormalizationDescriptor{r.u32(kSize), r.f32(kAlpha), r.f32(kLrnBeta),
                                                 r.f32(kLrnBias)};
      return true;
    case NodeKind::channelSoftmax:
      out = ChannelSoftmaxParameters{flag(r, kLogarithm)};
      return true;
    case NodeKind::convolutionTranspose: {
      ConvolutionTransposeParameters p;
      ConvolutionTransposeDescriptor& d = p.descriptor;
      decodeWindow(r, d);
      d.padding = decodePadding(r.record(kTransposePadding));
      d.outputPaddingX = r.u32(kOutputPaddingX, 0);
      d.outputPaddingY = r.u32(kOutputPaddingY, 0);
      d.neuron = decodeNeuron(r.record(kTransposeNeuron));
      p.weights = w.floats(r, kTransposeWeights);
      p.bias = w.floats(r, kTransposeBias);
      out = std::move(p);
      return true;
    }
    default:
      return false;
  }
}

}  // namespace

RecordWriter encodeNeuron(const NeuronDescriptor& n) {
  RecordWriter r;
  r.u32(kNeuronType, uint32_t(n.type)).f32(kNeuronA, n.a).f32(kNeuronB, n.b).f32(kNeuronC, n.c);
  if (!n.preluSlopes.empty()) r.f32s(kPreluSlopes, n.preluSlopes);
  return r;
}

NeuronDescriptor decodeNeuron(const RecordReader& r) {
  NeuronDescriptor n;
  n.type = enumerator(r, kNeuronType, NeuronType::silu);
  n.a = r.f32(kNeuronA, 0);
  n.b = r.f32(kNeuronB, 0);
  n.c = r.f32(kNeuronC, 0);
  if (r.has(kPreluSlopes)) n.preluSlopes = r.f32s(kPreluSlopes);
  return n;
}

RecordWriter encodePadding(const Padding& p) {
  RecordWriter r;
  r.u32(kPaddingMode, uint32_t(p.mode)).u32(kTop, p.top).u32(kLeft, p.left);
  r.u32(kBottom, p.bottom).u32(kRight, p.right).u32(kCeilMode, p.ceilMode);
  return r;
}

Padding decodePadding(const RecordReader& r) {
  Padding p;
  p.mode = enumerator(r, kPaddingMode, Padding::Mode::explicitPadding);
  p.top = r.u32(kTop, 0);
  p.left = r.u32(kLeft, 0);
  p.bottom = r.u32(kBottom, 0);
  p.right = r.u32(kRight, 0);
  for (FieldKey k : {kTop, kLeft, kBottom, kRight})
    if (r.u32(k, 0) > 65536) r.fail(k, "a pad of " + std::to_string(r.u32(k)) + " pixels");
  p.ceilMode = flag(r, kCeilMode);
  return p;
}

bool encodeImageNode(const NodeParameters& p, NodeKind& kind, RecordWriter& r, WeightSink& w) {
  if (const auto* c = std::get_if<ConvolutionNode>(&p)) {
    encodeConvolution(*c, r, w);
    kind = NodeKind::convolution;
  } else if (const auto* b = std::get_if<BatchNormalizationNode>(&p)) {
    r.record(kParameters, encodeBatchNormalization(b->parameters, w));
    r.record(kNeuron, encodeNeuron(b->neuron));
    kind = NodeKind::batchNormalization;
  } else if (const auto* a = std::get_if<AffineNode>(&p)) {
    w.floats(r, kAffineScale, a->scale);
    w.floats(r, kAffineShift, a->shift);
    r.record(kAffineNeuron, encodeNeuron(a->neuron));
    kind = NodeKind::affine;
  } else if (const auto* n = std::get_if<NeuronNode>(&p)) {
    r.record(kParameters, encodeNeuron(n->neuron));
    kind = NodeKind::neuron;
  } else if (const auto* m = std::get_if<ArithmeticNode>(&p)) {
    r.u32(kOperation, uint32_t(m->operation)).record(kNeuron, encodeNeuron(m->neuron));
    kind = NodeKind::arithmetic;
  } else if (const auto* concat = std::get_if<ConcatNode>(&p)) {
    r.u32s(kInputOffsets, concat->inputOffsets);
    kind = NodeKind::concat;
  } else if (std::holds_alternative<IdentityNode>(p)) {
    kind = NodeKind::identity;
  } else if (const auto* se = std::get_if<SqueezeExcitationNode>(&p)) {
    encodeSqueezeExcitation(*se, r, w);
    kind = NodeKind::squeezeExcitation;
  } else if (const auto* image = std::get_if<ImageKernelNode>(&p)) {
    kind = std::visit(EncodeImageKernel{r, w}, image->parameters);
  } else {
    return false;
  }
  return true;
}

bool decodeImageNode(NodeKind kind, const RecordReader& r, const WeightSource& w,
                     NodeParameters& p) {
  ImageKernelParameters image;
  switch (kind) {
    case NodeKind::convolution:
      p = decodeConvolution(r, w);
      return true;
    case NodeKind::batchNormalization:
      p = BatchNormalizationNode{decodeBatchNormalization(r.record(kParameters), w),
                                 decodeNeuron(r.record(kNeuron))};
      return true;
    case NodeKind::affine: {
      AffineNode a{w.floats(r, kAffineScale), w.floats(r, kAffineShift),
                   decodeNeuron(r.record(kAffineNeuron))};
      if (a.scale.empty() || a.scale.size() != a.shift.size())
        r.fail("the scale and the shift differ in length, or are empty");
      p = std::move(a);
      return true;
    }
    case NodeKind::neuron:
      p = NeuronNode{decodeNeuron(r.record(kParameters))};
      return true;
    case NodeKind::arithmetic:
      p = ArithmeticNode{enumerator(r, kOperation, ArithmeticOperation::divide),
                         decodeNeuron(r.record(kNeuron))};
      return true;
    case NodeKind::concat:
      p = ConcatNode{r.u32s(kInputOffsets), {}};
      return true;
    case NodeKind::identity:
      p = IdentityNode{};
      return true;
    case NodeKind::squeezeExcitation:
      p = decodeSqueezeExcitation(r, w);
      return true;
    default:
      if (!decodeImageKernel(kind, r, w, image)) return false;
      p = ImageKernelNode{std::move(image)};
      return true;
  }
}

}  // namespace vkcnn::detail
