// Choice by measurement for convolutions (vkcnn/convolution_tuning.h): the per-device file of
// tuned configurations and the trial rounds that fill it.
//
// File layout: a fixed header (magic "VKCNNCT1", format version, vendor, device, driver version,
// device UUID, payload size, FNV-1a checksum of the payload) and a payload of
// "key\tconfiguration\n" lines. Anything that does not match this device and driver, or does not
// check out, is ignored with a warning: a stale tuning must never break a run.
#include "vkcnn/convolution_tuning.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

#include "kernels/convolution_state.h"
#include "kernels/convolution_tuning.h"
#include "kernels/kernel_encoding.h"
#include "vulkan/cache_file.h"
#include "vulkan/context_impl.h"

namespace vkcnn {
namespace detail {

namespace {

constexpr char kMagic[8] = {'V', 'K', 'C', 'N', 'N', 'C', 'T', '1'};
constexpr uint32_t kVersion = 1;

struct TuningFileHeader {
  char magic[8];
  uint32_t version, vendorId, deviceId, driverVersion;
  uint8_t deviceUUID[VK_UUID_SIZE];
  uint64_t payloadSize, checksum;
};

TuningFileHeader expectedHeader(ContextImpl& context) {
  VkPhysicalDeviceIDProperties id{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props.pNext = &id;
  context.vki().vkGetPhysicalDeviceProperties2(context.physicalDevice(), &props);
  TuningFileHeader h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kVersion;
  h.vendorId = props.properties.vendorID;
  h.deviceId = props.properties.deviceID;
  h.driverVersion = props.properties.driverVersion;
  std::memcpy(h.deviceUUID, id.deviceUUID, VK_UUID_SIZE);
  return h;
}

}  // namespace

struct ConvolutionTuningState {
  std::mutex mutex;
  std::string path;
  bool loaded = false;
  TuningFileHeader header{};
  std::map<std::string, std::string> entries;

  struct Trial {
    std::vector<std::string> candidates;
    std::vector<double> milliseconds;
    std::vector<uint32_t> runs;  // dispatches timed per candidate
  };
  bool trials = false;
  uint32_t round = 0;
  std::map<std::string, Trial> tried;
  std::map<std::string, std::pair<std::string, int>> labels;  // label -> key, candidate

  void load(ContextImpl& context) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return;
    auto reject = [&](const std::string& why) {
      context.log(LogSeverity::warning, "convolution tuning file " + path + " ignored: " + why);
      entries.clear();
    };
    TuningFileHeader have{};
    if (!in.read(reinterpret_cast<char*>(&have), sizeof have)) return reject("too short");
    if (std::memcmp(have.magic, kMagic, sizeof kMagic)) return reject("not a tuning file");
    if (have.version != kVersion) return reject("format version " + std::to_string(have.version));
    if (have.vendorId != header.vendorId || have.deviceId != header.deviceId ||
        std::memcmp(have.deviceUUID, header.deviceUUID, VK_UUID_SIZE))
      return reject("made on another device");
    if (have.driverVersion != header.driverVersion) return reject("made with another driver");
    if (have.payloadSize > (64u << 20)) return reject("payload too large");
    std::string payload(size_t(have.payloadSize), '\0');
    if (!in.read(payload.data(), std::streamsize(payload.size()))) return reject("truncated");
    if (fnv1a(payload.data(), payload.size()) != have.checksum) return reject("checksum mismatch");
    size_t at = 0;
    while (at < payload.size()) {
      const size_t end = payload.find('\n', at);
      if (end == std::string::npos) return reject("unterminated line");
      const std::string line = payload.substr(at, end - at);
      const size_t tab = line.find('\t');
      if (tab == std::string::npos || tab == 0 || tab + 1 == line.size())
        return reject("malformed line");
      entries[line.substr(0, tab)] = line.substr(tab + 1);
      at = end + 1;
    }
    loaded = true;
  }

