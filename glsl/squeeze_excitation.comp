#version 450
// Squeeze-and-excitation in one dispatch (squeeze_excitation.glsl): blocks of up to 4096 channels
// reduced to 1024, in 24 KiB of shared memory.
#extension GL_GOOGLE_include_directive : require

#include "squeeze_excitation_interface.h"
#define SE_CHANNELS VKCNN_SE_MAX_CHANNELS
#define SE_REDUCED VKCNN_SE_MAX_REDUCED
#include "squeeze_excitation.glsl"
