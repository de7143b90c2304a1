// Building a Graph with Tensor values: reshape (a view), transpose, element-wise, slice and
// concatenation nodes, and the Tensor kernels (softmax, reductions, matrix products, resize,
// gather, pad) as plain parameters (lower() makes their kernels). Each builder checks its inputs'
// shapes and its parameters in the caller's terms and computes its output's shape, making no
// kernel.
#include <algorithm>
#include <cmath>
#include <string>

#include "graph/state.h"
#include "kernels/tensor_checks.h"
#include "vkcnn/error.h"
#include "vkcnn/tensor_ops.h"

namespace vkcnn {

using detail::GraphNode;

GraphTensor Graph::reshape(GraphTensor x, std::vector<uint32_t> shape, const std::string& name) {
  auto& s = *state_;
  const std::string label = s.nodeName(name, "reshape");
  s.requireBuilding(label);
  x = s.asTensor(x, label);
  const detail::GraphTensorInfo& in = s.tensors[x.id];
  uint64_t count = 1, inCount = 1;
  for (uint32_t d : shape) count *= d;
  for (uint32_t d : in.tensorShape) inCount *= d;
  if (shape.empty() || shape.size() > kMaxTensorRank || count != inCount)
    throw Error(ErrorCode::invalidArgument,
                s.what(label) + ": " + detail::GraphState::shapeText(in.tensorShape) +
                    " cannot become " + detail::GraphState::shapeText(shape));
  detail::GraphTensorInfo view;
  view.tensorShape = std::move(shape);
  view.name = label;
  view.producer = in.producer;
  view.storedIn = s.rootOf(x.id);
  s.tensors.push_back(view);
  return GraphTensor{uint32_t(s.tensors.size() - 1)};
}

GraphTensor Graph::transpose(GraphTensor x, std::vector<uint32_t> perm, const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "transpose");
  x = s.asTensor(x, n.name);
  const std::vector<uint32_t> in = s.tensors[x.id].tensorShape;
  std::vector<bool> seen(in.size(), false);
  bool valid = perm.size() == in.size();
  std::vector<uint32_t> out;
  for (uint32_t p : perm) {
    valid = valid && p < in.size() && !seen[p];
    if (!valid) break;
    seen[p] = true;
    out.push_back(in[p]);
  }
  if (!valid)
    throw Error(ErrorCode::invalidArgument,
                s.what(n.name) + ": perm " + detail::GraphState::shapeText(perm) +
                    " is not a permutation of the " + std::to_string(in.size()) + " axes");
  n.inputs = {x.id};
  n.parameters = detail::TransposeNode{std::move(perm)};
  return s.addTensorNode(std::move(n), std::move(out));
}

GraphTensor Graph::tensorUnary(GraphTensor x, TensorUnaryOperation operation,
                               const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "tensor unary");
  x = s.asTensor(x, n.name);
  n.inputs = {x.id};
  n.parameters = detail::TensorUnaryNode{operation, {}};
  return s.addTensorNode(std::move(n), s.tensors[x.id].tensorShape);
}

GraphTensor Graph::tensorNeuron(GraphTensor x, const NeuronDescriptor& neuron,
                                const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "tensor neuron");
  if (neuron.type == NeuronType::prelu)
    throw Error(ErrorCode::invalidArgument,
                s.what(n.name) + ": PReLU on a tensor is tensorBinary(prelu) with its slopes");
  x = s.asTensor(x, n.name);
  n.inputs = {x.id};
  n.parameters = detail::TensorUnaryNode{TensorUnaryOperation::neuron, neuron};
  return s.addTensorNode(std::move(n), s.tensors[x.id].tensorShape);
}

