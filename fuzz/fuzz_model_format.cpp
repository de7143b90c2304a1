// libFuzzer target: the .vkcnn reader (engine/src/archive) on any bytes, the checksum checked and
// not (the fuzzer rarely makes a matching checksum, so the unchecked read is where it reaches the
// section table, the records and the weights). A file that reads is walked whole: every weight's
// bytes, and every record field of the graph section read as every type, as a decoder would; then
// the graph section is decoded as the model loader does (graph/serialize.h: readGraph's checks)
// and the Graph planned (storage, schedule). No device is needed: the Graph's Context is one whose
// device never starts (anything reaching for it would hang the target, which the fuzzer reports).
// Only vkcnn::Error may come out.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

#include "archive/archive.h"
#include "graph/serialize.h"
#include "vkcnn/error.h"
#include "vulkan/context_start.h"

namespace {

using namespace vkcnn::archive;

// Reads every field of `r` as each accessor would, nested records included (depth-limited: a
// record nests at most as deep as its bytes allow, but the walk need not follow all of it).
uint64_t walk(const RecordReader& r, int depth) {
  uint64_t sum = 0;
  for (uint16_t id : r.keys()) {
    const FieldKey key{id, "fuzzed"};
    auto attempt = [&](auto read) {
      try {
        read();
      } catch (const vkcnn::Error&) {
      }
    };
    attempt([&] { sum += r.u32(key); });
    attempt([&] { sum += r.u64(key, 1); });
    attempt([&] { sum += std::bit_cast<uint32_t>(r.f32(key)); });
    attempt([&] { sum += r.string(key).size(); });
    attempt([&] { sum += r.i64s(key).size() + r.f32s(key).size() + r.u32s(key).size(); });
    attempt([&] { sum += r.tensor(key, 16); });
    attempt([&] { sum += r.tensors(key, 16).size(); });
    attempt([&] { sum += r.bytes(key).size(); });
    if (depth < 8) {
      attempt([&] { sum += walk(r.record(key), depth + 1); });
      attempt([&] {
        for (const RecordReader& nested : r.records(key)) sum += walk(nested, depth + 1);
      });
    }
  }
  return sum;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  for (bool verify : {true, false}) {
    try {
      const Archive a = Archive::fromBytes(bytes, "model 'fuzz.vkcnn'", {verify});
      volatile uint64_t sum = a.provenance().sourceName.size();
      for (const Weight& w : a.weights())
        for (uint8_t b : w.data) sum = sum + b;
      if (const auto graph = a.section(SectionKind::graph))
        sum = sum + walk(RecordReader(*graph, a.name() + ": graph"), 0);
      // The loader's decoding, and the planning of what it accepted.
      static const vkcnn::Context pending = vkcnn::detail::startContext({});
      vkcnn::Graph g = vkcnn::detail::readGraph(pending, a);
      g.plan();
      sum = sum + g.statistics().kernels;
    } catch (const vkcnn::Error&) {
    }
  }
  return 0;
}