  void save(ContextImpl& context) {
    if (path.empty()) return;
    std::string payload;
    for (const auto& [key, value] : entries) payload += key + "\t" + value + "\n";
    TuningFileHeader h = header;
    h.payloadSize = payload.size();
    h.checksum = fnv1a(payload.data(), payload.size());
    const std::string failed =
        writeFileAside(path, {{reinterpret_cast<const char*>(&h), sizeof h}, payload});
    if (!failed.empty())
      context.log(LogSeverity::warning,
                  "convolution tuning file " + path + " not written: " + failed);
  }
};

namespace {

ConvolutionTuningState& state(ContextImpl& context) {
  std::lock_guard lock(context.convolutionTuningMutex);
  if (!context.convolutionTuning) {
    auto s = std::make_shared<ConvolutionTuningState>();
    s->header = expectedHeader(context);
    const std::string pipelines = context.pipelines().cacheFile();
    if (!pipelines.empty()) {
      char uuid[2 * VK_UUID_SIZE + 1];
      for (uint32_t i = 0; i < VK_UUID_SIZE; ++i)
        std::snprintf(uuid + 2 * i, 3, "%02x", s->header.deviceUUID[i]);
      char name[128];
      std::snprintf(name, sizeof name, "convolution-tuning-%04x-%04x-%s.bin", s->header.vendorId,
                    s->header.deviceId, uuid);
      s->path = (std::filesystem::path(pipelines).parent_path() / name).string();
      s->load(context);
    }
    context.convolutionTuning = std::move(s);
  }
  return *context.convolutionTuning;
}

}  // namespace

TuningPick tunedConfiguration(ContextImpl& context, const std::string& key,
                              const std::function<std::vector<std::string>()>& candidates) {
  ConvolutionTuningState& s = state(context);
  std::lock_guard lock(s.mutex);
  if (auto it = s.entries.find(key); it != s.entries.end()) return {it->second, -1};
  if (!s.trials) return {};
  auto it = s.tried.find(key);
  if (it == s.tried.end()) {
    ConvolutionTuningState::Trial t;
    t.candidates = candidates();
    if (t.candidates.empty()) return {};
    t.milliseconds.assign(t.candidates.size(), 0.0);
    t.runs.assign(t.candidates.size(), 0);
    it = s.tried.emplace(key, std::move(t)).first;
  }
  const int index = int(std::min<size_t>(s.round, it->second.candidates.size() - 1));
  return {it->second.candidates[size_t(index)], index};
}

bool tuneAtEncode(ContextImpl& context, const std::string& key) {
  if (!context.tuneConvolutions) return false;
  ConvolutionTuningState& s = state(context);
  std::lock_guard lock(s.mutex);
  return !s.trials && !s.entries.count(key);
}

void noteTrial(ContextImpl& context, const std::string& label, const std::string& key,
               int candidate) {
  ConvolutionTuningState& s = state(context);
  std::lock_guard lock(s.mutex);
  s.labels[label] = {key, candidate};
}

}  // namespace detail

std::string ConvolutionTuning::file(const Context& context) {
  return detail::state(*context.impl()).path;
}

bool ConvolutionTuning::loaded(const Context& context) {
  detail::ConvolutionTuningState& s = detail::state(*context.impl());
  std::lock_guard lock(s.mutex);
  return s.loaded;
}

std::string ConvolutionTuning::lookup(const Context& context, const std::string& key) {
  detail::ConvolutionTuningState& s = detail::state(*context.impl());
  std::lock_guard lock(s.mutex);
  auto it = s.entries.find(key);
  return it == s.entries.end() ? std::string() : it->second;
}

void ConvolutionTuning::set(const Context& context, const std::string& key,
                            const std::string& configuration) {
  if (key.empty() || configuration.empty() || key.find_first_of("\t\n") != std::string::npos ||
      configuration.find_first_of("\t\n") != std::string::npos)
    throw Error(ErrorCode::invalidArgument, "ConvolutionTuning::set: key '" + key +
                                                "' and configuration '" + configuration +
                                                "' must be non-empty and hold no tab or newline");
  detail::ConvolutionTuningState& s = detail::state(*context.impl());
  std::lock_guard lock(s.mutex);
  s.entries[key] = configuration;
}

void ConvolutionTuning::save(const Context& context) {
  detail::ConvolutionTuningState& s = detail::state(*context.impl());
  std::lock_guard lock(s.mutex);
  s.save(*context.impl());
}

size_t ConvolutionTuning::size(const Context& context) {
  detail::ConvolutionTuningState& s = detail::state(*context.impl());
  std::lock_guard lock(s.mutex);
  return s.entries.size();
}

void ConvolutionTuning::beginRound(const Context& context, uint32_t round) {
  detail::ConvolutionTuningState& s = detail::state(*context.impl());
  std::lock_guard lock(s.mutex);
  s.trials = true;
  s.round = round;
  s.labels.clear();
  // Round 0 again (the caller's last pass): the cost model's choice is timed anew, with the
  // clocks as warm as for the other candidates (the first round runs right after the pipelines
  // are made and measured it up to 4x slow on the H100).
  if (round == 0)
    for (auto& [key, trial] : s.tried) trial.milliseconds[0] = 0, trial.runs[0] = 0;
}

uint32_t ConvolutionTuning::record(const Context& context, std::span<const KernelTiming> timings) {
  detail::ConvolutionTuningState& s = detail::state(*context.impl());
  std::lock_guard lock(s.mutex);
  for (const KernelTiming& t : timings) {
    auto it = s.labels.find(t.label);
    if (it == s.labels.end()) continue;
    detail::ConvolutionTuningState::Trial& trial = s.tried[it->second.first];
    const size_t c = size_t(it->second.second);
    if (c >= trial.candidates.size() || c != std::min<size_t>(s.round, trial.candidates.size() - 1))
      continue;
    // The last candidate repeats in later rounds of shorter lists: time it once per round only.
    if (s.round >= trial.candidates.size()) continue;
    trial.milliseconds[c] += t.milliseconds;
    trial.runs[c] += 1;
  }
  uint32_t rounds = 0;
  for (const auto& [key, trial] : s.tried)
    rounds = std::max(rounds, uint32_t(trial.candidates.size()));
  return rounds;
}

std::vector<TunedConvolution> ConvolutionTuning::finish(const Context& context) {
  detail::ConvolutionTuningState& s = detail::state(*context.impl());
  std::lock_guard lock(s.mutex);
  std::vector<TunedConvolution> result;
  for (const auto& [key, trial] : s.tried) {
    // Per dispatch, so that candidates timed a different number of times compare fairly.
    // Captured through a reference: clang 14 (the fuzz build) cannot capture structured bindings.
    auto mean = [&t = trial](size_t c) { return t.runs[c] ? t.milliseconds[c] / t.runs[c] : -1.0; };
    if (mean(0) < 0) continue;
    size_t best = 0;
    for (size_t c = 1; c < trial.candidates.size(); ++c)
      if (mean(c) >= 0 && mean(c) < mean(best)) best = c;
    TunedConvolution t;
    t.key = key;
    t.modelChoice = trial.candidates[0];
    t.winner = trial.candidates[best];
    t.modelMilliseconds = mean(0);
    t.winnerMilliseconds = mean(best);
    t.candidates = uint32_t(trial.candidates.size());
    s.entries[key] = t.winner;
    result.push_back(std::move(t));
  }
  s.trials = false;
  s.tried.clear();
  s.labels.clear();
  s.save(*context.impl());
  return result;
}

namespace detail {

namespace {

// The trials `cb` holds (`dispatches` per encode, `candidates` interleaved) after a warm-up: each
// candidate's least time over three submissions; empty where the timings do not match the
// dispatches.
std::vector<double> timeTrials(CommandBuffer& cb, const std::vector<uint32_t>& dispatches,
                               size_t candidates) {
  // Warm-up: two submissions, more up to about 20 ms of GPU work (clocks), then three timed.
  double warmMilliseconds = 0;
  for (uint32_t submission = 0; submission < 2 || (warmMilliseconds < 20.0 && submission < 10);
       ++submission) {
    cb.commit();
    cb.waitUntilCompleted();
    warmMilliseconds += cb.gpuMilliseconds();
  }
  std::vector<double> best(candidates, -1.0);
  for (uint32_t timed = 0; timed < 3; ++timed) {
    cb.commit();
    cb.waitUntilCompleted();
    const std::vector<KernelTiming> timings = cb.kernelTimings();
    size_t next = 0;
    for (size_t i = 0; i < dispatches.size(); ++i) {
      double ms = 0;
      for (uint32_t k = 0; k < dispatches[i]; ++k, ++next) {
        if (next >= timings.size()) return {};
        ms += timings[next].milliseconds;
      }
      double& b = best[i % candidates];
      if (b < 0 || ms < b) b = ms;
    }
    if (next != timings.size()) return {};
  }
  return best;
}

}  // namespace

// ContextOptions::tuneConvolutions' timing of one shape (kernels/convolution_state.h).
void tuneShape(const KernelEncoding& e, const ConvolutionState& s, ShaderId shader,
               int64_t leftEdge, int64_t topEdge, const std::string& key,
               const std::vector<std::string>& candidates) {
  const Context& context = e.handle.context();
  ContextImpl& impl = *e.commandBuffer.context;
  if (candidates.size() < 2) return;
  try {
    const auto started = std::chrono::steady_clock::now();
    Image source(context,
                 {e.source.width(), e.source.height(), e.source.featureChannels(), e.imageCount,
                  e.source.channelFormat(), ImageUsage::all, "tuning source"});
    Image destination(
        context,
        {e.destination.width(), e.destination.height(), e.destination.featureChannels(),
         e.imageCount, e.destination.channelFormat(), ImageUsage::all, "tuning destination"});
    CommandBufferOptions options;
    options.reusable = true;
    options.profile = true;
    CommandBuffer cb(context, "convolution tuning", options);
    constexpr uint32_t kRuns = 3;
    // Dispatches each encode recorded, in order (Winograd records three).
    std::vector<uint32_t> dispatches;
    for (uint32_t run = 0; run < kRuns; ++run)
      for (const std::string& candidate : candidates) {
        const uint32_t before = cb.impl()->statistics.dispatches;
        KernelEncoding t{*cb.impl(), cb, e.kernel, source, destination};
        t.imageCount = e.imageCount;
        t.clipX = e.clipX, t.clipY = e.clipY, t.clipWidth = e.clipWidth;
        t.clipHeight = e.clipHeight;
        t.offsetX = e.offsetX, t.offsetY = e.offsetY;
        t.sourceChannelOffset = e.sourceChannelOffset, t.sourceChannels = e.sourceChannels;
        t.destinationChannelOffset = e.destinationChannelOffset;
        t.destinationChannels = e.destinationChannels;
        std::string trialKey;
        encodeConvolution(t, s, shader, leftEdge, topEdge, nullptr, &trialKey, &candidate);
        // A view's channel offset can make the fresh images another shape: no entry then.
        if (trialKey != key) return;
        dispatches.push_back(cb.impl()->statistics.dispatches - before);
      }
    const std::vector<double> best = timeTrials(cb, dispatches, candidates.size());
    if (best.empty()) return;
    const size_t winner = size_t(std::min_element(best.begin(), best.end()) - best.begin());
    ConvolutionTuning::set(context, key, candidates[winner]);
    ConvolutionTuning::save(context);
    char line[512];
    std::snprintf(
        line, sizeof line,
        "convolution tuning: %s -> %s (%.4f ms; cost model's %s %.4f ms), %.2f s", key.c_str(),
        candidates[winner].c_str(), best[winner], candidates[0].c_str(), best[0],
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    impl.log(LogSeverity::info, line);
  } catch (const Error& error) {
    impl.log(LogSeverity::warning,
             "convolution tuning of " + key + " skipped, the cost model decides: " + error.what());
  }
}

}  // namespace detail
}  // namespace vkcnn
