// Neuron plumbing shared by every kernel that fuses a neuron (standalone, convolution,
// element-wise).
#pragma once

#include <memory>
#include <string>

#include "interface.h"
#include "memory/device_buffer.h"
#include "vkcnn/neuron.h"

namespace vkcnn::detail {

class ContextImpl;

// Throws invalidArgument for a neuron that cannot be encoded.
void checkNeuron(const NeuronDescriptor& neuron, const std::string& what);
shader::NeuronParams neuronParams(const NeuronDescriptor& neuron);
// The PReLU slopes as a device buffer, or the Context's empty buffer for other neurons.
std::shared_ptr<DeviceBuffer> neuronSlopes(ContextImpl& context, const NeuronDescriptor& neuron,
                                           const std::string& label);

}  // namespace vkcnn::detail
