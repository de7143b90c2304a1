// The whole public API of vkcnn.
#pragma once

#include "vkcnn/command_buffer.h"
#include "vkcnn/context.h"
#include "vkcnn/error.h"
#include "vkcnn/image.h"
#include "vkcnn/kernel.h"
#include "vkcnn/neuron.h"