GraphTensor Graph::tensorBinary(GraphTensor a, GraphTensor b, TensorBinaryOperation operation,
                                const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "tensor binary");
  a = s.asTensor(a, n.name);
  b = s.asTensor(b, n.name);
  std::vector<uint32_t> out =
      broadcastShape(s.tensors[a.id].tensorShape, s.tensors[b.id].tensorShape, s.what(n.name));
  n.inputs = {a.id, b.id};
  n.parameters = detail::TensorBinaryNode{operation};
  return s.addTensorNode(std::move(n), std::move(out));
}

GraphTensor Graph::where(GraphTensor condition, GraphTensor x, GraphTensor y,
                         const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "where");
  condition = s.asTensor(condition, n.name);
  x = s.asTensor(x, n.name);
  y = s.asTensor(y, n.name);
  std::vector<uint32_t> out =
      broadcastShape(broadcastShape(s.tensors[condition.id].tensorShape,
                                    s.tensors[x.id].tensorShape, s.what(n.name)),
                     s.tensors[y.id].tensorShape, s.what(n.name));
  n.inputs = {condition.id, x.id, y.id};
  n.parameters = detail::WhereNode{};
  return s.addTensorNode(std::move(n), std::move(out));
}

GraphTensor Graph::slice(GraphTensor x, std::vector<int32_t> axes, std::vector<int64_t> starts,
                         std::vector<int64_t> ends, std::vector<int64_t> steps,
                         const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "slice");
  x = s.asTensor(x, n.name);
  if (starts.size() != axes.size() || ends.size() != axes.size() || steps.size() != axes.size())
    throw Error(ErrorCode::invalidArgument,
                s.what(n.name) + ": axes, starts, ends and steps differ in length");
  // The output shape from a host-side view of the same shape (Tensor::slice does the clamping).
  const std::vector<uint32_t>& in = s.tensors[x.id].tensorShape;
  std::vector<uint32_t> out = in;
  for (size_t k = 0; k < axes.size(); ++k) {
    const int32_t rank = int32_t(in.size());
    const int32_t axis = axes[k] < 0 ? axes[k] + rank : axes[k];
    if (axis < 0 || axis >= rank)
      throw Error(ErrorCode::invalidArgument, s.what(n.name) + ": axis " + std::to_string(axes[k]) +
                                                  " of a rank-" + std::to_string(rank) + " tensor");
    const int64_t dim = in[size_t(axis)], step = steps[k];
    if (step == 0) throw Error(ErrorCode::invalidArgument, s.what(n.name) + ": a step of 0");
    // As Tensor::slice clamps (ONNX Slice).
    auto resolve = [&](int64_t v) {
      if (v < 0) v = v < -dim ? (step > 0 ? 0 : -1) : v + dim;
      if (step > 0) return std::clamp<int64_t>(v, 0, dim);
      return std::clamp<int64_t>(v, -1, dim - 1);
    };
    const int64_t first = resolve(starts[k]), last = resolve(ends[k]);
    const int64_t count = step > 0 ? (last > first ? (last - first + step - 1) / step : 0)
                                   : (first > last ? (first - last - step - 1) / -step : 0);
    if (count <= 0)
      throw Error(ErrorCode::invalidArgument,
                  s.what(n.name) + ": the slice of axis " + std::to_string(axis) + " is empty");
    out[size_t(axis)] = uint32_t(count);
    axes[k] = axis;
  }
  n.inputs = {x.id};
  n.parameters =
      detail::SliceNode{std::move(axes), std::move(starts), std::move(ends), std::move(steps)};
  return s.addTensorNode(std::move(n), std::move(out));
}

