// The Graph's .vkcnn serialization (graph/serialize.h) without ONNX: a Graph built with the public
// builders, of every Tensor kernel and several Image kernels, written and read back runs
// bit-identically; a caller's kernel (Graph::unary) is refused by name; and the graph section is
// hostile input: hand-made sections with an index out of range, a cycle, an unknown node kind, an
// Image where a Tensor belongs, a missing section, and every byte of a real section replaced,
// each fail with vkcnn::Error (never a crash), the targeted ones naming what was wrong.
#include <cstring>
#include <fstream>
#include <map>

#include "archive/archive.h"
#include "graph/serialize.h"
#include "test_support.h"
#include "vkcnn/neuron.h"
#include "vkcnn/session.h"
#include "vkcnn/tensor_ops.h"

using namespace vkcnn;
using namespace vkcnn::test;
using archive::FieldKey;
using archive::RecordWriter;

namespace {

constexpr uint32_t N = 2;

// An Image network and a Tensor tail: convolution + batch norm + ReLU (folded, fused), pooling,
// concatenation, then softmax, reduction, arg reduction, matmul, gemm, layer normalisation,
// resize, gather and pad on the Tensor of its output.
Graph buildGraph(ChannelFormat format) {
  GraphOptions options;
  options.channelFormat = format;
  options.numberOfImages = N;
  options.label = "serialize";
  Graph g(context(), options);
  GraphTensor x = g.input("x", {6, 6, 4});
  ConvolutionDescriptor d = ConvolutionDescriptor::make(3, 3, 4, 8);
  GraphTensor c =
      g.convolution(x, d, randomFloats(8 * 4 * 9, 1, -0.3f, 0.3f), randomFloats(8, 2), {}, "conv");
  BatchNormalizationParameters bn{randomFloats(8, 3), randomFloats(8, 4, 0.5f, 1.5f),
                                  randomFloats(8, 5), randomFloats(8, 6), 1e-3f};
  c = g.neuron(g.batchNormalization(c, bn, "bn"), NeuronDescriptor::relu(), "relu");
  GraphTensor p = g.pooling(c, true, PoolingDescriptor::of(2, 2, 2, 2), "pool");
  GraphTensor cat =
      g.concat({p, g.pooling(c, false, PoolingDescriptor::of(2, 2, 2, 2), "avg")}, "cat");
  GraphTensor t = g.toTensor(p);  // [N, 8, 3, 3]
  GraphTensor flat = g.reshape(t, {N, 72}, "flat");
  GraphTensor w = g.constant({72, 10}, randomFloats(720, 7, -0.1f, 0.1f), "w");
  GraphTensor bias = g.constant({10}, randomFloats(10, 8), "b");
  GraphTensor y = g.gemm(flat, w, bias, GemmDescriptor{}, "gemm");
  GraphTensor scale = g.constant({10}, randomFloats(10, 9, 0.5f, 1.5f), "scale");
  y = g.layerNormalization(y, scale, {}, -1, 1e-5f, "ln");
  y = g.softmax(y, -1, false, "softmax");
  GraphTensor m =
      g.matMul(g.reshape(y, {N, 1, 10}, "row"), g.constant({10, 4}, randomFloats(40, 10)),
               "matmul");                                                           // [N, 1, 4]
  GraphTensor r = g.reduction(m, TensorReductionOperation::sum, {1}, true, "sum");  // [N, 1, 4]
  TensorResizeDescriptor rd;
  rd.sizes = {N, 1, 8};
  rd.interpolation = TensorInterpolation::linear;
  r = g.resize(r, rd, "resize");                                        // [N, 1, 8]
  r = g.pad(r, TensorPaddingMode::edge, {0, 0, 1, 0, 0, 1}, 0, "pad");  // [N, 1, 10]
  if (format == ChannelFormat::float32) {  // Gather's indices are float32
    GraphTensor idx = g.constant({2}, {1, 3}, "idx");
    r = g.gather(r, idx, 2, "gather");  // [N, 1, 2]
  } else {
    r = g.slice(r, {2}, {1}, {5}, {2}, "slice");  // [N, 1, 2]
  }
  GraphTensor arg = g.argReduction(r, true, 2, true, false, "argmax");  // [N, 1, 1]
  GraphTensor out =
      g.reshape(g.tensorBinary(r, arg, TensorBinaryOperation::add, "add"), {N, 2, 1, 1}, "out4");
  g.output(out, "y");
  g.output(cat, "pooled");
  return g;
}

std::vector<uint8_t> writeFile(Graph& g, const OnnxModelInfo* model = nullptr) {
  archive::Provenance p;
  p.sourceName = "built";
  p.sourceFormat = "graph";
  p.compiler = "test";
  p.precision = "fp32";
  archive::Writer writer(p);
  detail::writeGraph(g, writer, model);
  return writer.build();
}

OnnxTensorInfo info(const std::string& name, uint32_t c, uint32_t h, uint32_t w) {
  OnnxTensorInfo t;
  t.name = name;
  t.dims = {N, c, h, w};
  t.elementType = "float32";
  t.numberOfImages = N;
  t.featureChannels = c;
  t.height = h;
  t.width = w;
  return t;
}

std::vector<std::vector<double>> runGraph(Graph& g, const test::Tensor& in) {
  const Image x = makeImage(in, ChannelFormat::float32, "x");
  CommandBuffer cb(context());
  const std::vector<Image> outputs = g.encode(cb, {x});
  cb.commit();
  cb.waitUntilCompleted();
  std::vector<std::vector<double>> result;
  for (const Image& o : outputs) result.push_back(download(o).data);
  return result;
}

// A graph section of `values` and `nodes` records (the format's keys, docs/model-format.md), one
// input (value 0) and one output.
std::vector<uint8_t> sectionFile(const std::vector<RecordWriter>& values,
                                 const std::vector<RecordWriter>& nodes, uint32_t output) {
  RecordWriter options, input, out, section;
  options.u32({1, "channel format"}, 1).u32({4, "number of images"}, 1);
  input.tensor({1, "tensor"}, 0).string({2, "name"}, "x");
  out.tensor({1, "tensor"}, output).string({2, "name"}, "y");
  section.record({1, "options"}, options);
  section.records({2, "value"}, values);
  section.records({3, "node"}, nodes);
  section.records({4, "input"}, std::vector<RecordWriter>{input});
  section.records({5, "output"}, std::vector<RecordWriter>{out});
  archive::Provenance p;
  p.compiler = "test";
  p.precision = "fp32";
  archive::Writer writer(p);
  writer.addSection(uint32_t(archive::SectionKind::graph), section.finish());
  return writer.build();
}

RecordWriter image(uint32_t producer = detail::kNone) {
  RecordWriter v;
  v.string({1, "name"}, "v").u32s({2, "shape"}, std::vector<uint32_t>{4, 4, 4});
  if (producer != detail::kNone) v.u32({4, "producer"}, producer);
  return v;
}

RecordWriter neuronNode(std::vector<uint32_t> inputs, uint32_t output, uint32_t kind = 4) {
  RecordWriter neuron, parameters, n;
  neuron.u32({1, "type"}, 1);
  parameters.record({1, "parameters"}, neuron);
  n.u32({1, "kind"}, kind).string({2, "name"}, "n").tensors({3, "inputs"}, inputs);
  n.tensor({4, "output"}, output).record({5, "parameters"}, parameters);
  return n;
}

void checkRefused(const std::vector<uint8_t>& file, const std::string& message) {
  const archive::Archive a = archive::Archive::fromBytes(file, "model 'hostile.vkcnn'");
  CHECK_THROWS_WITH_AS(detail::readGraph(context(), a), doctest::Contains(message.c_str()), Error);
}

}  // namespace

