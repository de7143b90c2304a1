#version 450
// Squeeze-and-excitation in one dispatch (squeeze_excitation.glsl) within Vulkan's least shared
// memory, 16 KiB (a mobile-class device): blocks of up to 2048 channels reduced to 512.
#extension GL_GOOGLE_include_directive : require

#include "squeeze_excitation_interface.h"
#define SE_CHANNELS VKCNN_SE_SMALL_CHANNELS
#define SE_REDUCED VKCNN_SE_SMALL_REDUCED
#include "squeeze_excitation.glsl"