GraphTensor Graph::concat(const std::vector<GraphTensor>& inputs, uint32_t axis,
                          const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "tensor concat");
  if (inputs.empty()) throw Error(ErrorCode::invalidArgument, s.what(n.name) + ": no inputs");
  std::vector<uint32_t> out;
  for (GraphTensor t : inputs) {
    t = s.asTensor(t, n.name);
    const std::vector<uint32_t>& in = s.tensors[t.id].tensorShape;
    if (out.empty()) {
      if (axis >= in.size())
        throw Error(ErrorCode::invalidArgument, s.what(n.name) + ": axis " + std::to_string(axis) +
                                                    " of a rank-" + std::to_string(in.size()) +
                                                    " tensor");
      out = in;
    } else {
      bool fits = in.size() == out.size();
      for (size_t k = 0; fits && k < in.size(); ++k) fits = k == axis || in[k] == out[k];
      if (!fits)
        throw Error(ErrorCode::invalidArgument,
                    s.what(n.name) + ": " + detail::GraphState::shapeText(in) +
                        " does not concatenate with " + detail::GraphState::shapeText(out) +
                        " along axis " + std::to_string(axis));
      out[axis] += in[axis];
    }
    n.inputs.push_back(t.id);
  }
  n.parameters = detail::TensorConcatNode{axis};
  return s.addTensorNode(std::move(n), std::move(out));
}

namespace detail {
namespace {

// The node's axis in [0, rank), or an Error naming it.
uint32_t graphAxis(const GraphState& s, const std::string& node, int64_t axis, size_t rank) {
  const int64_t r = int64_t(rank);
  if (axis < -r || axis >= r)
    throw Error(ErrorCode::invalidArgument, s.what(node) + ": axis " + std::to_string(axis) +
                                                " is outside a rank-" + std::to_string(rank) +
                                                " tensor");
  return uint32_t(axis < 0 ? axis + r : axis);
}

// A TensorKernelNode of `parameters` on `inputs` (Images are converted), its output `shape`.
GraphTensor addKernel(GraphState& s, GraphNode& n, TensorKernelParameters parameters,
                      const std::vector<GraphTensor>& inputs, std::vector<uint32_t> shape) {
  for (GraphTensor t : inputs) n.inputs.push_back(t.id);
  n.parameters = TensorKernelNode{std::move(parameters)};
  return s.addTensorNode(std::move(n), std::move(shape));
}

}  // namespace
}  // namespace detail

GraphTensor Graph::softmax(GraphTensor x, int32_t axis, bool logarithm, const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, logarithm ? "log-softmax" : "softmax");
  x = s.asTensor(x, n.name);
  std::vector<uint32_t> shape = s.tensors[x.id].tensorShape;
  detail::graphAxis(s, n.name, axis, shape.size());
  return detail::addKernel(s, n, detail::TensorSoftmaxParameters{axis, logarithm}, {x},
                           std::move(shape));
}

GraphTensor Graph::reduction(GraphTensor x, TensorReductionOperation operation,
                             std::vector<int32_t> axes, bool keepDimensions,
                             const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "reduction");
  x = s.asTensor(x, n.name);
  const std::vector<uint32_t> in = s.tensors[x.id].tensorShape;
  std::vector<bool> reduced(in.size(), axes.empty());
  for (int32_t a : axes) {
    const uint32_t k = detail::graphAxis(s, n.name, a, in.size());
    if (reduced[k])
      throw Error(ErrorCode::invalidArgument,
                  s.what(n.name) + ": axis " + std::to_string(a) + " is listed twice");
    reduced[k] = true;
  }
  std::vector<uint32_t> out;
  for (size_t k = 0; k < in.size(); ++k)
    if (!reduced[k])
      out.push_back(in[k]);
    else if (keepDimensions)
      out.push_back(1);
  if (out.empty()) out = {1};
  detail::checkTensorReduction(operation, s.what(n.name));
  return detail::addKernel(
      s, n, detail::TensorReductionParameters{operation, std::move(axes), keepDimensions}, {x},
      std::move(out));
}

