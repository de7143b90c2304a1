// Forcing the convolution family's choice on a Context in tests (vulkan/overrides.h's
// ChoiceOverrides): what VKCNN_CONVOLUTION_TILE and its siblings do for a process, here for the
// shared test Context between encodes. forceChoice sets one field; a ScopedChoice at the top of a
// test case puts back what the Context had when the case ends, also when a check throws.
// The Graph's fusion switches (VKCNN_FUSE_*, VKCNN_SE_MAX_WEIGHTS) likewise: forceFusion and
// ScopedFusion; a Graph reads them when it compiles.
#pragma once

#include <cstdint>
#include <string>

#include "test_support.h"
#include "vulkan/overrides.h"

namespace vkcnn::test {

inline void forceChoice(std::string detail::ChoiceOverrides::*field, const std::string& value,
                        const Context& ctx = context()) {
  detail::ChoiceOverrides choice = detail::overrides(ctx).choice;
  choice.*field = value;
  detail::setChoiceOverrides(ctx, choice);
}

inline void forceChoice(uint64_t detail::ChoiceOverrides::*field, uint64_t value,
                        const Context& ctx = context()) {
  detail::ChoiceOverrides choice = detail::overrides(ctx).choice;
  choice.*field = value;
  detail::setChoiceOverrides(ctx, choice);
}

class ScopedChoice {
 public:
  explicit ScopedChoice(const Context& ctx = context())
      : context_(ctx), saved_(detail::overrides(ctx).choice) {}
  ~ScopedChoice() { detail::setChoiceOverrides(context_, saved_); }
  ScopedChoice(const ScopedChoice&) = delete;
  ScopedChoice& operator=(const ScopedChoice&) = delete;

 private:
  const Context& context_;
  detail::ChoiceOverrides saved_;
};

inline void forceFusion(bool detail::Overrides::*field, bool value,
                        const Context& ctx = context()) {
  detail::Overrides fusion = detail::overrides(ctx);
  fusion.*field = value;
  detail::setFusionOverrides(ctx, fusion);
}

class ScopedFusion {
 public:
  explicit ScopedFusion(const Context& ctx = context())
      : context_(ctx), saved_(detail::overrides(ctx)) {}
  ~ScopedFusion() { detail::setFusionOverrides(context_, saved_); }
  ScopedFusion(const ScopedFusion&) = delete;
  ScopedFusion& operator=(const ScopedFusion&) = delete;

 private:
  const Context& context_;
  detail::Overrides saved_;
};

}  // namespace vkcnn::test
