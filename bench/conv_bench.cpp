// vkcnn-bench-conv: the per-shape convolution benchmark of issue #11 (driven by
// scripts/bench/conv_shapes.py on the GPU machine), and the GEMM ceiling.
//
//   vkcnn-bench-conv conv SHAPES --fp16|--fp32 [--iterations N] [--tiles auto,NAME,...]
//                             [--neuron relu|none|relu6|silu] [--pieces] [--batch]
//                             [--residual] [--warmup SECONDS] [--cold]
//     SHAPES: one convolution a line, "name n c h w k kh kw sh sw ph pw dh dw groups"
//     (PyTorch's conv2d geometry, symmetric padding). Prints one JSON object a line: the median
//     and minimum GPU time of the convolution (the sum of its dispatches when the batch needs
//     several because of the layer limit), from timestamps around each dispatch.
//     --tiles times each shape once per configuration: auto (the selector's choice) or one that
//     VKCNN_CONVOLUTION_TILE forces (convolution.cpp; tile names in convolution_tiles.h).
//     --neuron: the fused neuron (ReLU unless said), to see what the epilogue costs.
//     --pieces: where the layer limit splits the batch, also the wall time of its pieces run
//     one after another, side by side (Convolution::imagesSideBySide set to the batch, one encode
//     a piece), and through Convolution::encodeBatch as a Graph runs them (one dispatch where
//     convolution_tiled_pieces can), without timestamps.
//     --batch: times each configuration as a Graph runs the layer: a split batch's pieces, each
//     its own images, through Convolution::encodeBatch, with timestamps at the barriers only
//     (CommandBufferOptions::profileLevels) so that the pieces run side by side as they do
//     there. What the cost model's choice meets inside a network; without it, one dispatch a
//     piece, each timed alone.
//     --residual: a residual added before the neuron (a bottleneck block's last convolution).
//     --warmup: each configuration runs at least this long (0.1 s) right before its timed round,
//     its pipeline built beforehand, so that the GPU's clocks have not dropped when it is timed.
//     With three configurations a shape it hardly mattered (within 2%); with one, every shape
//     timed up to 2.5x slow without it (bench/DECISIONS.md#bench-warmup).
//     --cold: a 256 MiB fill before each timed encode, so that its weights and source come from
//     DRAM as inside a network (CacheFlush below).
//   vkcnn-bench-conv gemm SPIRV M N K [--iterations N] [--modes 0,1,2,3]
//                             [--gemm-tiles WMxWN/FMxFN/KSTEPS;...] [--warmup SECONDS]
//     Times bench/gemm_ceiling.comp (its SPIR-V file) on every tile of convolution_tiles.h (or
//     the tiles given) for C[M][N] = A[M][K] B[K][N] from storage buffers, and checks a sample of
//     C against the CPU. --modes: the shader's MODE, which takes the global loads, the barriers,
//     the fragment loads away in turn (gemm_ceiling.comp) to show what each costs. Each
//     configuration runs --warmup seconds (0.4) before the timed round; MODE 4 reads B as
//     [N][K], 8 pipelines the fragment loads, 16 re-walks the workgroups, 32 + P << 6 + S << 10
//     adds P producer warps feeding a ring of S stages (gemm_ceiling.comp).
//
// Random inputs and weights (never zeros: METHOD.md); timings are GPU timestamps, medians of N.
#include <dlfcn.h>
#include <vkcnn/vkcnn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "convolution_tiles.h"

#include "memory/half.h"

using namespace vkcnn;

namespace {

struct Shape {
  std::string name;
  uint32_t n, c, h, w, k, kh, kw, sh, sw, ph, pw, dh, dw, groups;
};

std::vector<float> randomFloats(size_t count, uint32_t seed, float scale) {
  std::vector<float> v(count);
  uint32_t s = seed * 2654435761u + 1;
  for (float& x : v) {
    s ^= s << 13, s ^= s >> 17, s ^= s << 5;
    x = scale * (float(s >> 8) * (2.0f / 16777216.0f) - 1.0f);
  }
  return v;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// The loader vkcnn opened (volk), opened again for its entry point: the benchmark records a few
// commands of its own.
PFN_vkGetInstanceProcAddr instanceProcAddr() {
  void* loader = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!loader) throw std::runtime_error("cannot open libvulkan.so.1");
  return reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(loader, "vkGetInstanceProcAddr"));
}