GraphTensor Graph::argReduction(GraphTensor x, bool maximum, int32_t axis, bool keepDimensions,
                                bool selectLastIndex, const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, maximum ? "argmax" : "argmin");
  x = s.asTensor(x, n.name);
  std::vector<uint32_t> out = s.tensors[x.id].tensorShape;
  const uint32_t a = detail::graphAxis(s, n.name, axis, out.size());
  if (keepDimensions)
    out[a] = 1;
  else
    out.erase(out.begin() + a);
  if (out.empty()) out = {1};
  return detail::addKernel(
      s, n, detail::TensorArgReductionParameters{maximum, axis, keepDimensions, selectLastIndex},
      {x}, std::move(out));
}

GraphTensor Graph::matMul(GraphTensor a, GraphTensor b, const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "matmul");
  a = s.asTensor(a, n.name);
  b = s.asTensor(b, n.name);
  std::vector<uint32_t> sa = s.tensors[a.id].tensorShape, sb = s.tensors[b.id].tensorShape;
  const bool rowA = sa.size() == 1, columnB = sb.size() == 1;
  if (rowA) sa.insert(sa.begin(), 1);
  if (columnB) sb.push_back(1);
  const uint32_t m = sa[sa.size() - 2], k = sa.back(), kb = sb[sb.size() - 2], cols = sb.back();
  if (k != kb)
    throw Error(ErrorCode::invalidArgument,
                s.what(n.name) + ": " + detail::GraphState::shapeText(s.tensors[a.id].tensorShape) +
                    " and " + detail::GraphState::shapeText(s.tensors[b.id].tensorShape) +
                    " do not multiply");
  const std::vector<uint32_t> batchA(sa.begin(), sa.end() - 2), batchB(sb.begin(), sb.end() - 2);
  std::vector<uint32_t> out = batchA.empty()   ? batchB
                              : batchB.empty() ? batchA
                                               : broadcastShape(batchA, batchB, s.what(n.name));
  if (!rowA) out.push_back(m);
  if (!columnB) out.push_back(cols);
  if (out.empty()) out = {1};
  return detail::addKernel(s, n, detail::TensorMatMulParameters{}, {a, b}, std::move(out));
}

GraphTensor Graph::gemm(GraphTensor a, GraphTensor b, GraphTensor c, const GemmDescriptor& d,
                        const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "gemm");
  a = s.asTensor(a, n.name);
  b = s.asTensor(b, n.name);
  const std::vector<uint32_t>&sa = s.tensors[a.id].tensorShape, &sb = s.tensors[b.id].tensorShape;
  if (sa.size() != 2 || sb.size() != 2)
    throw Error(ErrorCode::invalidArgument, s.what(n.name) + ": Gemm multiplies matrices, not " +
                                                detail::GraphState::shapeText(sa) + " and " +
                                                detail::GraphState::shapeText(sb));
  const uint32_t m = d.transposeA ? sa[1] : sa[0], k = d.transposeA ? sa[0] : sa[1];
  const uint32_t kb = d.transposeB ? sb[1] : sb[0], cols = d.transposeB ? sb[0] : sb[1];
  if (k != kb)
    throw Error(ErrorCode::invalidArgument,
                s.what(n.name) + ": " + detail::GraphState::shapeText(sa) + " and " +
                    detail::GraphState::shapeText(sb) + " do not multiply");
  std::vector<GraphTensor> inputs = {a, b};
  if (c.valid()) inputs.push_back(s.asTensor(c, n.name));
  return detail::addKernel(s, n, d, inputs, {m, cols});
}

GraphTensor Graph::layerNormalization(GraphTensor x, GraphTensor scale, GraphTensor bias,
                                      int32_t axis, float epsilon, const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "layer normalization");
  x = s.asTensor(x, n.name);
  std::vector<uint32_t> shape = s.tensors[x.id].tensorShape;
  detail::graphAxis(s, n.name, axis, shape.size());
  std::vector<GraphTensor> inputs = {x, s.asTensor(scale, n.name)};
  if (bias.valid()) inputs.push_back(s.asTensor(bias, n.name));
  detail::checkTensorLayerNormalization(epsilon, s.what(n.name));
  return detail::addKernel(s, n, detail::TensorLayerNormalizationParameters{axis, epsilon}, inputs,
                           std::move(shape));
}

