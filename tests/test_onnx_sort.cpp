// ONNX models whose nodes are not in topological order: onnx's checker refuses them, onnxruntime
// runs them and converters write them, so the importer sorts the nodes first
// (engine/src/onnx/topological_sort.h). A shuffled model imports as the sorted one and computes
// the same outputs; subgraphs are sorted too, and a node that reads an outer value inside its
// subgraph waits for it; a cycle is invalidModel naming the nodes in it, and only those.
#include <algorithm>
#include <array>
#include <random>

#include "onnx_model_builder.h"
#include "test_support.h"
#include "vkcnn/onnx.h"

using namespace vkcnn;
using namespace vkcnn::test;

namespace {

// Conv + Relu + MaxPool + a shape-computed Reshape + Gemm, with a second branch (a Sigmoid scaling
// the pooled values) so that more than one order is valid.
OnnxModelBuilder sortedModel() {
  OnnxModelBuilder b(13);
  b.input("x", {1, 3, 8, 8});
  addConvReluPool(b, "x", 3, randomFloats(4 * 3 * 9, 1), randomFloats(4, 2), "p");
  b.initializer("fc", {5, 64}, randomFloats(5 * 64, 3));
  b.node("Sigmoid", {"p"}, {"s"}, "gate");
  b.node("Mul", {"p", "s"}, {"g"}, "scale");
  b.node("Shape", {"g"}, {"shape"}, "shape");
  auto& k = b.node("Constant", {}, {"zero"}, "zero");
  setTensorAttribute(k, "value", {1}, std::vector<int64_t>{0});
  auto& gather = b.node("Gather", {"shape", "zero"}, {"n"}, "gather");
  setAttribute(gather, "axis", int64_t(0));
  auto& m1 = b.node("Constant", {}, {"minus1"}, "minus1");
  setTensorAttribute(m1, "value", {1}, std::vector<int64_t>{-1});
  auto& cat = b.node("Concat", {"n", "minus1"}, {"target"}, "cat");
  setAttribute(cat, "axis", int64_t(0));
  b.node("Reshape", {"g", "target"}, {"f"}, "flatten");
  auto& gemm = b.node("Gemm", {"f", "fc"}, {"y"}, "gemm");
  setAttribute(gemm, "transB", int64_t(1));
  b.output("y", {1, 5});
  return b;
}

void permuteNodes(onnx::GraphProto& graph, const std::vector<int>& order) {
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  nodes.Swap(graph.mutable_node());
  for (int k : order) *graph.add_node() = nodes.Get(k);
}

OnnxImportOptions fp32() {
  OnnxImportOptions options;
  options.channelFormat = ChannelFormat::float32;
  return options;
}

// A bool scalar initializer (If's condition).
void boolInitializer(onnx::GraphProto& graph, const std::string& name, bool value) {
  auto* t = graph.add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::BOOL);
  t->add_int32_data(value ? 1 : 0);
}

// A branch of If: `nodes` (op, input, output) in the order given, its output `out`.
onnx::GraphProto branch(const std::string& name,
                        const std::vector<std::array<std::string, 3>>& nodes,
                        const std::string& out) {
  OnnxModelBuilder b(13);
  for (const auto& [op, in, o] : nodes) b.node(op, {in}, {o}, name + "_" + o);
  b.output(out, {1, 2, 3, 3});
  onnx::GraphProto g = b.model.graph();
  g.set_name(name);
  return g;
}

}  // namespace

TEST_CASE("onnx sort: a shuffled model imports and computes what the sorted one does") {
  const OnnxModelBuilder sorted = sortedModel();
  const std::vector<float> input = randomFloats(3 * 8 * 8, 7, -2.f, 2.f);
  const std::vector<float> want =
      runOnnxImport(importOnnxModelFromMemory(context(), sorted.bytes(), fp32()), input);
  REQUIRE(want.size() == 5);
  const int n = sorted.model.graph().node_size();
  std::vector<int> reversed(static_cast<size_t>(n));
  for (int k = 0; k < n; ++k) reversed[size_t(k)] = n - 1 - k;
  std::vector<std::vector<int>> orders{reversed};
  std::mt19937 random(11);
  for (int trial = 0; trial < 3; ++trial) {
    std::vector<int> order(static_cast<size_t>(n));
    for (int k = 0; k < n; ++k) order[size_t(k)] = k;
    std::shuffle(order.begin(), order.end(), random);
    orders.push_back(order);
  }
  for (const auto& order : orders) {
    OnnxModelBuilder shuffled = sortedModel();
    permuteNodes(*shuffled.model.mutable_graph(), order);
    CAPTURE(shuffled.model.graph().node(0).name());
    OnnxImport imported = importOnnxModelFromMemory(context(), shuffled.bytes(), fp32());
    CHECK(imported.info.outputs[0].dims == std::vector<int64_t>{1, 5});
    CHECK(runOnnxImport(std::move(imported), input) == want);
  }
  // inspectOnnx reads it too (it runs the checker as well).
  OnnxModelBuilder shuffled = sortedModel();
  permuteNodes(*shuffled.model.mutable_graph(), reversed);
  CHECK(inspectOnnxFromMemory(shuffled.bytes()).outputs.at(0).name == "y");
}