// --cold: the weights and the source come from DRAM, as inside a network. In vgg16 at batch 1
// fc6's 205 MB evict L2 every inference, and its 3x3 512->512 @28² layers took 122 us each there
// against 89 alone with L2 warm (bench/DECISIONS.md#bench-cold). A 256 MiB fill before
// each timed encode, between full barriers so that it overlaps nothing timed.
class CacheFlush {
 public:
  static constexpr VkDeviceSize kBytes = VkDeviceSize(256) << 20;
  explicit CacheFlush(const Context& context) : buffer_(context, size_t(kBytes), "cache flush") {
    auto gipa = instanceProcAddr();
    auto gdpa = reinterpret_cast<PFN_vkGetDeviceProcAddr>(
        gipa(context.vkInstance(), "vkGetDeviceProcAddr"));
    fill_ = reinterpret_cast<PFN_vkCmdFillBuffer>(gdpa(context.vkDevice(), "vkCmdFillBuffer"));
    barrier_ = reinterpret_cast<PFN_vkCmdPipelineBarrier>(
        gdpa(context.vkDevice(), "vkCmdPipelineBarrier"));
    if (!fill_ || !barrier_) throw std::runtime_error("no vkCmdFillBuffer / vkCmdPipelineBarrier");
  }
  void record(CommandBuffer& cb) {
    const VkCommandBuffer c = cb.vkCommandBuffer();
    VkMemoryBarrier all{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    all.srcAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
    all.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
    barrier_(c, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &all,
             0, nullptr, 0, nullptr);
    fill_(c, buffer_.vkBuffer(), buffer_.vkOffset(), kBytes, ++value_);
    barrier_(c, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &all,
             0, nullptr, 0, nullptr);
  }

 private:
  Buffer buffer_;
  PFN_vkCmdFillBuffer fill_ = nullptr;
  PFN_vkCmdPipelineBarrier barrier_ = nullptr;
  uint32_t value_ = 0;
};

int benchConvolutions(const std::string& path, ChannelFormat format, int iterations,
                      const std::vector<std::string>& tiles, const NeuronDescriptor& neuron,
                      bool pieces, bool asBatch, bool withResidual, double warmupSeconds,
                      bool cold) {
  Context context;
  std::optional<CacheFlush> flush;
  if (cold) flush.emplace(context);
  std::ifstream in(path);
  if (!in) {
    std::cerr << "cannot read " << path << "\n";
    return 1;
  }
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    Shape s;
    ls >> s.name >> s.n >> s.c >> s.h >> s.w >> s.k >> s.kh >> s.kw >> s.sh >> s.sw >> s.ph >>
        s.pw >> s.dh >> s.dw >> s.groups;
    if (!ls) {
      std::cerr << "bad line: " << line << "\n";
      return 1;
    }
    try {
      ConvolutionDescriptor d = ConvolutionDescriptor::make(s.kw, s.kh, s.c, s.k);
      d.strideInPixelsX = s.sw, d.strideInPixelsY = s.sh;
      d.dilationRateX = s.dw, d.dilationRateY = s.dh;
      d.groups = s.groups;
      d.neuron = neuron;
      d.destinationFormat = format;  // as a Graph sets it (float32 kernels keep no float16 copies)
      const double fanIn = double(s.kh) * s.kw * (s.c / s.groups);
      const std::vector<float> weights =
          randomFloats(d.weightCount(), 7, float(1.5 / std::sqrt(fanIn)));
      const std::vector<float> bias = randomFloats(s.k, 9, 0.1f);
      // Winograd's transformed weights are made with the kernel where a configuration may force
      // it; the selector ("auto") then also sees them, as where a network's layer keeps them.
      const bool winograd = std::find(tiles.begin(), tiles.end(), "winograd") != tiles.end();
      if (winograd) setenv("VKCNN_CONVOLUTION_TILE", "winograd", 1);
      Convolution conv(context, d, weights, bias);
      if (winograd) unsetenv("VKCNN_CONVOLUTION_TILE");
      conv.padding = Padding::explicitPadding(s.ph, s.pw, s.ph, s.pw);
      const uint32_t ow = conv.destinationWidth(s.w), oh = conv.destinationHeight(s.h);
      // The layer limit splits large batches, as the Graph does.
      const uint32_t chunk = std::min(
          {s.n, Image::maxNumberOfImages(context, s.c), Image::maxNumberOfImages(context, s.k)});
      const uint32_t dispatches = (s.n + chunk - 1) / chunk;
      Image source(context, {s.w, s.h, s.c, chunk, format, ImageUsage::all, "x"});
      Image destination(context, {ow, oh, s.k, chunk, format, ImageUsage::all, "y"});
      const std::vector<float> x = randomFloats(size_t(s.w) * s.h * s.c, 3, 1.0f);
      for (uint32_t i = 0; i < chunk; ++i)
        source.writeFloats(x, DataLayout::HeightxWidthxFeatureChannels, i);
      Image residual;
      if (withResidual) {
        residual = Image(context, {ow, oh, s.k, chunk, format, ImageUsage::all, "residual"});
        const std::vector<float> r = randomFloats(size_t(ow) * oh * s.k, 5, 1.0f);
        for (uint32_t i = 0; i < chunk; ++i)
          residual.writeFloats(r, DataLayout::HeightxWidthxFeatureChannels, i);
      }
      const auto encode = [&](CommandBuffer& cb, const Image& from, const Image& to) {
        if (withResidual)
          conv.encodeWithResidual(cb, from, residual, to);
        else
          conv.encode(cb, from, to);
      };
      // --batch: every piece its own images, as a Graph holds them.
      std::vector<Image> batchSources, batchDestinations;
      for (uint32_t i = 0; asBatch && i < dispatches; ++i) {
        batchSources.emplace_back(
            context, ImageDescriptor{s.w, s.h, s.c, chunk, format, ImageUsage::all, "x"});
        for (uint32_t j = 0; j < chunk; ++j)
          batchSources.back().writeFloats(x, DataLayout::HeightxWidthxFeatureChannels, j);
        batchDestinations.emplace_back(
            context, ImageDescriptor{ow, oh, s.k, chunk, format, ImageUsage::all, "y"});
      }
      const std::vector<Image> batchResiduals(withResidual && asBatch ? dispatches : 0, residual);
      // One round: the whole batch.
      const auto encodeRound = [&](CommandBuffer& cb) {
        if (asBatch)
          conv.encodeBatch(cb, batchSources, batchDestinations, batchResiduals);
        else
          for (uint32_t i = 0; i < dispatches; ++i) encode(cb, source, destination);
      };
      const double flops = 2.0 * s.n * ow * oh * s.k * s.kh * s.kw * (s.c / s.groups);
      // Clocks may still be rising after a warm-up (seen on the H100 for the largest shapes):
      // the first configuration is timed again after the others and reported at its faster.
      std::vector<std::string> order = tiles;
      order.push_back(tiles.front());
      std::vector<double> firstTimes;
      for (size_t o = 0; o < order.size(); ++o) {
        const std::string& tile = order[o];
        if (tile == "auto")
          unsetenv("VKCNN_CONVOLUTION_TILE");
        else
          setenv("VKCNN_CONVOLUTION_TILE", tile.c_str(), 1);
        const int warmup = 3;
        CommandBufferOptions options;
        options.profile = true;
        options.profileLevels = asBatch;
        CommandBuffer cb(context, "bench", options);
        for (int r = 0; r < warmup + iterations; ++r) {
          if (flush) flush->record(cb);
          encodeRound(cb);
        }
        // Recorded (its pipeline built) before the warm-up, which runs the same configuration
        // until the moment the timed round is submitted behind it.
        CommandBufferOptions again;
        again.reusable = true;
        CommandBuffer warm(context, "warm-up", again);
        for (int r = 0; r < 4; ++r) encodeRound(warm);
        const auto warmStart = std::chrono::steady_clock::now();
        do {
          warm.commit();
          warm.waitUntilCompleted();
        } while (
            std::chrono::duration<double>(std::chrono::steady_clock::now() - warmStart).count() <
            warmupSeconds);
        warm.commit();
        cb.commit();
        warm.waitUntilCompleted();
        cb.waitUntilCompleted();
        const std::vector<KernelTiming> timings = cb.kernelTimings();
        // An encode may record several dispatches (Winograd: two transforms around the GEMMs);
        // with --batch a round is one or more barrier levels.
        const size_t perEncode =
            timings.size() / (size_t(warmup + iterations) * (asBatch ? 1 : dispatches));
        const size_t perRound = perEncode * (asBatch ? 1 : dispatches);
        std::vector<double> perRun;
        for (int r = warmup; r < warmup + iterations; ++r) {
          double sum = 0;
          for (size_t i = 0; i < perRound; ++i) sum += timings.at(r * perRound + i).milliseconds;
          perRun.push_back(sum);
        }
        double med = median(perRun);
        // Where an encode records several dispatches, each one's median (the first piece's).
        std::string parts;
        for (size_t i = 0; perEncode > 1 && i < perEncode; ++i) {
          std::vector<double> part;
          for (int r = warmup; r < warmup + iterations; ++r)
            part.push_back(timings.at(r * perRound + i).milliseconds);
          parts += (i ? ", " : "") + std::to_string(median(part));
        }
        if (o == 0 || o + 1 == order.size()) firstTimes.push_back(med);
        if (o == 0) continue;
        if (o + 1 == order.size()) med = *std::min_element(firstTimes.begin(), firstTimes.end());
        // The dispatch's label names the configuration the selector chose (the profile shows it).
        std::printf(
            "{\"name\": \"%s\", \"tile\": \"%s\", \"ms\": %.6f, \"min_ms\": %.6f, "
            "\"tflops\": %.3f, \"dispatches\": %u, \"parts_ms\": [%s], \"config\": \"%s\"}\n",
            s.name.c_str(), tile.c_str(), med, *std::min_element(perRun.begin(), perRun.end()),
            flops / (med * 1e-3) / 1e12, dispatches, parts.c_str(),
            timings.at(warmup * perRound).label.c_str());
        std::fflush(stdout);
      }
      if (pieces && dispatches > 1) {
        // The batch in `dispatches` pieces as a Graph runs them: each piece its own images, no
        // barrier between pieces ("concurrent"), against every piece into one destination, each
        // waiting for the one before ("serial"). Wall time of a reusable command buffer of
        // `rounds` such rounds, no timestamps (they would serialise the pieces too). Once per
        // configuration of --tiles.
        std::vector<Image> sources, destinations;
        for (uint32_t i = 0; i < dispatches; ++i) {
          sources.emplace_back(context,
                               ImageDescriptor{s.w, s.h, s.c, chunk, format, ImageUsage::all, "x"});
          for (uint32_t j = 0; j < chunk; ++j)
            sources.back().writeFloats(x, DataLayout::HeightxWidthxFeatureChannels, j);
          destinations.emplace_back(
              context, ImageDescriptor{ow, oh, s.k, chunk, format, ImageUsage::all, "y"});
        }
        for (const std::string& tile : tiles) {
          if (tile == "auto")
            unsetenv("VKCNN_CONVOLUTION_TILE");
          else
            setenv("VKCNN_CONVOLUTION_TILE", tile.c_str(), 1);
          double ms[3] = {0, 0, 0};
          std::string batchConfiguration;
          for (int concurrent = 0; concurrent < 3; ++concurrent) {
            const int rounds = 20;
            CommandBufferOptions options;
            options.reusable = true;
            CommandBuffer cb(context, "pieces", options);
            // Side by side the configuration is chosen for every piece at once, as a Graph does.
            conv.imagesSideBySide = concurrent == 1 ? s.n : 0;
            const std::vector<Image> residuals(withResidual ? dispatches : 0, residual);
            for (int r = 0; r < rounds; ++r)
              if (concurrent == 2)
                conv.encodeBatch(cb, sources, destinations, residuals);
              else
                for (uint32_t i = 0; i < dispatches; ++i)
                  encode(cb, sources[i], destinations[concurrent ? i : 0]);
            conv.imagesSideBySide = 0;
            if (concurrent == 2) batchConfiguration = conv.configuration();
            std::vector<double> runs;
            for (int repeat = 0; repeat < 9; ++repeat) {
              const auto start = std::chrono::steady_clock::now();
              cb.commit();
              cb.waitUntilCompleted();
              runs.push_back(std::chrono::duration<double, std::milli>(
                                 std::chrono::steady_clock::now() - start)
                                 .count() /
                             rounds);
            }
            runs.erase(runs.begin(), runs.begin() + 2);  // the first submissions warm up
            ms[concurrent] = median(runs);
          }
          std::printf(
              "{\"name\": \"%s\", \"pieces\": %u, \"pieces_tile\": \"%s\", "
              "\"images_per_piece\": %u, \"serial_ms\": %.6f, \"concurrent_ms\": %.6f, "
              "\"batch_ms\": %.6f, \"batch_config\": \"%s\"}\n",
              s.name.c_str(), dispatches, tile.c_str(), chunk, ms[0], ms[1], ms[2],
              batchConfiguration.c_str());
          std::fflush(stdout);
        }
        unsetenv("VKCNN_CONVOLUTION_TILE");
      }
    } catch (const std::exception& e) {
      std::printf("{\"name\": \"%s\", \"error\": \"%s\"}\n", s.name.c_str(), e.what());
      std::fflush(stdout);
    }
  }
  return 0;
}

