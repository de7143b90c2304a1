// Writes a handful of small ONNX models (the importer tests' kind) as seeds for fuzz_onnx:
//   fuzz_make_onnx_seeds DIR
#include <cstdio>
#include <string>
#include <vector>

#include "onnx_model_builder.h"

using vkcnn::test::OnnxModelBuilder;
using vkcnn::test::setAttribute;

namespace {

std::vector<float> ramp(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = float(int(i % 7) - 3) * 0.125f;
  return v;
}

void save(const std::string& dir, const std::string& name, const OnnxModelBuilder& b) {
  const std::vector<uint8_t> bytes = b.bytes();
  const std::string path = dir + "/" + name + ".onnx";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) {
    std::perror(path.c_str());
    std::exit(1);
  }
  std::fclose(f);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  {  // Conv + BatchNormalization + Relu + MaxPool
    OnnxModelBuilder b(13);
    b.input("x", {1, 3, 8, 8});
    b.initializer("W", {4, 3, 3, 3}, ramp(4 * 3 * 3 * 3));
    b.initializer("B", {4}, ramp(4));
    for (const char* n : {"gamma", "beta", "mean"}) b.initializer(n, {4}, ramp(4));
    b.initializer("var", {4}, {1.f, 2.f, 0.5f, 1.5f});
    auto& c = b.node("Conv", {"x", "W", "B"}, {"c"}, "conv");
    setAttribute(c, "kernel_shape", std::vector<int64_t>{3, 3});
    setAttribute(c, "pads", std::vector<int64_t>{1, 1, 1, 1});
    b.node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"n"});
    b.node("Relu", {"n"}, {"r"});
    auto& p = b.node("MaxPool", {"r"}, {"y"});
    setAttribute(p, "kernel_shape", std::vector<int64_t>{2, 2});
    setAttribute(p, "strides", std::vector<int64_t>{2, 2});
    b.output("y", 4);
    save(dir, "conv_bn_relu_pool", b);
  }
  {  // Element-wise arithmetic with constants, Concat, Softmax
    OnnxModelBuilder b(13);
    b.input("x", {1, 3, 4, 4});
    b.input("z", {1, 3, 4, 4});
    b.initializer("h", {1}, {0.5f});
    b.initializer("k", {3, 1, 1}, {1.f, -2.f, 3.f});
    b.node("Add", {"x", "z"}, {"s"});
    b.node("Mul", {"s", "h"}, {"m"});
    b.node("Sub", {"k", "m"}, {"d"});
    auto& cat = b.node("Concat", {"d", "x"}, {"c"});
    setAttribute(cat, "axis", int64_t(1));
    auto& sm = b.node("Softmax", {"c"}, {"y"});
    setAttribute(sm, "axis", int64_t(1));
    b.output("y", 4);
    save(dir, "arith_concat_softmax", b);
  }
  {  // GlobalAveragePool + Flatten + Gemm (a classifier head), dynamic batch
    OnnxModelBuilder b(11);
    b.input("x", {-1, 4, 3, 3}, onnx::TensorProto::FLOAT, {"N"});
    b.initializer("W", {5, 4}, ramp(20));
    b.initializer("B", {5}, ramp(5));
    b.node("GlobalAveragePool", {"x"}, {"g"});
    b.node("Flatten", {"g"}, {"f"});
    auto& g = b.node("Gemm", {"f", "W", "B"}, {"y"});
    setAttribute(g, "transB", int64_t(1));
    b.output("y", 2);
    save(dir, "gap_flatten_gemm", b);
  }
  {  // Weights of 1 KiB and more: taken out of protobuf's message by the scanner (raw_data.h)
    OnnxModelBuilder b(13);
    b.input("x", {1, 16, 3, 3});
    b.initializer("W", {24, 16, 1, 1}, ramp(24 * 16));
    b.initializer("F", {10, 24}, ramp(240));
    b.node("Conv", {"x", "W"}, {"c"});
    b.node("GlobalAveragePool", {"c"}, {"g"});
    b.node("Flatten", {"g"}, {"f"});
    auto& g = b.node("Gemm", {"f", "F"}, {"y"});
    setAttribute(g, "transB", int64_t(1));
    b.output("y", 2);
    save(dir, "large_weights", b);
  }
  {  // Shape arithmetic evaluated at import: Shape, Gather, Unsqueeze, Concat, Reshape
    OnnxModelBuilder b(13);
    b.input("x", {1, 4, 2, 3});
    b.initializerInt64("i0", {}, {0});
    b.initializerInt64("ax", {1}, {0});
    b.initializerInt64("rest", {1}, {-1});
    b.node("Shape", {"x"}, {"s"});
    auto& ga = b.node("Gather", {"s", "i0"}, {"n"});
    setAttribute(ga, "axis", int64_t(0));
    b.node("Unsqueeze", {"n", "ax"}, {"nu"});
    auto& cat = b.node("Concat", {"nu", "rest"}, {"shape"});
    setAttribute(cat, "axis", int64_t(0));
    b.node("Reshape", {"x", "shape"}, {"y"});
    b.output("y", 2);
    save(dir, "shape_reshape", b);
  }
  {  // Depthwise grouped ConvTranspose-free path: grouped Conv with dilation, AveragePool, Resize
    OnnxModelBuilder b(13);
    b.input("x", {1, 4, 9, 9});
    b.initializer("W", {4, 1, 3, 3}, ramp(36));
    auto& c = b.node("Conv", {"x", "W"}, {"c"});
    setAttribute(c, "group", int64_t(4));
    setAttribute(c, "dilations", std::vector<int64_t>{2, 2});
    auto& p = b.node("AveragePool", {"c"}, {"p"});
    setAttribute(p, "kernel_shape", std::vector<int64_t>{3, 3});
    setAttribute(p, "pads", std::vector<int64_t>{1, 1, 1, 1});
    setAttribute(p, "count_include_pad", int64_t(1));
    b.initializer("scales", {4}, {1.f, 1.f, 2.f, 2.f});
    b.node("Resize", {"p", "", "scales"}, {"y"});
    b.output("y", 4);
    save(dir, "depthwise_pool_resize", b);
  }
  // Values that leave the image layout: Tensor kernels (issue #12).
  {  // NHWC Transpose, Softmax on axis 0, 3-D MatMul, Where with a comparison
    OnnxModelBuilder b(13);
    b.input("x", {2, 4, 6, 3});
    b.initializer("W", {3, 5}, ramp(15));
    b.initializer("zero", {1}, {0.f});
    auto& t = b.node("Transpose", {"x"}, {"t"});
    setAttribute(t, "perm", std::vector<int64_t>{0, 3, 1, 2});
    auto& s = b.node("Softmax", {"t"}, {"s"});
    setAttribute(s, "axis", int64_t(0));
    auto& back = b.node("Transpose", {"s"}, {"n"});
    setAttribute(back, "perm", std::vector<int64_t>{0, 2, 3, 1});
    b.initializerInt64("shape", {3}, {2, 24, 3});
    b.node("Reshape", {"n", "shape"}, {"r"});
    b.node("MatMul", {"r", "W"}, {"m"});
    b.node("Greater", {"m", "zero"}, {"g"});
    b.node("Where", {"g", "m", "zero"}, {"y"});
    b.output("y", 3);
    save(dir, "transpose_softmax_matmul_where", b);
  }
  {  // LayerNormalization over the channels of an NHWC view, Gather, ArgMax
    OnnxModelBuilder b(17);
    b.input("x", {1, 8, 4, 4});
    b.initializer("scale", {8}, ramp(8));
    b.initializer("bias", {8}, ramp(8));
    b.initializerInt64("idx", {2}, {3, -1});
    auto& t = b.node("Transpose", {"x"}, {"t"});
    setAttribute(t, "perm", std::vector<int64_t>{0, 2, 3, 1});
    auto& ln = b.node("LayerNormalization", {"t", "scale", "bias"}, {"l"});
    setAttribute(ln, "axis", int64_t(-1));
    setAttribute(ln, "epsilon", 1e-6f);
    auto& g = b.node("Gather", {"l", "idx"}, {"g"});
    setAttribute(g, "axis", int64_t(2));
    auto& a = b.node("ArgMax", {"g"}, {"a"});
    setAttribute(a, "axis", int64_t(3));
    setAttribute(b.node("Cast", {"a"}, {"y"}), "to", int64_t(onnx::TensorProto::FLOAT));
    b.output("y", 4);
    save(dir, "layernorm_gather_argmax", b);
  }
  {  // Reduce over every axis, Pad of the channels, cubic Resize by arbitrary scales, Gemm transA
    OnnxModelBuilder b(13);
    b.input("x", {1, 3, 5, 5});
    b.initializerInt64("pads", {8}, {0, 1, 0, 0, 0, 2, 0, 0});
    b.node("Pad", {"x", "pads"}, {"p"});
    b.initializer("scales", {4}, {1.f, 1.f, 0.7f, 1.3f});
    auto& r = b.node("Resize", {"p", "", "scales"}, {"z"});
    setAttribute(r, "mode", std::string("cubic"));
    auto& m = b.node("ReduceMean", {"z"}, {"m"});
    setAttribute(m, "keepdims", int64_t(1));
    auto& l2 = b.node("ReduceL2", {"z"}, {"q"});
    setAttribute(l2, "axes", std::vector<int64_t>{2, 3});
    b.node("Sub", {"q", "m"}, {"d"});
    b.initializerInt64("flat", {2}, {6, 1});
    b.node("Reshape", {"d", "flat"}, {"f"});
    b.initializer("B", {6, 4}, ramp(24));
    b.initializer("C", {1, 4}, ramp(4));
    auto& g = b.node("Gemm", {"f", "B", "C"}, {"y"});
    setAttribute(g, "transA", int64_t(1));
    b.output("y", 2);
    save(dir, "reduce_pad_resize_gemm", b);
  }
  {  // Nodes out of topological order (the importer sorts them), two branches joining
    OnnxModelBuilder b(13);
    b.input("x", {1, 2, 4, 4});
    b.node("Mul", {"s", "r"}, {"y"});
    b.node("Sigmoid", {"r"}, {"s"});
    b.node("Relu", {"x"}, {"r"});
    b.output("y", 4);
    save(dir, "unsorted_branches", b);
  }
  {  // A cycle behind a valid node (an error naming the cycle's nodes)
    OnnxModelBuilder b(13);
    b.input("x", {1, 2, 4, 4});
    b.node("Add", {"r", "c"}, {"a"}, "first");
    b.node("Relu", {"x"}, {"r"});
    b.node("Neg", {"a"}, {"c"}, "second");
    b.node("Abs", {"c"}, {"y"});
    b.output("y", 4);
    save(dir, "cycle", b);
  }
  return 0;
}
