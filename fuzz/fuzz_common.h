// Shared by the libFuzzer targets: one lavapipe Context per process.
#pragma once

#include <cstdio>
#include <cstdlib>

#include "vkcnn/context.h"

namespace vkcnn::fuzz {

// Validation off unless asked (it costs most of an iteration); a target that must see validation
// messages asks for it and checks validationMessageCount() after every input.
inline Context& context(bool validation = false) {
  static Context c = [&] {
    ContextOptions o;
    if (const char* d = std::getenv("VKCNN_DEVICE"))
      o.device = d;
    else
      o.device = "llvmpipe";
    o.validation = validation;
    return Context(o);
  }();
  return c;
}

}  // namespace vkcnn::fuzz
