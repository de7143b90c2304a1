// Puts a graph's nodes in topological order before onnx's checker sees them. The checker refuses
// "Nodes in a graph must be topologically sorted", but onnxruntime runs such models and
// converters write them. The order is stable: the file's order wherever it is already valid.
#pragma once

#include <onnx/onnx_pb.h>

namespace vkcnn::detail::onnx_import {

// Reorders the nodes of `graph` and of every subgraph in its nodes' attributes so that each node
// comes after the nodes producing its inputs (and the outer values its subgraphs read). Of the
// nodes that are ready, the earliest in the file goes first, so a sorted graph is left as it is.
// Nodes that depend on each other in a cycle are Error(invalidModel) naming them. Names no node
// produces (graph inputs, initializers, outer scopes, dangling ones) are left to the checker.
// `graph` must have passed the model file's validation (subgraphs nested at most 16 deep).
void sortTopologically(onnx::GraphProto& graph);

}  // namespace vkcnn::detail::onnx_import
