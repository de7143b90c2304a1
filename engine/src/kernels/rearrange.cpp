#include "vkcnn/rearrange.h"

#include <limits>

#include "kernels/kernel_encoding.h"
#include "rearrange_interface.h"
#include "vkcnn/error.h"

namespace vkcnn {

namespace {

std::string quoted(const std::string& label) {
  return "kernel '" + label + "'";
}

void checkBlockSize(uint32_t blockSize, const std::string& what) {
  // Beyond this b*b overflows any realistic channel count; ONNX models use 2..8.
  if (blockSize == 0 || blockSize > 4096)
    throw Error(ErrorCode::invalidArgument,
                what + ": block size " + std::to_string(blockSize) + " is not in [1, 4096]");
}

}  // namespace

const char* toString(DepthToSpace::Mode mode) {
  switch (mode) {
    case DepthToSpace::Mode::DCR:
      return "DCR";
    case DepthToSpace::Mode::CRD:
      return "CRD";
  }
  return "unknown";
}

// ---- ChannelShuffle ---------------------------------------------------------------------------

ChannelShuffle::ChannelShuffle(const Context& context, uint32_t groups)
    : UnaryKernel(context, "channel shuffle " + std::to_string(groups) + " groups"),
      groups_(groups) {
  if (groups_ == 0)
    throw Error(ErrorCode::invalidArgument, quoted(label) + ": groups must be positive");
}

void ChannelShuffle::validate(const detail::KernelEncoding& e) const {
  if (e.sourceChannels % groups_)
    throw Error(ErrorCode::invalidArgument, e.what() + ": " + std::to_string(e.sourceChannels) +
                                                " source channels are not a multiple of " +
                                                std::to_string(groups_) + " groups");
}

void ChannelShuffle::encodeKernel(detail::KernelEncoding& e) {
  detail::DispatchRecorder d(e.commandBuffer, detail::ShaderId::channel_shuffle,
                             detail::variantFor(e.destination), e.what());
  detail::shader::ChannelShufflePush push{};
  const uint32_t slices = d.bindWindows(push, e);
  push.groups = int32_t(groups_);
  push.channelsPerGroup = int32_t(e.sourceChannels / groups_);
  d.dispatch(push, e.clipWidth, e.clipHeight, e.imageCount * slices);
}

// ---- DepthToSpace -----------------------------------------------------------------------------

DepthToSpace::DepthToSpace(const Context& context, uint32_t blockSize, Mode mode)
    : UnaryKernel(context, std::string("depth to space ") + toString(mode) + " " +
                               std::to_string(blockSize)),
      blockSize_(blockSize),
      mode_(mode) {
  checkBlockSize(blockSize_, quoted(label));
  if (mode_ != Mode::DCR && mode_ != Mode::CRD)
    throw Error(ErrorCode::invalidArgument,
                quoted(label) + ": mode " + std::to_string(uint32_t(mode_)) + " does not exist");
}

uint32_t DepthToSpace::destinationWidth(uint32_t sourceWidth) const {
  return sourceWidth * blockSize_;
}

uint32_t DepthToSpace::destinationHeight(uint32_t sourceHeight) const {
  return sourceHeight * blockSize_;
}

uint32_t DepthToSpace::destinationFeatureChannels(uint32_t sourceChannels) const {
  const uint32_t area = blockSize_ * blockSize_;
  if (sourceChannels % area)
    throw Error(ErrorCode::invalidArgument,
                quoted(label) + ": " + std::to_string(sourceChannels) +
                    " source channels are not a multiple of blockSize^2 = " + std::to_string(area));
  return sourceChannels / area;
}

void DepthToSpace::encodeKernel(detail::KernelEncoding& e) {
  detail::DispatchRecorder d(e.commandBuffer, detail::ShaderId::depth_space,
                             detail::variantFor(e.destination), e.what());
  detail::shader::DepthSpacePush push{};
  const uint32_t slices = d.bindWindows(push, e);
  push.mode = mode_ == Mode::DCR ? VKCNN_DEPTH_TO_SPACE_DCR : VKCNN_DEPTH_TO_SPACE_CRD;
  push.blockSize = int32_t(blockSize_);
  push.depthChannels = int32_t(e.destinationChannels);
  d.dispatch(push, e.clipWidth, e.clipHeight, e.imageCount * slices);
}

// ---- SpaceToDepth -----------------------------------------------------------------------------

SpaceToDepth::SpaceToDepth(const Context& context, uint32_t blockSize)
    : UnaryKernel(context, "space to depth " + std::to_string(blockSize)), blockSize_(blockSize) {
  checkBlockSize(blockSize_, quoted(label));
}

namespace {
uint32_t dividedSize(uint32_t size, uint32_t blockSize, const char* dimension,
                     const std::string& what) {
  if (size % blockSize)
    throw Error(ErrorCode::invalidArgument,
                what + ": source " + dimension + " " + std::to_string(size) +
                    " is not a multiple of block size " + std::to_string(blockSize));
  return size / blockSize;
}
}  // namespace

uint32_t SpaceToDepth::destinationWidth(uint32_t sourceWidth) const {
  return dividedSize(sourceWidth, blockSize_, "width", quoted(label));
}

uint32_t SpaceToDepth::destinationHeight(uint32_t sourceHeight) const {
  return dividedSize(sourceHeight, blockSize_, "height", quoted(label));
}

uint32_t SpaceToDepth::destinationFeatureChannels(uint32_t sourceChannels) const {
  const uint64_t channels = uint64_t(sourceChannels) * blockSize_ * blockSize_;
  if (channels > std::numeric_limits<int32_t>::max())
    throw Error(ErrorCode::invalidArgument,
                quoted(label) + ": " + std::to_string(sourceChannels) +
                    " channels times blockSize^2 = " + std::to_string(blockSize_ * blockSize_) +
                    " overflow");
  return uint32_t(channels);
}

void SpaceToDepth::validate(const detail::KernelEncoding& e) const {
  // ONNX requires the whole input to divide into blocks, whatever part a clip selects.
  dividedSize(e.source.width(), blockSize_, "width", e.what());
  dividedSize(e.source.height(), blockSize_, "height", e.what());
}

void SpaceToDepth::encodeKernel(detail::KernelEncoding& e) {
  detail::DispatchRecorder d(e.commandBuffer, detail::ShaderId::depth_space,
                             detail::variantFor(e.destination), e.what());
  detail::shader::DepthSpacePush push{};
  const uint32_t slices = d.bindWindows(push, e);
  push.mode = VKCNN_SPACE_TO_DEPTH;
  push.blockSize = int32_t(blockSize_);
  push.depthChannels = int32_t(e.sourceChannels);
  d.dispatch(push, e.clipWidth, e.clipHeight, e.imageCount * slices);
}

}  // namespace vkcnn