GraphTensor Graph::resize(GraphTensor x, const TensorResizeDescriptor& d, const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "tensor resize");
  x = s.asTensor(x, n.name);
  const std::vector<uint32_t> in = s.tensors[x.id].tensorShape;
  const size_t rank = in.size();
  const bool crop = d.coordinateTransformation == TensorCoordinateTransformation::tfCropAndResize;
  if ((!d.sizes.empty() && d.sizes.size() != rank) ||
      (d.sizes.empty() && d.scales.size() != rank) ||
      (!d.scales.empty() && d.scales.size() != rank) ||
      (crop && !d.roi.empty() && d.roi.size() != 2 * rank))
    throw Error(ErrorCode::invalidArgument, s.what(n.name) +
                                                ": sizes, scales or roi do not match the rank-" +
                                                std::to_string(rank) + " source");
  std::vector<uint32_t> out(rank);
  for (size_t k = 0; k < rank; ++k) {
    if (!d.sizes.empty()) {
      out[k] = d.sizes[k];
      continue;
    }
    const double roi = crop && !d.roi.empty() ? double(d.roi[rank + k] - d.roi[k]) : 1.0;
    const double extent = double(in[k]) * roi * double(d.scales[k]);
    if (!(extent >= 1) || extent > double(INT32_MAX))
      throw Error(ErrorCode::invalidArgument, s.what(n.name) + ": axis " + std::to_string(k) +
                                                  " would have " + std::to_string(extent) +
                                                  " elements");
    out[k] = uint32_t(std::floor(extent));
  }
  detail::checkTensorResize(d, s.what(n.name));
  return detail::addKernel(s, n, d, {x}, std::move(out));
}

GraphTensor Graph::gather(GraphTensor data, GraphTensor indices, int32_t axis,
                          const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "gather");
  data = s.asTensor(data, n.name);
  indices = s.asTensor(indices, n.name);
  const std::vector<uint32_t>&sd = s.tensors[data.id].tensorShape,
        &si = s.tensors[indices.id].tensorShape;
  const uint32_t a = detail::graphAxis(s, n.name, axis, sd.size());
  std::vector<uint32_t> out(sd.begin(), sd.begin() + a);
  out.insert(out.end(), si.begin(), si.end());
  out.insert(out.end(), sd.begin() + a + 1, sd.end());
  return detail::addKernel(s, n, detail::TensorGatherParameters{axis}, {data, indices},
                           std::move(out));
}

GraphTensor Graph::pad(GraphTensor x, TensorPaddingMode mode, std::vector<int64_t> pads,
                       float value, const std::string& name) {
  auto& s = *state_;
  GraphNode n = s.newNode(name, "tensor pad");
  x = s.asTensor(x, n.name);
  const std::vector<uint32_t> in = s.tensors[x.id].tensorShape;
  if (pads.size() != 2 * in.size())
    throw Error(ErrorCode::invalidArgument, s.what(n.name) + ": " + std::to_string(pads.size()) +
                                                " pads for a rank-" + std::to_string(in.size()) +
                                                " tensor");
  std::vector<uint32_t> out(in.size());
  for (size_t k = 0; k < in.size(); ++k) {
    const int64_t e = int64_t(in[k]) + pads[k] + pads[k + in.size()];
    if (e < 1 || e > INT32_MAX)
      throw Error(ErrorCode::invalidArgument, s.what(n.name) + ": axis " + std::to_string(k) +
                                                  " would have " + std::to_string(e) + " elements");
    out[k] = uint32_t(e);
  }
  detail::checkTensorPad(mode, pads.size(), 0, s.what(n.name));
  return detail::addKernel(s, n, detail::TensorPadParameters{mode, std::move(pads), value}, {x},
                           std::move(out));
}

}  // namespace vkcnn
