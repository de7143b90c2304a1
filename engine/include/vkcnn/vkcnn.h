/* The whole public API of vkcnn, for C and C++.
 *
 * From C (C11) it declares the C API (vkcnn/vkcnn_c.h: opaque handles, status codes) and the
 * version; from C++ also every C++ header. Kernels, images and the Graph are in libvkcnn
 * (vkcnn::vkcnn, pkg-config vkcnn); ONNX import and sessions in libvkcnn_onnx (vkcnn::onnx,
 * pkg-config vkcnn_onnx). */
#pragma once

#include "vkcnn/version.h"
#include "vkcnn/vkcnn_c.h"

#ifdef __cplusplus
#include "vkcnn/arithmetic.h"
#include "vkcnn/buffer.h"
#include "vkcnn/command_buffer.h"
#include "vkcnn/concat.h"
#include "vkcnn/context.h"
#include "vkcnn/convolution.h"
#include "vkcnn/convolution_transpose.h"
#include "vkcnn/convolution_tuning.h"
#include "vkcnn/error.h"
#include "vkcnn/graph.h"
#include "vkcnn/image.h"
#include "vkcnn/kernel.h"
#include "vkcnn/neuron.h"
#include "vkcnn/normalization.h"
#include "vkcnn/onnx.h"
#include "vkcnn/padding.h"
#include "vkcnn/pooling.h"
#include "vkcnn/rearrange.h"
#include "vkcnn/resize.h"
#include "vkcnn/session.h"
#include "vkcnn/session_pool.h"
#include "vkcnn/softmax.h"
#include "vkcnn/squeeze_excitation.h"
#include "vkcnn/tensor.h"
#include "vkcnn/tensor_ops.h"
#endif