TEST_CASE("graph serialize: written and read back, a Graph runs bit-identically") {
  for (const ChannelFormat format : {ChannelFormat::float32, ChannelFormat::float16}) {
    CAPTURE(toString(format));
    Graph built = buildGraph(format);
    const std::vector<uint8_t> file = writeFile(built);
    const archive::Archive a = archive::Archive::fromBytes(file, "model 'built.vkcnn'");
    Graph read = detail::readGraph(context(), a);
    const test::Tensor in = randomTensor(N, 4, 6, 6, 11);
    const auto want = runGraph(built, in), got = runGraph(read, in);
    CHECK(read.describe() == built.describe());
    CHECK(read.statistics().foldedBatchNormalizations == 1);
    REQUIRE(got.size() == want.size());
    for (size_t k = 0; k < got.size(); ++k)
      CHECK(std::memcmp(got[k].data(), want[k].data(), got[k].size() * sizeof(double)) == 0);
    // A planned graph is written no more (its storage is planned for this process).
    CHECK_THROWS_AS(writeFile(built), Error);
  }
}

// This test program links libvkcnn alone (no libvkcnn_onnx): a Session loads a .vkcnn with it.
TEST_CASE("graph serialize: a Session runs a .vkcnn with libvkcnn alone") {
  Graph built = buildGraph(ChannelFormat::float32);
  OnnxModelInfo model;
  model.inputs = {info("x", 4, 6, 6)};
  model.outputs = {info("y", 2, 1, 1), info("pooled", 16, 3, 3)};
  const std::vector<uint8_t> file = writeFile(built, &model);
  const test::Tensor in = randomTensor(N, 4, 6, 6, 12);
  const auto want = runGraph(built, in);
  Session session = Session::fromMemory(context(), file);
  CHECK((session.precision() == ChannelFormat::float32));
  REQUIRE(session.outputs().size() == 2);
  std::map<std::string, HostTensor> inputs;
  inputs["x"] = HostTensor{{}, std::vector<float>(in.data.begin(), in.data.end())};
  const auto got = session.run(inputs);
  for (size_t k = 0; k < want.size(); ++k) {
    const std::vector<float>& g = got.at(model.outputs[k].name).data;
    REQUIRE(g.size() == want[k].size());
    size_t equal = 0;
    for (size_t i = 0; i < g.size(); ++i) equal += double(g[i]) == want[k][i];
    CHECK(equal == g.size());
  }
  // No import code came into the process for it.
  std::ifstream maps("/proc/self/maps");
  const std::string mapped{std::istreambuf_iterator<char>(maps), {}};
  CHECK(mapped.find("libvkcnn_onnx") == std::string::npos);
  // An ONNX model goes to libvkcnn_onnx, opened beside libvkcnn: bytes that are no model fail.
  const std::vector<uint8_t> notVkcnn = {8, 1, 18, 0};
  CHECK_THROWS_AS(Session::fromMemory(context(), notVkcnn), Error);
}

