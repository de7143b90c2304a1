// Throughput of a SessionPool (issue 45): one model on the first listed device alone, then on
// every listed device, the same batch of random inputs run back to back for a fixed time; prints
// images per second for each, their ratio, how the pieces were shared, and whether the outputs of
// the two pools are bit-identical. Not a test: it times, and means something only on a machine of
// several GPUs (scripts/bench-gpu.sh has no step for it yet; run it by hand there).
//   vkcnn-bench-pool MODEL --devices 0,1 [--piece 32] [--batch 128] [--seconds 10] [--fp32]
#include <vkcnn/session_pool.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

struct Arguments {
  std::string model;
  std::vector<std::string> devices{"0"};
  uint32_t piece = 32, batch = 128;
  double seconds = 10;
  bool fp32 = false;
};

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> parts;
  for (size_t at = 0; at <= list.size();) {
    const size_t comma = std::min(list.find(',', at), list.size());
    if (comma > at) parts.push_back(list.substr(at, comma - at));
    at = comma + 1;
  }
  return parts;
}

Arguments parse(int argc, char** argv) {
  Arguments a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--devices")
      a.devices = split(value());
    else if (arg == "--piece")
      a.piece = uint32_t(std::stoul(value()));
    else if (arg == "--batch")
      a.batch = uint32_t(std::stoul(value()));
    else if (arg == "--seconds")
      a.seconds = std::stod(value());
    else if (arg == "--fp32")
      a.fp32 = true;
    else if (a.model.empty() && arg.rfind("--", 0) != 0)
      a.model = arg;
    else
      throw std::runtime_error("unknown argument " + arg);
  }
  if (a.model.empty() || a.devices.empty() || !a.piece || a.batch % a.piece)
    throw std::runtime_error(
        "usage: vkcnn-bench-pool MODEL --devices 0,1 [--piece 32] [--batch 128 (a multiple of "
        "--piece)] [--seconds 10] [--fp32]");
  return a;
}

struct Measured {
  double imagesPerSecond = 0;
  std::map<std::string, vkcnn::HostTensor> outputs;
  std::string shares;
};

Measured measure(const Arguments& a, const std::vector<std::string>& devices) {
  using Clock = std::chrono::steady_clock;
  vkcnn::SessionPoolOptions options;
  options.devices = devices;
  options.pieceBatch = a.piece;
  options.session.precision =
      a.fp32 ? vkcnn::ChannelFormat::float32 : vkcnn::ChannelFormat::float16;
  vkcnn::SessionPool pool(a.model, options);
  std::map<std::string, vkcnn::HostTensor> inputs;
  std::mt19937 random(7);
  std::uniform_real_distribution<float> uniform(0, 1);
  const uint32_t pieces = a.batch / a.piece;
  for (const vkcnn::SessionTensorInfo& info : pool.inputs()) {
    vkcnn::HostTensor& t = inputs[info.name];
    t.shape = info.shape;
    t.shape[0] *= pieces;
    t.data.resize(info.elementCount * pieces);
    for (float& v : t.data) v = uniform(random);
  }
  Measured m;
  m.outputs = pool.run(inputs);  // warm-up: pipelines, recordings
  uint64_t runs = 0;
  const auto start = Clock::now();
  double elapsed = 0;
  while (elapsed < a.seconds) {
    pool.run(inputs);
    ++runs;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  }
  m.imagesPerSecond = runs * a.batch / elapsed;
  for (const vkcnn::SessionPoolDevice& d : pool.devices())
    m.shares += "  " + d.name + " (" + d.requested + "): " + std::to_string(d.pieces) +
                " pieces, " + std::to_string(int(d.imagesPerSecond)) + " images/s while busy\n";
  return m;
}

bool identical(const std::map<std::string, vkcnn::HostTensor>& a,
               const std::map<std::string, vkcnn::HostTensor>& b) {
  for (const auto& [name, t] : a) {
    const auto it = b.find(name);
    if (it == b.end() || it->second.data.size() != t.data.size() ||
        std::memcmp(t.data.data(), it->second.data.data(), t.data.size() * sizeof(float)))
      return false;
  }
  return a.size() == b.size();
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Arguments a = parse(argc, argv);
    const Measured one = measure(a, {a.devices[0]});
    std::printf("1 device: %.1f images/s\n%s", one.imagesPerSecond, one.shares.c_str());
    const Measured all = measure(a, a.devices);
    std::printf("%zu devices: %.1f images/s (%.2fx)\n%s", a.devices.size(), all.imagesPerSecond,
                all.imagesPerSecond / one.imagesPerSecond, all.shares.c_str());
    std::printf("outputs bit-identical: %s\n", identical(one.outputs, all.outputs) ? "yes" : "no");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vkcnn-bench-pool: %s\n", e.what());
    return 1;
  }
}
