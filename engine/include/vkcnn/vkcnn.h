// The whole public API of vkcnn.
#pragma once

#include "vkcnn/arithmetic.h"
#include "vkcnn/buffer.h"
#include "vkcnn/command_buffer.h"
#include "vkcnn/concat.h"
#include "vkcnn/context.h"
#include "vkcnn/convolution.h"
#include "vkcnn/convolution_transpose.h"
#include "vkcnn/error.h"
#include "vkcnn/graph.h"
#include "vkcnn/image.h"
#include "vkcnn/kernel.h"
#include "vkcnn/neuron.h"
#include "vkcnn/normalization.h"
#include "vkcnn/pooling.h"
#include "vkcnn/rearrange.h"
#include "vkcnn/softmax.h"
