// The Graph's front: construction, plan() and compile() running the phases in order (build.cpp
// and build_tensor.cpp record nodes; plan(): optimize.cpp rewrites them, the one owner of fusion,
// storage.cpp plans concatenations, schedule.cpp orders them in levels, all without a device;
// compile(): lower.cpp makes the kernels), and describe(). Encoding is encode.cpp, over the batch
// plan of plan.cpp. See vkcnn/graph.h for the contract.
#include "vkcnn/graph.h"

#include <sstream>

#include "graph/state.h"
#include "memory/upload_batch.h"
#include "vulkan/context_impl.h"
#include "load_clock.h"

namespace vkcnn {

using detail::GraphNode;
using detail::kNone;
using detail::LoadPhase;
using detail::PhaseTimer;

Graph::Graph(const Context& context, const GraphOptions& options)
    : state_(std::make_unique<detail::GraphState>(detail::GraphState{context, options})) {}
Graph::~Graph() = default;
Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;

void Graph::plan() {
  auto& s = *state_;
  if (s.planned) return;
  if (s.outputs.empty())
    throw Error(ErrorCode::invalidArgument, "graph '" + s.options.label + "' has no outputs");
  {
    PhaseTimer timer(s.context.impl()->loadClock(), LoadPhase::optimize);
    if (s.options.optimize && !s.optimized) s.optimize();
    s.optimized = true;
    s.planConcatenations(s.options.optimize);
  }
  s.schedule();
  s.planned = true;
}

void Graph::compile() {
  auto& s = *state_;
  if (s.compiled) return;
  plan();
  {
    PhaseTimer timer(s.context.impl()->loadClock(), LoadPhase::lower);
    detail::UploadBatch uploads(*s.context.impl());
    s.lower();
    uploads.finish();
  }
  s.compiled = true;
}

std::vector<std::string> Graph::describe() const {
  std::vector<std::string> lines;
  const auto& s = *state_;
  for (const GraphNode& n : s.nodes) {
    if (n.removed) continue;
    std::ostringstream line;
    line << n.name << " (" << detail::kindName(n.parameters);
    const NeuronDescriptor* neuron = nullptr;
    if (const auto* c = n.as<detail::ConvolutionNode>()) {
      if (c->descriptor.batchNormalization || c->foldedBatchNormalizations) line << " + batch norm";
      if (c->foldedAffines) line << " + affine";
      if (const auto& a = c->descriptor.sourceActivation)
        line << " + source activation" << (a->neuron == NeuronType::relu ? " (relu)" : "");
      if (n.inputs.size() > 1) line << " + residual '" << s.tensors[n.inputs[1]].name << "'";
      // The lowered kernel's descriptor: what GraphOptions::accumulatorPrecision asked of it.
      const auto* k = dynamic_cast<const Convolution*>(n.unary.get());
      if (k && k->descriptor().accumulatorPrecision == AccumulatorPrecision::float16)
        line << " + float16 accumulators";
      neuron = &c->descriptor.neuron;
    } else if (const auto* a = n.as<detail::ArithmeticNode>()) {
      neuron = &a->neuron;
    } else if (const auto* b = n.as<detail::BatchNormalizationNode>()) {
      neuron = &b->neuron;
    } else if (const auto* f = n.as<detail::AffineNode>()) {
      neuron = &f->neuron;
    } else if (const auto* se = n.as<detail::SqueezeExcitationNode>()) {
      line << " " << se->descriptor.featureChannels << " -> " << se->descriptor.reducedChannels
           << " + " << toString(se->descriptor.inner.type) << " -> "
           << se->descriptor.featureChannels << " + " << toString(se->descriptor.gate.type);
    } else if (const auto* concat = n.as<detail::ConcatNode>()) {
      line << ", copies " << concat->copies.size() << " of " << n.inputs.size() << " inputs";
    }
    if (neuron && neuron->type != NeuronType::none) line << " + " << toString(neuron->type);
    const auto& out = s.tensors[n.output];
    if (out.isTensor())
      line << ") -> tensor " << detail::GraphState::shapeText(out.tensorShape);
    else
      line << ") -> " << out.shape.width << "x" << out.shape.height << "x"
           << out.shape.featureChannels;
    if (out.storedIn != kNone)
      line << " at channel " << out.channelOffset << " of '" << s.tensors[out.storedIn].name << "'";
    lines.push_back(line.str());
  }
  return lines;
}

}  // namespace vkcnn
