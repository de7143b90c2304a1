// What the C API's session and session-pool parts share (session_c.cpp defines them): the
// vkcnn_session_options a C caller filled in, as SessionOptions (errors name the C fields), and a
// tensor info in C form (its pointers into `t`, which must outlive it).
#pragma once

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

}  // namespace vkcnn::capi