TEST_CASE("graph serialize: a caller's kernel cannot be written, and the message names it") {
  Graph g(context());
  GraphTensor x = g.input("x", {4, 4, 4});
  g.output(g.unary(x, std::make_shared<Neuron>(context(), NeuronDescriptor::relu()), "mine"), "y");
  CHECK_THROWS_WITH_AS(writeFile(g), doctest::Contains("node 'mine': a kernel node"), Error);
}

TEST_CASE("graph serialize: hostile graph sections are refused with what was wrong") {
  // Fine as it is: the reference for the cases below.
  const std::vector<RecordWriter> two = {image(), image(0)};
  {
    const std::vector<uint8_t> file = sectionFile(two, {neuronNode({0}, 1)}, 1);
    const archive::Archive a = archive::Archive::fromBytes(file, "model 'fine.vkcnn'");
    CHECK_NOTHROW(detail::readGraph(context(), a).plan());
  }
  checkRefused(sectionFile(two, {neuronNode({7}, 1)}, 1), "node 0: field 'inputs'");
  checkRefused(sectionFile(two, {neuronNode({0}, 1, 999)}, 1), "node kind 999 is unknown");
  checkRefused(sectionFile(two, {neuronNode({0, 0}, 1, 7)}, 1), "'identity' with 2 inputs");
  checkRefused(sectionFile({image(), image(0)}, {neuronNode({0}, 1)}, 5), "field 'tensor'");
  // Two nodes reading each other's outputs.
  checkRefused(
      sectionFile({image(), image(0), image(1)}, {neuronNode({2}, 1), neuronNode({1}, 2)}, 2),
      "cycle");
  // A chain deeper than planning recurses (16384 nodes).
  {
    std::vector<RecordWriter> values = {image()}, nodes;
    for (uint32_t k = 0; k < 16400; ++k) {
      values.push_back(image(k));
      nodes.push_back(neuronNode({k}, k + 1));
    }
    checkRefused(sectionFile(values, nodes, 16400), "a chain of more than 16384 nodes");
  }
  // A Tensor node on an Image.
  RecordWriter transpose, parameters;
  parameters.u32s({1, "perm"}, std::vector<uint32_t>{0});
  transpose.u32({1, "kind"}, 12)
      .string({2, "name"}, "t")
      .tensors({3, "inputs"}, std::vector<uint32_t>{0});
  transpose.tensor({4, "output"}, 1).record({5, "parameters"}, parameters);
  checkRefused(sectionFile(two, {transpose}, 1), "its output is an Image");
  // A producer past the nodes.
  checkRefused(sectionFile({image(), image(3)}, {neuronNode({0}, 1)}, 1), "field 'producer'");
  // No graph section at all.
  archive::Provenance p;
  p.compiler = "test";
  p.precision = "fp32";
  checkRefused(archive::Writer(p).build(), "has no graph section");
}

TEST_CASE("graph serialize: every byte of a graph section replaced, the reader only throws Error") {
  Graph built = buildGraph(ChannelFormat::float32);
  std::vector<uint8_t> file = writeFile(built);
  const archive::Archive original = archive::Archive::fromBytes(file, "model 'built.vkcnn'");
  const archive::SectionInfo* graph = nullptr;
  for (const archive::SectionInfo& s : original.sections())
    if (s.kind == uint32_t(archive::SectionKind::graph)) graph = &s;
  REQUIRE(graph);
  const uint64_t begin = graph->offset, end = graph->offset + graph->size;
  size_t refused = 0, read = 0;
  for (uint64_t at = begin; at < end; ++at)
    for (const uint8_t value : {uint8_t(0), uint8_t(0xFF), uint8_t(file[at] ^ 1)}) {
      std::vector<uint8_t> bad = file;
      if (bad[at] == value) continue;
      bad[at] = value;
      try {
        const archive::Archive a = archive::Archive::fromBytes(bad, "model 'bad.vkcnn'", {false});
        detail::readGraph(context(), a).plan();
        ++read;  // a name, a float: still a graph
      } catch (const Error&) {
        ++refused;
      }
    }
  CHECK(refused > 0);
  CHECK(read > 0);
  MESSAGE(refused << " changes refused, " << read << " read");
}
