// libFuzzer target: the .dat weight loader through the public Convolution::fromDatFiles and
// FullyConnected::fromDatFiles. The input picks one of a few small fixed descriptors and is split
// into a weights file and an optional bias file; the files' sizes are checked against the
// descriptor (Error(io) when they differ), their contents (NaN, inf, denormals) go to the device.
// Only vkcnn::Error may come out.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "fuzz_common.h"
#include "vkcnn/convolution.h"
#include "vkcnn/error.h"

namespace {

std::string tempPath(const char* what) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/vkcnn-fuzz-dat-" + std::to_string(getpid()) +
         "-" + what;
}

void writeFile(const std::string& path, const uint8_t* data, size_t size) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  vkcnn::Context& context = vkcnn::fuzz::context();
  const uint8_t mode = data[0];
  // Weights take the bytes up to the split point (a 16-bit little-endian offset), bias the rest.
  size_t split = size - 2;
  if (size >= 3) split = std::min<size_t>(size - 3, data[1] | (size_t(data[2]) << 8));
  const uint8_t* body = data + (size >= 3 ? 3 : 2);
  const size_t bodySize = size - (size >= 3 ? 3 : 2);
  split = std::min(split, bodySize);

  vkcnn::ConvolutionDescriptor d;
  switch (mode & 3) {
    case 0:
      d = vkcnn::ConvolutionDescriptor::make(3, 3, 2, 3);
      break;  // 54 weights
    case 1:
      d = vkcnn::ConvolutionDescriptor::make(1, 1, 5, 4);
      break;  // 20 weights
    case 2:
      d = vkcnn::ConvolutionDescriptor::depthwise(3, 3, 4, 1);
      break;  // 36 weights
    default:
      d = vkcnn::ConvolutionDescriptor::make(2, 2, 3, 2);
      break;  // FC, 24
  }
  if (mode & 4) d.setNeuronType(vkcnn::NeuronType::relu);

  const std::string weights = tempPath("weights.dat"), bias = tempPath("bias.dat");
  writeFile(weights, body, split);
  const bool withBias = mode & 8;
  if (withBias) writeFile(bias, body + split, bodySize - split);
  try {
    if ((mode & 3) == 3)
      vkcnn::FullyConnected::fromDatFiles(context, d, weights, withBias ? bias : std::string());
    else
      vkcnn::Convolution::fromDatFiles(context, d, weights, withBias ? bias : std::string());
  } catch (const vkcnn::Error&) {
  }
  std::remove(weights.c_str());
  if (withBias) std::remove(bias.c_str());
  return 0;
}
