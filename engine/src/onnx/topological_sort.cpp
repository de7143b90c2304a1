// Kahn's algorithm with the ready nodes in a min-heap of file positions (onnx/topological_sort.h).
#include "onnx/topological_sort.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "onnx/onnx_tensor.h"

namespace vkcnn::detail::onnx_import {
namespace {

// Adds the names the subgraph reads from outside itself (its outer-scope values) to `names`:
// what its nodes read, directly or through their own subgraphs, minus what it defines.
void outerNames(const onnx::GraphProto& graph, std::set<std::string>& names) {
  std::set<std::string> defined, read;
  for (const auto& v : graph.input()) defined.insert(v.name());
  for (const auto& t : graph.initializer()) defined.insert(t.name());
  for (const auto& node : graph.node()) {
    for (const auto& out : node.output()) defined.insert(out);
    for (const auto& in : node.input()) read.insert(in);
    for (const auto& a : node.attribute()) {
      if (a.has_g()) outerNames(a.g(), read);
      for (const auto& g : a.graphs()) outerNames(g, read);
    }
  }
  for (const auto& out : graph.output()) read.insert(out.name());
  for (const auto& name : read)
    if (!name.empty() && !defined.count(name)) names.insert(name);
}

// Every name node `k` needs before it runs: its inputs and its subgraphs' outer values.
std::set<std::string> neededNames(const onnx::NodeProto& node) {
  std::set<std::string> names(node.input().begin(), node.input().end());
  for (const auto& a : node.attribute()) {
    if (a.has_g()) outerNames(a.g(), names);
    for (const auto& g : a.graphs()) outerNames(g, names);
  }
  names.erase("");
  return names;
}

std::string nodeName(const onnx::NodeProto& node, size_t index) {
  return (node.name().empty() ? "#" + std::to_string(index) : "'" + node.name() + "'") + " (" +
         node.op_type() + ")";
}

// A cycle among the nodes left unsorted: every one of them waits on another one of them, so
// following one wait from any of them comes back to a node already visited.
[[noreturn]] void reportCycle(const onnx::GraphProto& graph,
                              const std::vector<std::vector<size_t>>& producers,
                              const std::vector<bool>& placed) {
  size_t k = 0;
  while (placed[k]) ++k;
  std::vector<size_t> path, seenAt(placed.size(), SIZE_MAX);
  while (seenAt[k] == SIZE_MAX) {
    seenAt[k] = path.size();
    path.push_back(k);
    for (size_t p : producers[k])
      if (!placed[p]) {
        k = p;
        break;
      }
  }
  // Each node of the path waits on the next; the cycle is path[seenAt[k]..], back to its end.
  // Printed in data-flow order, producer first, closing on the node it started from.
  // A hostile model's cycle may hold millions of nodes: the message names the first few.
  const size_t length = path.size() - seenAt[k], named = std::min<size_t>(length, 16);
  std::string cycle;
  for (size_t i = path.size(); i-- > path.size() - named;)
    cycle += nodeName(graph.node(int(path[i])), path[i]) + " -> ";
  cycle += named < length ? "... (" + std::to_string(length) + " nodes)"
                          : nodeName(graph.node(int(path.back())), path.back());
  const std::string where = graph.name().empty() ? "the graph" : "graph '" + graph.name() + "'";
  invalidModel("the nodes of " + where + " form a cycle, each reading the one before: " + cycle);
}

}  // namespace

void sortTopologically(onnx::GraphProto& graph) {
  const size_t n = size_t(graph.node_size());
  for (auto& node : *graph.mutable_node())
    for (auto& a : *node.mutable_attribute()) {
      if (a.has_g()) sortTopologically(*a.mutable_g());
      for (auto& g : *a.mutable_graphs()) sortTopologically(g);
    }
  // A name two nodes produce is the checker's error; the first producer stands for it here.
  std::unordered_map<std::string, size_t> producerOf;
  for (size_t k = 0; k < n; ++k)
    for (const auto& out : graph.node(int(k)).output())
      if (!out.empty()) producerOf.emplace(out, k);
  std::vector<std::vector<size_t>> producers(n), consumers(n);
  std::vector<size_t> waiting(n, 0);
  bool sorted = true;
  for (size_t k = 0; k < n; ++k)
    for (const auto& name : neededNames(graph.node(int(k)))) {
      auto it = producerOf.find(name);
      if (it == producerOf.end()) continue;
      producers[k].push_back(it->second);
      consumers[it->second].push_back(k);
      ++waiting[k];
      sorted &= it->second < k;
    }
  if (sorted) return;
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t k = 0; k < n; ++k)
    if (waiting[k] == 0) ready.push(k);
  std::vector<size_t> order;
  std::vector<bool> placed(n, false);
  while (!ready.empty()) {
    const size_t k = ready.top();
    ready.pop();
    order.push_back(k);
    placed[k] = true;
    for (size_t c : consumers[k])
      if (--waiting[c] == 0) ready.push(c);
  }
  if (order.size() < n) reportCycle(graph, producers, placed);
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  nodes.Swap(graph.mutable_node());
  for (size_t k : order) graph.add_node()->Swap(nodes.Mutable(int(k)));
}

}  // namespace vkcnn::detail::onnx_import
