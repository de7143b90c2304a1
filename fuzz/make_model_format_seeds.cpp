// Writes a few small .vkcnn files as seeds for fuzz_model_format (the files in
// fuzz/corpus/model_format are its output; rerun to regenerate them):
//   fuzz_make_model_format_seeds DIR
// One with weights of each kind and a graph section of node records (so that the fuzzer starts
// from the records a decoder reads), one with nothing but its provenance, one with an optional
// section of a kind no reader knows.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "archive/archive.h"
#include "vkcnn/error.h"

using namespace vkcnn::archive;

namespace {

Provenance provenance() {
  Provenance p;
  p.sourceName = "seed.onnx";
  p.sourceFormat = "onnx";
  p.sourceSize = 895;
  p.sourceHash = 0x5eed;
  p.opsets = {{"", 17}};
  p.producer = "make_model_format_seeds";
  p.compiler = "0.1.0";
  p.precision = "fp32";
  p.shapes = {{"input", {1, 3, 8, 8}}};
  p.batch = 1;
  return p;
}

std::vector<uint8_t> floats(size_t n) {
  std::vector<uint8_t> bytes(n * 4);
  for (size_t i = 0; i < n; ++i) {
    const float v = float(int(i % 7) - 3) * 0.125f;
    std::memcpy(bytes.data() + 4 * i, &v, 4);
  }
  return bytes;
}

void writeSeeds(const std::string& dir) {
  Writer conv(provenance());
  const uint32_t weight = conv.addWeight("conv.weight", WeightType::f32, {4, 3, 1, 1}, floats(12));
  const uint32_t bias = conv.addWeight("conv.bias", WeightType::f32, {4}, floats(4));
  conv.addWeight("shape", WeightType::i64, {2}, std::vector<uint8_t>(16, 1));
  conv.addWeight("scale", WeightType::f16, {3}, std::vector<uint8_t>(6, 0x3c), 0);
  conv.addWeight("packed", WeightType::f16, {4, 3}, std::vector<uint8_t>(32, 0x3c), 7);
  constexpr FieldKey kNodes{2, "node"}, kOp{1, "op"}, kWeight{2, "weight"}, kBias{3, "bias"},
      kStride{4, "stride"}, kPads{5, "pads"}, kAlpha{6, "alpha"}, kInputs{7, "input"};
  std::vector<RecordWriter> nodes(2);
  const std::vector<uint32_t> stride{1, 1};
  const std::vector<int32_t> pads{0, 0, 0, 0};
  RecordWriter inputs;
  inputs.tensor({1, "x"}, 5);
  nodes[0].u32(kOp, 1).tensor(kWeight, weight).tensor(kBias, bias).u32s(kStride, stride);
  nodes[0].i32s(kPads, pads).record(kInputs, inputs);
  const std::vector<uint32_t> outputs{6, 7};
  nodes[0].tensors({9, "output"}, outputs);
  nodes[1].u32(kOp, 2).f32(kAlpha, 0.1f).string({8, "name"}, "relu");
  RecordWriter graph;
  graph.records(kNodes, nodes);
  conv.addSection(uint32_t(SectionKind::graph), graph.finish());
  conv.write(dir + "/conv_relu.vkcnn");

  Writer(provenance()).write(dir + "/empty.vkcnn");

  Writer future(provenance());
  future.addWeight("w", WeightType::u8, {5}, {1, 2, 3, 4, 5});
  future.addSection(fourCc("NEXT"), {1, 2, 3, 4, 5, 6, 7, 8}, /*optional=*/true, 16);
  future.write(dir + "/optional_section.vkcnn");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  try {
    writeSeeds(argv[1]);
  } catch (const vkcnn::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