// ---- GEMM ceiling: raw Vulkan on the Context's device ------------------------------------------

struct Vk {
#define VKFN(name) PFN_##name name = nullptr;
// clang-format off (it does not keep a list of macro calls stable: each run indents it anew)
#define VK_FUNCTIONS                  \
  VKFN(vkCreateBuffer)                \
  VKFN(vkDestroyBuffer)               \
  VKFN(vkGetBufferMemoryRequirements) \
  VKFN(vkAllocateMemory)              \
  VKFN(vkFreeMemory)                  \
  VKFN(vkBindBufferMemory)            \
  VKFN(vkMapMemory)                   \
  VKFN(vkUnmapMemory)                 \
  VKFN(vkCreateShaderModule)          \
  VKFN(vkDestroyShaderModule)         \
  VKFN(vkCreateDescriptorSetLayout)   \
  VKFN(vkDestroyDescriptorSetLayout)  \
  VKFN(vkCreatePipelineLayout)        \
  VKFN(vkDestroyPipelineLayout)       \
  VKFN(vkCreateComputePipelines)      \
  VKFN(vkDestroyPipeline)             \
  VKFN(vkCreateDescriptorPool)        \
  VKFN(vkDestroyDescriptorPool)       \
  VKFN(vkAllocateDescriptorSets)      \
  VKFN(vkUpdateDescriptorSets)        \
  VKFN(vkCreateCommandPool)           \
  VKFN(vkDestroyCommandPool)          \
  VKFN(vkAllocateCommandBuffers)      \
  VKFN(vkBeginCommandBuffer)          \
  VKFN(vkEndCommandBuffer)            \
  VKFN(vkCmdBindPipeline)             \
  VKFN(vkCmdBindDescriptorSets)       \
  VKFN(vkCmdPushConstants)            \
  VKFN(vkCmdDispatch)                 \
  VKFN(vkCmdWriteTimestamp)           \
  VKFN(vkCreateQueryPool)             \
  VKFN(vkDestroyQueryPool)            \
  VKFN(vkCmdResetQueryPool)           \
  VKFN(vkGetQueryPoolResults)         \
  VKFN(vkQueueSubmit)                 \
  VKFN(vkQueueWaitIdle)
  // clang-format on
  VK_FUNCTIONS
#undef VKFN
  PFN_vkGetPhysicalDeviceMemoryProperties vkGetPhysicalDeviceMemoryProperties = nullptr;
};

