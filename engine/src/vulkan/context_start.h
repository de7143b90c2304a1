// A Context handed out before its device exists, for libvkcnn_onnx's Session on its own Context
// (ContextImpl::startOwned): exported, so the Session reaches it without the Context's internals.
// startContext reads the options (their errors are thrown there) and returns a Context whose
// device accessors wait; finishContext, on another thread, creates the device (never throws: a
// failure is kept); awaitContext waits for it, rethrows its error, and says how long it took.
#pragma once

#include "vkcnn/context.h"
#include "vkcnn/export.h"

namespace vkcnn::detail {

struct ContextStart {
  double ms = 0;      // creating the device (finishContext)
  double waitMs = 0;  // how long other threads waited for it, from the first wait to the end
};

VKCNN_API Context startContext(const ContextOptions& options);
VKCNN_API void finishContext(const Context& context, const ContextOptions& options) noexcept;
VKCNN_API ContextStart awaitContext(const Context& context);

}  // namespace vkcnn::detail
