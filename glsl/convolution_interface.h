// Push constants of the convolution family (dense, grouped, depthwise, fully connected), shared by
// GLSL and C++. Exactly 128 bytes, lavapipe's limit: the window's left/top edge is folded into
// Geometry.offsetX/offsetY on the host, so padding needs no field of its own.
#ifndef VKCNN_CONVOLUTION_INTERFACE_H
#define VKCNN_CONVOLUTION_INTERFACE_H

#include "interface.h"

#ifdef __cplusplus
namespace vkcnn::detail::shader {
#endif

// The most pieces of a batch convolution_tiled_pieces takes in one dispatch (its image arrays).
#define VKCNN_MAX_PIECES 8
// The source activation's scales and shifts (convolution_bindings.glsl, SOURCE_ACTIVATION) each
// take this many floats of the bias buffer for `channels` input channels: padded with zeros to
// whole slices and one more, so that the lanes past the input a slice of 4 reads (a grouped
// layer's last group, a depthwise layer's last outputs) read zero and stay in the buffer.
#define VKCNN_SOURCE_ACTIVATION_STRIDE(channels) (((channels) + 3) / 4 * 4 + 4)
// convolution_tiled's EPILOGUE_OPS: the fused neuron's type, plus this flag with a residual.
#define VKCNN_EPILOGUE_OPS_RESIDUAL 256

VKCNN_STRUCT(ConvolutionParams) {
  int_t kernelWidth, kernelHeight;
  int_t strideX, strideY;
  int_t dilationX, dilationY;
  int_t inputChannelsPerGroup;   // 1 for depthwise
  int_t outputChannelsPerGroup;  // the channel multiplier for depthwise
};

// Source pixel read by tap (kx, ky) of destination pixel p:
//   (p - clip) * stride + (offsetX, offsetY) + (kx, ky) * dilation
// where offsetX/offsetY already include the window's left/top edge.
VKCNN_STRUCT(ConvolutionPush) {
  ImageView source;
  ImageView destination;
  Geometry geometry;
  NeuronParams neuron;
  ConvolutionParams convolution;
};

// fully_connected_batched.glsl over Tensors (FC_TENSORS): the source [imageCount][taps]
// [sourceChannels] and the destination [imageCount][destinationChannels], contiguous from elements
// sourceFirst and destinationFirst of their bound ranges (sourceFirst and sourceChannels multiples
// of 4); `slices` destination slices of 4 channels.
VKCNN_STRUCT(FullyConnectedTensorPush) {
  int_t sourceFirst, sourceChannels, destinationFirst, destinationChannels;
  int_t imageCount, slices, taps, unused;
  NeuronParams neuron;
};

// fully_connected_matrix.comp and fully_connected_reduce.comp: the source [imageCount][inputs]
// (float16, from element sourceFirst, a multiple of 4; inputs = taps x channels, a multiple of 4),
// the partial sums [splits][partialRows][partialColumns] (float32, from element partialsFirst, a
// multiple of 4; whole tiles), each split summing chunksPerSplit chunks of 64 inputs, and the
// destination [imageCount][destinationChannels] from element destinationFirst.
VKCNN_STRUCT(FullyConnectedMatrixPush) {
  int_t sourceFirst, inputs, destinationFirst, destinationChannels;
  int_t imageCount, splits, chunksPerSplit, partialsFirst;
  int_t partialRows, partialColumns, unused, unused2;
  NeuronParams neuron;
};

// winograd_gemm.comp: the 36 per-position products [rows][36][outputSlices] of
// [rows][36][inputSlices] x [36][inputSlices][outputSlices] (vec4 elements; mat4 blocks of
// weights), each operand starting at the given vec4 index of its bound range.
VKCNN_STRUCT(WinogradGemmPush) {
  int_t rows, inputSlices, outputSlices, unused;
  int_t sourceFirst, weightsFirst, destinationFirst, unused2;
};

// winograd_matrix_gemm.comp: the 16 per-position products [16][rows][N] (float32) of
// [16][rows][K] x [16][K][N] (float16), whole tiles each, in blocks of 128 rows
// ([row block][position][row][channel]); the operands start at the given uvec4 (8 float16) index
// of their bound ranges, the products at the given uvec4 (4 float).
VKCNN_STRUCT(WinogradMatrixGemmPush) {
  int_t rows, K, N, unused;
  int_t transformedFirst, weightsFirst, productsFirst, unused2;
};

#ifdef __cplusplus
static_assert(sizeof(ConvolutionPush) == 128, "lavapipe allows 128 bytes of push constants");
}  // namespace vkcnn::detail::shader
#endif

#endif