void check(VkResult r, const char* what) {
  if (r != VK_SUCCESS)
    throw std::runtime_error(std::string(what) + " failed: " + std::to_string(r));
}

using vkcnn::detail::floatToHalf;  // engine/src/memory/half.h
using vkcnn::detail::halfToFloat;

int benchGemm(const std::string& spirvPath, uint32_t M, uint32_t N, uint32_t K, int iterations,
              const std::vector<int>& modes, std::vector<detail::MatrixTile> tiles,
              double warmupSeconds) {
  Context context;
  if (!context.capabilities().matrixUnits) {
    std::cerr << "gemm: the device has no matrix units vkcnn uses\n";
    return 1;
  }
  std::printf("{\"device\": \"%s\", \"multiprocessors\": %u}\n",
              context.capabilities().deviceName.c_str(),
              context.capabilities().multiprocessorCount);
  std::ifstream f(spirvPath, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), {});
  if (bytes.empty() || bytes.size() % 4) {
    std::cerr << "cannot read SPIR-V " << spirvPath << "\n";
    return 1;
  }
  VkInstance instance = context.vkInstance();
  VkDevice device = context.vkDevice();
  auto vkGetInstanceProcAddr = instanceProcAddr();
  auto gdpa = reinterpret_cast<PFN_vkGetDeviceProcAddr>(
      vkGetInstanceProcAddr(instance, "vkGetDeviceProcAddr"));
  Vk vk;
