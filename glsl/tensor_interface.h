// Parameters of the tensor kernels (glsl/tensor_*.comp), shared by GLSL and C++. They travel in a
// uniform buffer (std140): every member group is 16 bytes wide, so C++ and std140 agree. The
// conversions and the tiled transpose take small blocks of their own as push constants (below).
//
// A kernel walks an index space of `rank` axes of extents `shape` (row-major, flattened to
// `count` items); operand k's element for index (i0, .., ir-1) is at
// args[k].offset + sum(i_j * args[k].strides[j]) of its buffer. Kernels with a second, inner
// index space (the reduced axes of a reduction, K of a matrix product) describe it the same way in
// innerRank / innerShape / innerStrides.
#ifndef VKCNN_TENSOR_INTERFACE_H
#define VKCNN_TENSOR_INTERFACE_H

#include "interface.h"

#ifdef __cplusplus
namespace vkcnn::detail::shader {
struct IVec4 {
  int32_t v[4];
  int32_t& operator[](int i) { return v[i]; }
};
#define VKCNN_IVEC4 IVec4
#else
#define VKCNN_IVEC4 ivec4
#endif

#define VKCNN_TENSOR_MAX_RANK 8
#define VKCNN_TENSOR_MAX_ARGS 4

// One operand: strides over the outer and the inner index space, and its first element.
VKCNN_STRUCT(TensorArg) {
  VKCNN_IVEC4 strides[2];
  VKCNN_IVEC4 innerStrides[2];
  int_t offset, pad0, pad1, pad2;
};

VKCNN_STRUCT(TensorParams) {
  int_t rank, count, op, flags;
  float_t a, b, c, d;
  int_t innerRank, innerCount, i0, i1;  // i0.. i5: kernel-specific integers
  int_t i2, i3, i4, i5;
  VKCNN_IVEC4 shape[2];
  VKCNN_IVEC4 innerShape[2];
  TensorArg args[VKCNN_TENSOR_MAX_ARGS];
};

// Unary operations (tensor_unary.comp); the neuron set comes first as op = 0 with the neuron's
// type in i0.
#define VKCNN_TENSOR_UNARY_NEURON 0
#define VKCNN_TENSOR_UNARY_ERF 1
#define VKCNN_TENSOR_UNARY_SQRT 2
#define VKCNN_TENSOR_UNARY_RECIPROCAL 3
#define VKCNN_TENSOR_UNARY_NEGATE 4
#define VKCNN_TENSOR_UNARY_EXP 5
#define VKCNN_TENSOR_UNARY_LOG 6
#define VKCNN_TENSOR_UNARY_ABS 7
#define VKCNN_TENSOR_UNARY_FLOOR 8
#define VKCNN_TENSOR_UNARY_CEIL 9
#define VKCNN_TENSOR_UNARY_COPY 10

// Binary operations (tensor_binary.comp).
#define VKCNN_TENSOR_BINARY_ADD 0
#define VKCNN_TENSOR_BINARY_SUB 1
#define VKCNN_TENSOR_BINARY_MUL 2
#define VKCNN_TENSOR_BINARY_DIV 3
#define VKCNN_TENSOR_BINARY_POW 4
#define VKCNN_TENSOR_BINARY_MAX 5
#define VKCNN_TENSOR_BINARY_MIN 6
#define VKCNN_TENSOR_BINARY_EQUAL 7
#define VKCNN_TENSOR_BINARY_LESS 8
#define VKCNN_TENSOR_BINARY_GREATER 9
#define VKCNN_TENSOR_BINARY_LESS_OR_EQUAL 10
#define VKCNN_TENSOR_BINARY_GREATER_OR_EQUAL 11
#define VKCNN_TENSOR_BINARY_PRELU 13

// TensorParams::flags bit of the kernels that reduce over an inner index space (reduce, softmax,
// layer norm): one invocation per output position instead of one workgroup (a short inner space).
#define VKCNN_TENSOR_SERIAL 2

// Reductions (tensor_reduce.comp).
#define VKCNN_TENSOR_REDUCE_SUM 0
#define VKCNN_TENSOR_REDUCE_MEAN 1
#define VKCNN_TENSOR_REDUCE_MAX 2
#define VKCNN_TENSOR_REDUCE_MIN 3
#define VKCNN_TENSOR_REDUCE_PROD 4
#define VKCNN_TENSOR_REDUCE_L1 5
#define VKCNN_TENSOR_REDUCE_L2 6
#define VKCNN_TENSOR_REDUCE_LOG_SUM_EXP 7
#define VKCNN_TENSOR_REDUCE_SUM_SQUARE 8
#define VKCNN_TENSOR_REDUCE_LOG_SUM 9

// Resize along one axis (tensor_resize.comp): the interpolation in op.
#define VKCNN_TENSOR_RESIZE_NEAREST 0
#define VKCNN_TENSOR_RESIZE_LINEAR 1
#define VKCNN_TENSOR_RESIZE_CUBIC 2

// Image <-> tensor conversions (image_to_tensor.comp, tensor_to_image.glsl) take push constants
// instead of TensorParams: the first data load then waits on no parameter load from memory. The
// tensor's element (n, c, y, x) is at offset + n*strides[0] + c*strides[1] + y*strides[2] +
// x*strides[3], whatever order the tensor keeps the axes in; the image's channel window starts
// `channelShift` channels into its first bound layer, `layersPerImage` layers per image.
VKCNN_STRUCT(TensorConversionPush) {
  VKCNN_IVEC4 strides;
  int_t offset, width, pixels, channels;                  // pixels: width * height
  int_t channelShift, layersPerImage, paddingFrom, pad0;  // paddingFrom: TensorToImage only
};

// The tiled transpose (tensor_transpose.comp), also in push constants: tile axes A (the
// destination's innermost) and B (the source's), their extents, tile counts and strides, and up to
// 4 other axes (the outer index space: shape, strides, `count` items in all).
VKCNN_STRUCT(TensorTransposePush) {
  VKCNN_IVEC4 shape;
  VKCNN_IVEC4 sourceStrides;
  VKCNN_IVEC4 destinationStrides;
  int_t extentA, extentB, tilesA, tilesB;
  int_t sourceA, sourceB, destinationA, destinationB;  // strides along A and B
  int_t sourceOffset, destinationOffset, rank, count;
};
#define VKCNN_TENSOR_TRANSPOSE_MAX_OUTER_RANK 4

#ifdef __cplusplus
}  // namespace vkcnn::detail::shader
#endif
#undef VKCNN_IVEC4

#endif
