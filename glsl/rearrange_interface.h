// Push constants of the channel rearrangement kernels (channel_shuffle.comp, depth_space.comp).
#ifndef VKCNN_REARRANGE_INTERFACE_H
#define VKCNN_REARRANGE_INTERFACE_H

#include "interface.h"

#ifdef __cplusplus
namespace vkcnn::detail::shader {
#endif

VKCNN_STRUCT(ChannelShufflePush) {
  ImageView source;
  ImageView destination;
  Geometry geometry;
  int_t groups;
  int_t channelsPerGroup;  // window channels / groups
  int_t pad0, pad1;
};

// depth_space.comp modes.
#define VKCNN_DEPTH_TO_SPACE_DCR 0
#define VKCNN_DEPTH_TO_SPACE_CRD 1
#define VKCNN_SPACE_TO_DEPTH 2

VKCNN_STRUCT(DepthSpacePush) {
  ImageView source;
  ImageView destination;
  Geometry geometry;
  int_t mode;
  int_t blockSize;
  int_t depthChannels;  // DepthToSpace: destination window channels; SpaceToDepth: source's
  int_t pad0;
};

#ifdef __cplusplus
}  // namespace vkcnn::detail::shader
#endif

#endif