#define VKFN(name) vk.name = reinterpret_cast<PFN_##name>(gdpa(device, #name));
  VK_FUNCTIONS
#undef VKFN
  vk.vkGetPhysicalDeviceMemoryProperties =
      reinterpret_cast<PFN_vkGetPhysicalDeviceMemoryProperties>(
          vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceMemoryProperties"));
  VkPhysicalDeviceMemoryProperties mp;
  vk.vkGetPhysicalDeviceMemoryProperties(context.vkPhysicalDevice(), &mp);

  // Host-visible device-local memory (ReBAR on the H100) keeps this short; else host memory.
  struct Buf {
    VkBuffer buffer;
    VkDeviceMemory memory;
    void* map;
  };
  auto makeBuffer = [&](VkDeviceSize size) {
    Buf b{};
    VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.size = size;
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    check(vk.vkCreateBuffer(device, &bi, nullptr, &b.buffer), "vkCreateBuffer");
    VkMemoryRequirements req;
    vk.vkGetBufferMemoryRequirements(device, b.buffer, &req);
    int type = -1;
    for (VkMemoryPropertyFlags want :
         {VkMemoryPropertyFlags(VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT |
                                VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                VK_MEMORY_PROPERTY_HOST_COHERENT_BIT),
          VkMemoryPropertyFlags(VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)}) {
      for (uint32_t i = 0; i < mp.memoryTypeCount && type < 0; ++i)
        if ((req.memoryTypeBits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want &&
            mp.memoryHeaps[mp.memoryTypes[i].heapIndex].size > 2 * req.size)
          type = int(i);
      if (type >= 0) break;
    }
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = uint32_t(type);
    check(vk.vkAllocateMemory(device, &ai, nullptr, &b.memory), "vkAllocateMemory");
    check(vk.vkBindBufferMemory(device, b.buffer, b.memory, 0), "vkBindBufferMemory");
    check(vk.vkMapMemory(device, b.memory, 0, VK_WHOLE_SIZE, 0, &b.map), "vkMapMemory");
    return b;
  };
  Buf a = makeBuffer(VkDeviceSize(M) * K * 2), b = makeBuffer(VkDeviceSize(K) * N * 2),
      c = makeBuffer(VkDeviceSize(M) * N * 4);
  {
    const std::vector<float> av = randomFloats(size_t(M) * K, 1, 1.0f),
                             bv = randomFloats(size_t(K) * N, 2, 1.0f);
    auto* ah = static_cast<uint16_t*>(a.map);
    auto* bh = static_cast<uint16_t*>(b.map);
    for (size_t i = 0; i < av.size(); ++i) ah[i] = floatToHalf(av[i]);
    for (size_t i = 0; i < bv.size(); ++i) bh[i] = floatToHalf(bv[i]);
  }

  VkDescriptorSetLayoutBinding bindings[3];
  for (uint32_t i = 0; i < 3; ++i)
    bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo sli{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  sli.bindingCount = 3;
  sli.pBindings = bindings;
  VkDescriptorSetLayout setLayout;
  check(vk.vkCreateDescriptorSetLayout(device, &sli, nullptr, &setLayout), "set layout");
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, 12};
  VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pli.setLayoutCount = 1;
  pli.pSetLayouts = &setLayout;
  pli.pushConstantRangeCount = 1;
  pli.pPushConstantRanges = &range;
  VkPipelineLayout layout;
  check(vk.vkCreatePipelineLayout(device, &pli, nullptr, &layout), "pipeline layout");
  VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 3};
  VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  dpi.maxSets = 1;
  dpi.poolSizeCount = 1;
  dpi.pPoolSizes = &ps;
  VkDescriptorPool pool;
  check(vk.vkCreateDescriptorPool(device, &dpi, nullptr, &pool), "descriptor pool");
  VkDescriptorSetAllocateInfo dsa{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  dsa.descriptorPool = pool;
  dsa.descriptorSetCount = 1;
  dsa.pSetLayouts = &setLayout;
  VkDescriptorSet set;
  check(vk.vkAllocateDescriptorSets(device, &dsa, &set), "descriptor set");
  VkDescriptorBufferInfo infos[3] = {
      {a.buffer, 0, VK_WHOLE_SIZE}, {b.buffer, 0, VK_WHOLE_SIZE}, {c.buffer, 0, VK_WHOLE_SIZE}};
  VkWriteDescriptorSet writes[3];
  for (uint32_t i = 0; i < 3; ++i) {
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = set;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  vk.vkUpdateDescriptorSets(device, 3, writes, 0, nullptr);
  VkShaderModuleCreateInfo smi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  smi.codeSize = bytes.size();
  smi.pCode = reinterpret_cast<const uint32_t*>(bytes.data());
  VkShaderModule module;
  check(vk.vkCreateShaderModule(device, &smi, nullptr, &module), "shader module");
  VkCommandPoolCreateInfo cpi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cpi.queueFamilyIndex = context.queueFamilyIndex();
  VkCommandPool commandPool;
  check(vk.vkCreateCommandPool(device, &cpi, nullptr, &commandPool), "command pool");
  VkQueryPoolCreateInfo qpi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  qpi.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qpi.queryCount = 2 * uint32_t(iterations + 5);
  VkQueryPool queries;
  check(vk.vkCreateQueryPool(device, &qpi, nullptr, &queries), "query pool");

  if (tiles.empty()) tiles.assign(std::begin(detail::kMatrixTiles), std::end(detail::kMatrixTiles));
  std::vector<std::pair<detail::MatrixTile, int>> runs;  // every tile in every mode
  for (const detail::MatrixTile& tile : tiles)
    for (const int mode : modes) runs.emplace_back(tile, mode);
  for (const auto& [tile, mode] : runs) {
    const uint32_t tileM = tile.warpsM * tile.fragmentsM * 16,
                   tileN = tile.warpsN * tile.fragmentsN * 16;
    // MODE + 32 (gemm_ceiling.comp): producer warps beside the tile's, and a ring of stages.
    const bool specialized = (mode & 32) != 0;
    const uint32_t producers = specialized ? (uint32_t(mode) >> 6) & 15 : 0;
    const uint32_t stages = specialized ? (uint32_t(mode) >> 10) & 7 : 2;
    const uint32_t threads = 32 * (tile.warpsM * tile.warpsN + producers);
    // The ceiling has no register prefetch of its own (convolution_tiled.glsl's PREFETCH).
    // Nor a guard for weight rows narrower than its workgroup (the 128x16 tile).
    const uint32_t loaders = specialized ? 32 * producers : tile.threads();
    if (tile.prefetch != 1 || M % tileM || N % tileN || K % (16 * tile.kSteps) ||
        (specialized && (producers == 0 || stages < 2 || (mode & 3) > 1)) ||
        (tile.kSteps * 16 * tileN / 8) % loaders || (tile.kSteps * 16 * tileM / 8) % loaders ||
        stages * (tileM * (tile.kSteps * 32 + 16) + tile.depth() * (tileN * 2 + 16)) >
            context.capabilities().maxComputeSharedMemorySize) {
      if (tile.prefetch == 1)
        std::printf(
            "{\"gemm\": \"%s\", \"warps\": \"%ux%u\", \"fragments\": \"%ux%u\", "
            "\"skipped\": \"the shader cannot run it on %ux%ux%u\"}\n",
            tile.name, tile.warpsM, tile.warpsN, tile.fragmentsM, tile.fragmentsN, M, N, K);
      continue;
    }
    const int32_t spec[7] = {int32_t(tile.warpsM),
                             int32_t(tile.warpsN),
                             int32_t(tile.fragmentsM),
                             int32_t(tile.fragmentsN),
                             int32_t(tile.kSteps),
                             int32_t(threads),
                             int32_t(mode)};
    VkSpecializationMapEntry entries[7];
    for (uint32_t i = 0; i < 7; ++i) entries[i] = {i, i * 4, 4};
    VkSpecializationInfo si{7, entries, sizeof spec, spec};
    VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    ci.stage.module = module;
    ci.stage.pName = "main";
    ci.stage.pSpecializationInfo = &si;
    ci.layout = layout;
    VkPipeline pipeline;
    const auto compileStart = std::chrono::steady_clock::now();
    check(vk.vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &ci, nullptr, &pipeline),
          "pipeline");
    const double compileSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - compileStart).count();
    std::memset(c.map, 0xff, size_t(M) * N * 4);  // NaN poison
    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = commandPool;
    cai.commandBufferCount = 1;
    VkCommandBuffer cmd;
    check(vk.vkAllocateCommandBuffers(device, &cai, &cmd), "command buffer");
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    vk.vkBeginCommandBuffer(cmd, &begin);
    vk.vkCmdResetQueryPool(cmd, queries, 0, qpi.queryCount);
    vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    vk.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, nullptr);
    const int32_t push[3] = {int32_t(M), int32_t(N), int32_t(K)};
    vk.vkCmdPushConstants(cmd, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 12, push);
    // Each dispatch overwrites C with the same values: no barrier is needed between them, and
    // none is wanted (it would add a drain to the time).
    for (int r = 0; r < iterations + 5; ++r) {
      vk.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries, 2 * r);
      vk.vkCmdDispatch(cmd, M / tileM, N / tileN, 1);
      vk.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries, 2 * r + 1);
    }
    check(vk.vkEndCommandBuffer(cmd), "end");
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cmd;
    // The same command buffer again and again until the clocks have had `warmupSeconds` of
    // this work (a short warm-up left them anywhere between 345 and 1980 MHz); the last
    // submission is the one timed.
    const auto warmStart = std::chrono::steady_clock::now();
    int submissions = 0;
    do {
      check(vk.vkQueueSubmit(context.vkQueue(), 1, &submit, VK_NULL_HANDLE), "submit");
      check(vk.vkQueueWaitIdle(context.vkQueue()), "wait");
      ++submissions;
    } while (std::chrono::duration<double>(std::chrono::steady_clock::now() - warmStart).count() <
                 warmupSeconds ||
             submissions < 2);
    std::fprintf(stderr, "%s %ux%u/%ux%u/%u mode %d: pipeline %.2f s, %d submissions\n", tile.name,
                 tile.warpsM, tile.warpsN, tile.fragmentsM, tile.fragmentsN, tile.kSteps, mode,
                 compileSeconds, submissions);
    std::vector<uint64_t> stamps(qpi.queryCount);
    check(vk.vkGetQueryPoolResults(device, queries, 0, qpi.queryCount, stamps.size() * 8,
                                   stamps.data(), 8, VK_QUERY_RESULT_64_BIT),
          "query results");
    std::vector<double> ms;
    for (int r = 5; r < iterations + 5; ++r)
      ms.push_back(double(stamps[2 * r + 1] - stamps[2 * r]) *
                   context.capabilities().timestampPeriodNs * 1e-6);
    // A sample of C against float64 on the CPU (relative L2 over 256 entries).
    const auto* ah = static_cast<const uint16_t*>(a.map);
    const auto* bh = static_cast<const uint16_t*>(b.map);
    const auto* ch = static_cast<const float*>(c.map);
    double err = 0, norm = 0;
    std::mt19937 rng(5);
    for (int s = 0; s < ((mode & 3) == 0 ? 256 : 0); ++s) {
      const uint32_t i = rng() % M, j = rng() % N;
      double ref = 0;
      for (uint32_t k = 0; k < K; ++k)
        ref += double(halfToFloat(ah[size_t(i) * K + k])) *
               halfToFloat(bh[mode & 4 ? size_t(j) * K + k : size_t(k) * N + j]);
      const double got = ch[size_t(i) * N + j];
      err += (got - ref) * (got - ref);
      norm += ref * ref;
    }
    const double med = median(ms);
    // Only modes without parts taken away (mode & 3 == 0) compute A x B; the others say null.
    const std::string relL2 =
        (mode & 3) == 0 ? std::to_string(std::sqrt(err / std::max(norm, 1e-300))) : "null";
    std::printf(
        "{\"gemm\": \"%s\", \"warps\": \"%ux%u\", \"fragments\": \"%ux%u\", \"k\": %u, "
        "\"mode\": %d, \"M\": %u, \"N\": %u, \"K\": %u, \"ms\": %.6f, \"tflops\": %.2f, "
        "\"rel_l2\": %s}\n",
        tile.name, tile.warpsM, tile.warpsN, tile.fragmentsM, tile.fragmentsN, tile.depth(), mode,
        M, N, K, med, 2.0 * M * N * K / (med * 1e-3) / 1e12, relL2.c_str());
    std::fflush(stdout);
    vk.vkDestroyPipeline(device, pipeline, nullptr);
  }
  vk.vkDestroyQueryPool(device, queries, nullptr);
  vk.vkDestroyCommandPool(device, commandPool, nullptr);
  vk.vkDestroyShaderModule(device, module, nullptr);
  vk.vkDestroyDescriptorPool(device, pool, nullptr);
  vk.vkDestroyPipelineLayout(device, layout, nullptr);
  vk.vkDestroyDescriptorSetLayout(device, setLayout, nullptr);
  for (Buf* x : {&a, &b, &c}) {
    vk.vkUnmapMemory(device, x->memory);
    vk.vkDestroyBuffer(device, x->buffer, nullptr);
    vk.vkFreeMemory(device, x->memory, nullptr);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  int iterations = 20;
  std::vector<std::string> tiles;
  ChannelFormat format = ChannelFormat::float16;
  NeuronDescriptor neuron = NeuronDescriptor::relu();
  std::vector<std::string> positional;
  std::vector<int> modes;
  double warmupSeconds = -1;  // 0.4 s for gemm, 0.1 s for conv
  bool residual = false;
  bool pieces = false;
  bool asBatch = false;
  bool cold = false;
  std::vector<detail::MatrixTile> gemmTiles;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--iterations" && i + 1 < args.size())
      iterations = std::max(1, std::atoi(args[++i].c_str()));
    else if (args[i] == "--tiles" && i + 1 < args.size()) {
      std::istringstream list(args[++i]);
      for (std::string t; std::getline(list, t, ',');) tiles.push_back(t);
    } else if (args[i] == "--neuron" && i + 1 < args.size()) {
      const std::string name = args[++i];
      if (name == "none")
        neuron = {};
      else if (name == "relu6")
        neuron = NeuronDescriptor::relu6();
      else if (name == "silu")
        neuron = NeuronDescriptor::of(NeuronType::silu);
      else if (name != "relu") {
        std::cerr << "vkcnn-bench-conv: --neuron takes relu, none, relu6 or silu, not " << name
                  << "\n";
        return 2;
      }
    } else if (args[i] == "--warmup" && i + 1 < args.size()) {
      warmupSeconds = std::atof(args[++i].c_str());
    } else if (args[i] == "--modes" && i + 1 < args.size()) {
      std::istringstream list(args[++i]);
      for (std::string m; std::getline(list, m, ',');) modes.push_back(std::atoi(m.c_str()));
    } else if (args[i] == "--gemm-tiles" && i + 1 < args.size()) {
      // WARPS_MxWARPS_N/FRAG_MxFRAG_N/K_STEPS;... for tiles not in convolution_tiles.h
      std::istringstream list(args[++i]);
      for (std::string t; std::getline(list, t, ';');) {
        detail::MatrixTile tile{"custom", 0, 0, 0, 0, 0, 0, 0, 1};
        if (std::sscanf(t.c_str(), "%ux%u/%ux%u/%u", &tile.warpsM, &tile.warpsN, &tile.fragmentsM,
                        &tile.fragmentsN, &tile.kSteps) != 5 ||
            !tile.warpsM || !tile.warpsN || !tile.fragmentsM || !tile.fragmentsN || !tile.kSteps) {
          std::cerr << "vkcnn-bench-conv: --gemm-tiles takes WMxWN/FMxFN/KSTEPS;..., not " << t
                    << "\n";
          return 2;
        }
        gemmTiles.push_back(tile);
      }
    } else if (args[i] == "--pieces") {
      pieces = true;
    } else if (args[i] == "--batch") {
      asBatch = true;
    } else if (args[i] == "--residual") {
      residual = true;
    } else if (args[i] == "--cold") {
      cold = true;
    } else if (args[i] == "--fp16")
      format = ChannelFormat::float16;
    else if (args[i] == "--fp32")
      format = ChannelFormat::float32;
    else
      positional.push_back(args[i]);
  }
  if (tiles.empty()) tiles.push_back("auto");
  try {
    if (positional.size() == 2 && positional[0] == "conv")
      return benchConvolutions(positional[1], format, iterations, tiles, neuron, pieces, asBatch,
                               residual, warmupSeconds < 0 ? 0.1 : warmupSeconds, cold);
    if (positional.size() == 5 && positional[0] == "gemm")
      return benchGemm(positional[1], uint32_t(std::stoul(positional[2])),
                       uint32_t(std::stoul(positional[3])), uint32_t(std::stoul(positional[4])),
                       iterations, modes.empty() ? std::vector<int>{0} : modes, gemmTiles,
                       warmupSeconds < 0 ? 0.4 : warmupSeconds);
  } catch (const std::exception& e) {
    std::cerr << "vkcnn-bench-conv: " << e.what() << "\n";
    return 1;
  }
  std::cerr
      << "usage: vkcnn-bench-conv conv SHAPES [--fp16|--fp32] [--iterations N] [--tiles auto,...]\n"
         "                             [--neuron relu|none|relu6|silu] [--pieces] [--batch]\n"
         "                             [--residual]\n"
         "                             [--warmup SECONDS] [--cold]\n"
         "       vkcnn-bench-conv gemm SPIRV M N K [--iterations N] [--modes 0,1,2,3]\n"
         "                             [--gemm-tiles WMxWN/FMxFN/KSTEPS;...] [--warmup SECONDS]\n";
  return 2;
}
