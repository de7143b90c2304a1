// What the C API's session and session-pool parts share (session_c.cpp defines them): the
// vkcnn_session_options a C caller filled in, as SessionOptions (errors name the C fields), and a
// tensor info in C form (its pointers into `t`, which must outlive it).
#pragma once

#include <string>
#include <vector>

#include "c_api/c_api.h"
#include "vkcnn/session.h"
#include "vkcnn/vkcnn_c.h"

namespace vkcnn::capi {

SessionOptions sessionOptions(const vkcnn_session_options* options, const char* function);
vkcnn_tensor_info tensorInfoOf(const SessionTensorInfo& t);
// An input_count or output_count `what` that must equal the `owner`'s (session, pool) count.
void checkCount(uint32_t given, size_t expected, const char* function, const char* what,
                const char* owner = "session");
// The host arrays of a run: neither list NULL where it has entries, no entry NULL.
void checkHostArrays(const float* const* inputs, uint32_t inputCount, float* const* outputs,
                     uint32_t outputCount, const char* function);

// vkcnn_session_{input,output}_info and the pool's: entry `index` of the handle's `values` (its
// inputs or outputs in C form), `role` naming them in the error.
template <typename Handle>
vkcnn_status tensorInfoAt(const Handle* handle, uint32_t index, vkcnn_tensor_info* info,
                          const char* f, const char* handleName, const char* role,
                          std::vector<vkcnn_tensor_info> Handle::*values) {
  return guarded([&] {
    const std::vector<vkcnn_tensor_info>& v = need(handle, f, handleName).*values;
    if (index >= v.size())
      badArgument(
          f, std::string(role) + " " + std::to_string(index) + " of " + std::to_string(v.size()));
    need(info, f, "info") = v[index];
  });
}

}  // namespace vkcnn::capi
