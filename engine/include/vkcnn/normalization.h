// Normalisation kernels: local response normalisation across channels and instance normalisation.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "vkcnn/export.h"
#include "vkcnn/kernel.h"
#include "vkcnn/neuron.h"

namespace vkcnn {

// Local response normalisation across channels (ONNX LRN, MPSCNNCrossChannelNormalization).
// For channel c of the source window (C channels, each pixel and image independently):
//
//   y[c] = x[c] / (bias + alpha / size * sum_{c' = max(0, c - floor((size-1)/2))}
//                                          ^{min(C-1, c + ceil((size-1)/2))} x[c']^2) ^ beta
//
// Channels outside the window count as zero (ONNX clamps the sum to [0, C-1]). The defaults are
// ONNX's. In MPS terms: size = kernelSize, alpha = alpha, beta = beta, bias = delta (MPS's
// defaults are alpha 1, beta 5, delta 1). An even size reaches one channel further after c than
// before it.
struct LocalResponseNormalizationDescriptor {
  uint32_t size = 5;    // channels summed, >= 1
  float alpha = 1e-4f;  // the sum's factor, divided by size
  float beta = 0.75f;   // the exponent
  float bias = 1.0f;    // > 0, with alpha >= 0, keeps the denominator positive
};

// The kernel of LocalResponseNormalizationDescriptor's formula.
class VKCNN_API LocalResponseNormalization : public UnaryKernel {
 public:
  // A descriptor out of range (size 0, alpha < 0, bias <= 0, a value not finite) is an
  // invalidArgument Error.
  LocalResponseNormalization(const Context& context,
                             const LocalResponseNormalizationDescriptor& descriptor);
  // As given at construction.
  const LocalResponseNormalizationDescriptor& descriptor() const { return descriptor_; }

 protected:
  void encodeKernel(detail::KernelEncoding& encoding) override;

 private:
  LocalResponseNormalizationDescriptor descriptor_;
};

// Instance normalisation (ONNX InstanceNormalization, MPSCNNInstanceNormalization), optionally
// followed by a fused neuron. For image n and channel c of the source window:
//
//   y = neuron(gamma[c] * (x - mean[n,c]) / sqrt(var[n,c] + epsilon) + beta[c])
//
// where mean and var (biased, divided by H*W) are taken over all H x W pixels of that channel of
// the source image. The statistics ignore clipRect and offset: those only place what is written
// (destination pixel p reads the source at p - clipRect.origin + offset, zero outside), so a
// clipped encode writes a tile of the unclipped result.
struct InstanceNormalizationDescriptor {
  uint32_t featureChannels = 0;  // channels of the source window the kernel normalises
  std::vector<float> gamma;      // featureChannels scales; empty means all 1 (MPS: nil gamma)
  std::vector<float> beta;       // featureChannels offsets; empty means all 0 (MPS: nil beta)
  float epsilon = 1e-5f;         // >= 0; 0 makes a constant channel non-finite
  NeuronDescriptor neuron;       // applied last; NeuronType::none for plain normalisation
};

// The kernel of InstanceNormalizationDescriptor's formula: one pass for the statistics of each
// image and channel, one for the output.
class VKCNN_API InstanceNormalization : public UnaryKernel {
 public:
  // gamma and beta are copied; a count other than featureChannels is an invalidArgument Error.
  InstanceNormalization(const Context& context, const InstanceNormalizationDescriptor& descriptor);
  // As given at construction.
  const InstanceNormalizationDescriptor& descriptor() const { return descriptor_; }

 protected:
  // The source window must hold exactly featureChannels channels.
  void validate(const detail::KernelEncoding& encoding) const override;
  void encodeKernel(detail::KernelEncoding& encoding) override;

 private:
  InstanceNormalizationDescriptor descriptor_;
  std::shared_ptr<void> parameters_;  // device buffer: gamma then beta
  std::shared_ptr<void> slopes_;      // device buffer of PReLU slopes
};

}  // namespace vkcnn
