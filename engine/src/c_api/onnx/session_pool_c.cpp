// The C API's session-pool part (vkcnn/vkcnn_c.h, in libvkcnn_onnx): vkcnn::SessionPool behind an
// opaque handle, with one piece's tensor infos kept in C form for the handle's life.
#include <algorithm>
#include <string>
#include <vector>

#include "c_api/c_api.h"
#include "c_api/onnx/session_c.h"
#include "vkcnn/session_pool.h"

using namespace vkcnn;
using namespace vkcnn::capi;

struct vkcnn_session_pool_s {
  SessionPool pool;
  std::vector<vkcnn_tensor_info> inputs, outputs;

  explicit vkcnn_session_pool_s(SessionPool p) : pool(std::move(p)) {
    for (const SessionTensorInfo& t : pool.inputs()) inputs.push_back(tensorInfoOf(t));
    for (const SessionTensorInfo& t : pool.outputs()) outputs.push_back(tensorInfoOf(t));
  }
};

namespace {

SessionPoolOptions poolOptions(const vkcnn_session_pool_options* options, const char* f) {
  SessionPoolOptions o;
  if (!options) return o;
  o.session = sessionOptions(&options->session, f);
  if (options->device_count && !options->devices)
    badArgument(f, "devices is NULL with device_count " + std::to_string(options->device_count));
  for (uint32_t d = 0; d < options->device_count; ++d) {
    if (!options->devices[d]) badArgument(f, "devices[" + std::to_string(d) + "] is NULL");
    o.devices.emplace_back(options->devices[d]);
  }
  o.pieceBatch = options->piece_batch;
  o.queueDepth = options->queue_depth;
  return o;
}

// Piece p of a C caller's array of `pieces` pieces of `info`.
HostTensor pieceOf(const float* data, const vkcnn_tensor_info& info, uint32_t p) {
  const float* first = data + size_t(p) * info.element_count;
  return {std::vector<int64_t>(info.shape, info.shape + info.rank),
          std::vector<float>(first, first + info.element_count)};
}

}  // namespace

extern "C" {

void vkcnn_session_pool_options_init(vkcnn_session_pool_options* options) {
  if (!options) return;
  *options = vkcnn_session_pool_options{};
  vkcnn_session_options_init(&options->session);
  options->queue_depth = SessionPoolOptions{}.queueDepth;
}

vkcnn_status vkcnn_session_pool_create(const char* path, const vkcnn_session_pool_options* options,
                                       vkcnn_session_pool* pool) {
  return guarded([&] {
    const char* f = "vkcnn_session_pool_create";
    const char* p = &need(path, f, "path");
    vkcnn_session_pool& out = need(pool, f, "pool");
    out = new vkcnn_session_pool_s(SessionPool(p, poolOptions(options, f)));
  });
}

void vkcnn_session_pool_destroy(vkcnn_session_pool pool) {
  delete pool;
}

uint32_t vkcnn_session_pool_piece_batch(vkcnn_session_pool pool) {
  return pool ? pool->pool.pieceBatch() : 0;
}

uint32_t vkcnn_session_pool_live_devices(vkcnn_session_pool pool) {
  return pool ? pool->pool.liveDevices() : 0;
}

uint32_t vkcnn_session_pool_input_count(vkcnn_session_pool pool) {
  return pool ? uint32_t(pool->inputs.size()) : 0;
}

uint32_t vkcnn_session_pool_output_count(vkcnn_session_pool pool) {
  return pool ? uint32_t(pool->outputs.size()) : 0;
}

vkcnn_status vkcnn_session_pool_input_info(vkcnn_session_pool pool, uint32_t index,
                                           vkcnn_tensor_info* info) {
  return tensorInfoAt(pool, index, info, "vkcnn_session_pool_input_info", "pool", "input",
                      &vkcnn_session_pool_s::inputs);
}

vkcnn_status vkcnn_session_pool_output_info(vkcnn_session_pool pool, uint32_t index,
                                            vkcnn_tensor_info* info) {
  return tensorInfoAt(pool, index, info, "vkcnn_session_pool_output_info", "pool", "output",
                      &vkcnn_session_pool_s::outputs);
}

vkcnn_status vkcnn_session_pool_run(vkcnn_session_pool pool, const float* const* inputs,
                                    uint32_t inputCount, uint32_t pieces, float* const* outputs,
                                    uint32_t outputCount) {
  return guarded([&] {
    const char* f = "vkcnn_session_pool_run";
    vkcnn_session_pool_s& p = need(pool, f, "pool");
    checkCount(inputCount, p.inputs.size(), f, "input_count", "pool");
    checkCount(outputCount, p.outputs.size(), f, "output_count", "pool");
    checkHostArrays(inputs, inputCount, outputs, outputCount, f);
    // Piece by piece through the queue, so the devices share the work as for SessionPool::run.
    std::vector<std::future<std::map<std::string, HostTensor>>> futures;
    for (uint32_t piece = 0; piece < pieces; ++piece) {
      std::map<std::string, HostTensor> in;
      for (uint32_t i = 0; i < inputCount; ++i)
        in[p.inputs[i].name] = pieceOf(inputs[i], p.inputs[i], piece);
      futures.push_back(p.pool.submit(std::move(in)));
    }
    for (uint32_t piece = 0; piece < pieces; ++piece) {
      const std::map<std::string, HostTensor> out = futures[piece].get();
      for (uint32_t o = 0; o < outputCount; ++o) {
        const std::vector<float>& data = out.at(p.outputs[o].name).data;
        std::copy(data.begin(), data.end(),
                  outputs[o] + size_t(piece) * p.outputs[o].element_count);
      }
    }
  });
}

}  // extern "C"