TEST_CASE("onnx sort: subgraphs are sorted, and a node waits for the outer values they read") {
  // If's then-branch reads `r` from the main graph, which the file produces after the If; the
  // branch's own nodes are reversed. Without the sort onnx's checker refuses both.
  OnnxModelBuilder b(13);
  b.input("x", {1, 2, 3, 3});
  boolInitializer(*b.model.mutable_graph(), "cond", true);
  auto& node = b.node("If", {"cond"}, {"y"}, "choose");
  auto* thenBranch = node.add_attribute();
  thenBranch->set_name("then_branch");
  thenBranch->set_type(onnx::AttributeProto::GRAPH);
  *thenBranch->mutable_g() = branch("then", {{"Neg", "t1", "t2"}, {"Abs", "r", "t1"}}, "t2");
  auto* elseBranch = node.add_attribute();
  elseBranch->set_name("else_branch");
  elseBranch->set_type(onnx::AttributeProto::GRAPH);
  *elseBranch->mutable_g() = branch("else", {{"Identity", "x", "e"}}, "e");
  b.node("Relu", {"x"}, {"r"}, "relu");
  b.output("y", {1, 2, 3, 3});
  const OnnxModelInfo info = inspectOnnxFromMemory(b.bytes());
  CHECK(info.outputs.at(0).name == "y");
  // A cycle inside a subgraph is found there.
  *thenBranch->mutable_g() = branch("then", {{"Neg", "t1", "t2"}, {"Abs", "t2", "t1"}}, "t2");
  VKCNN_CHECK_ERROR(inspectOnnxFromMemory(b.bytes()), ErrorCode::invalidModel,
                    "the nodes of graph 'then' form a cycle");
}

TEST_CASE("onnx sort: a cycle is invalidModel naming the nodes in it, and only those") {
  OnnxModelBuilder cyc(13);
  cyc.input("x", {1, 2, 3, 3});
  cyc.node("Relu", {"x"}, {"before"}, "before");
  cyc.node("Add", {"before", "c"}, {"a"}, "first");
  cyc.node("Relu", {"a"}, {"b"}, "second");
  cyc.node("Sigmoid", {"b"}, {"c"}, "third");
  cyc.node("Abs", {"c"}, {"y"}, "after");
  cyc.output("y", {1, 2, 3, 3});
  try {
    importOnnxModelFromMemory(context(), cyc.bytes(), fp32());
    FAIL("a cycle imported");
  } catch (const Error& e) {
    CHECK(int(e.code()) == int(ErrorCode::invalidModel));
    const std::string message = e.what();
    CAPTURE(message);
    CHECK(message.find("form a cycle") != std::string::npos);
    // Data-flow order, closing on the node it started from (any node of the cycle may start it).
    const bool named = message.find(
                           "'first' (Add) -> 'second' (Relu) -> 'third' (Sigmoid) -> "
                           "'first' (Add)") != std::string::npos ||
                       message.find(
                           "'second' (Relu) -> 'third' (Sigmoid) -> 'first' (Add) -> "
                           "'second' (Relu)") != std::string::npos ||
                       message.find(
                           "'third' (Sigmoid) -> 'first' (Add) -> 'second' (Relu) -> "
                           "'third' (Sigmoid)") != std::string::npos;
    CHECK(named);
    CHECK(message.find("'before'") == std::string::npos);
    CHECK(message.find("'after'") == std::string::npos);
  }
  // A long cycle is named by its first 16 nodes and its length.
  OnnxModelBuilder ring(13);
  ring.input("x", {1, 2, 3, 3});
  ring.node("Add", {"x", "v39"}, {"v0"}, "n0");
  for (int k = 1; k < 40; ++k)
    ring.node("Relu", {"v" + std::to_string(k - 1)}, {"v" + std::to_string(k)},
              "n" + std::to_string(k));
  ring.output("v39", {1, 2, 3, 3});
  VKCNN_CHECK_ERROR(importOnnxModelFromMemory(context(), ring.bytes(), fp32()),
                    ErrorCode::invalidModel, "(Relu) -> ... (40 nodes)");
  // A node reading its own output; unnamed nodes are named by their position.
  OnnxModelBuilder self(13);
  self.input("x", {1, 2, 3, 3});
  self.node("Relu", {"y"}, {"y"});
  self.output("y", {1, 2, 3, 3});
  VKCNN_CHECK_ERROR(importOnnxModelFromMemory(context(), self.bytes(), fp32()),
                    ErrorCode::invalidModel,
                    "form a cycle, each reading the one before: "
                    "#0 (Relu) -> #0 (Relu)");
}
