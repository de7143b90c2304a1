// vkcnn inspect: what a model holds, without a GPU: inputs, outputs, opset, operators (and whether
// vkcnn supports each), parameters, and FLOPs of its convolutions and matrix products at the
// shapes given. vkcnn ops: the operators the importer supports.
//
// The model is validated by the library first (vkcnn::inspectOnnx: checker, sizes, hostile files);
// the census then reads it with Debian's libonnx and its shape inference. --dot loads the model on
// a device and draws the optimised Graph in Graphviz's dot language.
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>

#include "cli.h"
#include "platform/platform.h"

namespace vkcnn::cli {

namespace {

struct Census {
  std::map<std::string, uint64_t> operators;  // "domain:op" (op alone for ai.onnx) -> nodes
  uint64_t parameters = 0, parameterBytes = 0, initializers = 0;
  uint64_t flops = 0;
  uint32_t flopNodes = 0,
           flopNodesUnknown = 0;  // Conv/ConvTranspose/Gemm/MatMul with/without shapes
  std::string flopsNote;          // why FLOPs are missing, if they are
};

uint64_t product(const std::vector<int64_t>& dims, size_t from = 0) {
  uint64_t p = 1;
  for (size_t i = from; i < dims.size(); ++i) p *= uint64_t(std::max<int64_t>(dims[i], 0));
  return p;
}

uint64_t elementBytes(int32_t type) {
  switch (type) {
    case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::INT64:
    case onnx::TensorProto::UINT64:
      return 8;
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16:
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::UINT16:
      return 2;
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::BOOL:
      return 1;
    default:
      return 4;
  }
}

// `shapes` are the inputs' shapes (every dimension known) or empty: then no FLOPs.
Census census(const std::string& path, const std::map<std::string, std::vector<int64_t>>& shapes) {
  const platform::MappedFile file(path, path);
  onnx::ModelProto model;
  if (file.size() > size_t(std::numeric_limits<int>::max()) ||
      !model.ParseFromArray(file.bytes().data(), int(file.size())))
    throw Error(ErrorCode::invalidModel, path + ": protobuf parsing failed");
  Census c;
  const auto& g = model.graph();
  for (const auto& n : g.node()) {
    const std::string domain = n.domain() == "ai.onnx" ? "" : n.domain();
    c.operators[domain.empty() ? n.op_type() : domain + ":" + n.op_type()]++;
  }
  std::map<std::string, std::vector<int64_t>> dims;
  std::set<std::string> initializerNames;
  for (const auto& t : g.initializer()) {
    std::vector<int64_t> d(t.dims().begin(), t.dims().end());
    c.parameters += product(d);
    c.parameterBytes += product(d) * elementBytes(t.data_type());
    c.initializers++;
    dims[t.name()] = d;
    initializerNames.insert(t.name());
  }
  if (shapes.empty()) {
    c.flopsNote = "give the dynamic inputs' sizes with --shape (or --batch) for FLOPs";
    return c;
  }
  // Fix the inputs' shapes, then let onnx infer every other one.
  for (auto& input : *model.mutable_graph()->mutable_input()) {
    auto it = shapes.find(input.name());
    if (it == shapes.end()) continue;
    auto* shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->clear_dim();
    for (int64_t d : it->second) shape->add_dim()->set_dim_value(d);
  }
  try {
    onnx::shape_inference::InferShapes(model);
  } catch (const std::exception& e) {
    c.flopsNote = std::string("onnx's shape inference failed: ") + e.what();
    return c;
  }
  auto record = [&](const onnx::ValueInfoProto& v) {
    if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return;
    std::vector<int64_t> d;
    for (const auto& dim : v.type().tensor_type().shape().dim())
      d.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
    if (std::all_of(d.begin(), d.end(), [](int64_t x) { return x >= 0; })) dims[v.name()] = d;
  };
  for (const auto& v : model.graph().input()) record(v);
  for (const auto& v : model.graph().value_info()) record(v);
  for (const auto& v : model.graph().output()) record(v);
  auto known = [&](const std::string& name) -> const std::vector<int64_t>* {
    auto it = dims.find(name);
    return it == dims.end() ? nullptr : &it->second;
  };
  for (const auto& n : model.graph().node()) {
    const std::string& op = n.op_type();
    if (op != "Conv" && op != "ConvTranspose" && op != "Gemm" && op != "MatMul") continue;
    c.flopNodes++;
    const auto* a = n.input_size() > 0 ? known(n.input(0)) : nullptr;
    const auto* b = n.input_size() > 1 ? known(n.input(1)) : nullptr;
    const auto* y = n.output_size() > 0 ? known(n.output(0)) : nullptr;
    if (!a || !b || !y || b->size() < 1) {
      c.flopNodesUnknown++;
      continue;
    }
    if (op == "Conv") {
      c.flops += 2 * product(*y) * product(*b, 1);  // W [M, C/group, kH, kW]
    } else if (op == "ConvTranspose") {
      c.flops += 2 * product(*a) * product(*b, 1);  // W [C, M/group, kH, kW]
    } else if (op == "Gemm") {
      bool transA = false;
      for (const auto& attribute : n.attribute())
        if (attribute.name() == "transA") transA = attribute.i() != 0;
      const int64_t k = a->size() == 2 ? (*a)[transA ? 0 : 1] : 0;
      c.flops += 2 * product(*y) * uint64_t(std::max<int64_t>(k, 0));
    } else {
      c.flops += 2 * product(*y) * uint64_t(std::max<int64_t>(a->empty() ? 0 : a->back(), 0));
    }
  }
  return c;
}

std::string declared(const OnnxTensorInfo& info) {
  std::string s = "[";
  for (size_t i = 0; i < info.dims.size(); ++i)
    s += (i ? ", " : "") + (info.dims[i] >= 0 ? std::to_string(info.dims[i])
                            : i < info.dimParams.size() && !info.dimParams[i].empty()
                                ? info.dimParams[i]
                                : std::string("?"));
  return s + "]";
}

std::string readable(double v) {
  const char* units[] = {"", " k", " M", " G", " T", " P"};
  int u = 0;
  while (v >= 1000 && u < 5) v /= 1000, ++u;
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, u ? "%.2f%s" : "%.0f%s", v, units[u]);
  return buffer;
}

// One kernel of the compiled Graph, from its Graph::describe() line: "NAME (KIND[ + fused...]) ->
// WxHxC" or "-> tensor [dims]", maybe "at channel N of 'VALUE'" (written in place into a concat).
struct DrawnNode {
  std::string name, kind, output, inPlace;
  bool tensor = false, fused = false;
};

DrawnNode parseDescription(const std::string& line) {
  DrawnNode n;
  const size_t arrow = line.rfind(") -> ");
  if (arrow == std::string::npos) return n.name = line, n;
  // The kind's parenthesis: the last " (" before the arrow that is not inside the name, which
  // may hold parentheses of its own ("x (view)"): the first one after which the brackets balance.
  size_t open = std::string::npos;
  for (size_t at = line.find(" ("); at != std::string::npos && at < arrow;
       at = line.find(" (", at + 1)) {
    int depth = 0;
    for (size_t k = at + 1; k < arrow; ++k) depth += line[k] == '(' ? 1 : line[k] == ')' ? -1 : 0;
    if (depth == 1) open = at;
  }
  if (open == std::string::npos) return n.name = line, n;
  n.name = line.substr(0, open);
  n.kind = line.substr(open + 2, arrow - open - 2);
  n.fused = n.kind.find(" + ") != std::string::npos;
  std::string rest = line.substr(arrow + 5);
  if (const size_t at = rest.find(" at channel "); at != std::string::npos)
    n.inPlace = rest.substr(at + 1), rest.resize(at);
  n.tensor = rest.rfind("tensor", 0) == 0;
  n.output = rest;
  return n;
}

std::string dotQuote(const std::string& s) {
  std::string q = "\"";
  for (char c : s)
    q += c == '\n'               ? std::string("\\n")
         : c == '"' || c == '\\' ? std::string("\\") + c
                                 : std::string(1, c);
  return q + "\"";
}

// Edges come from the ONNX file. The kernels an ONNX node became share its label (the importer's),
// some with a suffix: " (constant)" an operand it made, " (view)" / " (image view)" a reshaped
// view, " (as tensor)" / " (as image)" a conversion between the layouts. They are drawn as a chain
// from the one named as the node (its inputs point there) to the last (its consumers read that);
// constants point at the chain's head. A node's inputs are traced back through the nodes compile()
// removed: an add fused as a convolution's residual stands for that convolution (its other input
// then points at it), any other removed node for all of its sources (an activation folded into
// its producer has one; a concatenation written in place by its inputs has several).
class GraphDrawing {
 public:
  GraphDrawing(const std::string& path, const Session& session) {
    const platform::MappedFile file(path, path);
    if (!model_.ParseFromArray(file.bytes().data(), int(file.size())))
      throw Error(ErrorCode::invalidModel, path + ": protobuf parsing failed");
    for (const std::string& line : session.graph().describe())
      nodes_.push_back(parseDescription(line));
    for (size_t k = 0; k < nodes_.size(); ++k) {
      bool constant = false;
      const std::string base = baseName(nodes_[k].name, &constant);
      (constant ? operands_ : chains_)[base].push_back(k);
    }
    const auto& g = model_.graph();
    for (const auto& t : g.initializer()) constants_.insert(t.name());
    for (int i = 0; i < g.node_size(); ++i) {
      const auto& n = g.node(i);
      for (const auto& out : n.output()) producer_[out] = i;
      // The importer's node label (Importer::importNode).
      labels_.push_back(!n.name().empty() ? n.name()
                        : n.output_size() && !n.output(0).empty()
                            ? n.op_type() + " -> " + n.output(0)
                            : n.op_type() + " #" + std::to_string(i));
    }
  }

  std::string dot(const Session& session, const TemporaryPoolStatistics& pool) {
    std::string out =
        "digraph vkcnn {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n";
    out += "  labelloc=t; label=" + dotQuote(summary(session, pool)) + ";\n";
    for (const auto& in : model_.graph().input())
      if (!constants_.count(in.name())) {
        out += "  " + dotQuote("in:" + in.name()) +
               " [shape=invhouse, label=" + dotQuote("input " + in.name()) + "];\n";
        chain("in:" + in.name(), in.name());
      }
    for (size_t k = 0; k < nodes_.size(); ++k) out += "  " + drawn(k) + "\n";
    const auto& g = model_.graph();
    // Every chain first: a model's nodes need not be in order.
    std::vector<std::string> heads;
    for (int i = 0; i < g.node_size(); ++i) heads.push_back(chain({}, labels_[size_t(i)]));
    for (int i = 0; i < g.node_size(); ++i)
      if (!heads[size_t(i)].empty())
        for (const auto& input : g.node(i).input())
          for (const std::string& from : sources(input)) edges_.insert({from, heads[size_t(i)]});
    for (const auto& o : g.output()) {
      out += "  " + dotQuote("out:" + o.name()) +
             " [shape=house, label=" + dotQuote("output " + o.name()) + "];\n";
      for (const std::string& from : sources(o.name())) edges_.insert({from, "out:" + o.name()});
    }
    for (const auto& [from, to] : edges_)
      out += "  " + dotQuote(from) + " -> " + dotQuote(to) + ";\n";
    out +=
        "  subgraph cluster_legend { label=\"legend\"; fontsize=9;\n"
        "    legend_image [shape=box, style=filled, fillcolor=\"#cfe2ff\", label=\"writes an "
        "Image\"];\n"
        "    legend_tensor [shape=box3d, style=filled, fillcolor=\"#ffd8a8\", label=\"writes a "
        "Tensor\"];\n"
        "    legend_fused [shape=box, style=\"filled,bold\", penwidth=2, fillcolor=white, "
        "label=\"fused kernel\"];\n  }\n}\n";
    return out;
  }

 private:
  static std::string id(size_t k) { return "k" + std::to_string(k); }

  // A name without the importer's suffixes; `constant` says whether it was an operand.
  static std::string baseName(std::string name, bool* constant) {
    *constant = false;
    for (bool stripped = true; stripped;) {
      stripped = false;
      for (const char* suffix :
           {" (constant)", " (view)", " (image view)", " (as tensor)", " (as image)"})
        if (endsWith(name, suffix)) {
          *constant = *constant || std::string(suffix) == " (constant)";
          name.resize(name.size() - std::strlen(suffix));
          stripped = true;
        }
    }
    return name;
  }

  std::string drawn(size_t k) const {
    const DrawnNode& n = nodes_[k];
    std::string label = n.name + "\n" + (n.fused ? "fused: " : "") + n.kind + "\n-> " +
                        (n.tensor ? "" : "image ") + n.output;
    if (!n.inPlace.empty()) label += "\nwritten in place " + n.inPlace;
    // Images (the texture layout) blue, Tensors (buffers) orange; fused kernels drawn bold.
    return id(k) + " [shape=" + (n.tensor ? "box3d" : "box") + ", style=\"filled" +
           (n.fused ? ",bold" : "") +
           "\", fillcolor=" + (n.tensor ? "\"#ffd8a8\"" : "\"#cfe2ff\"") +
           (n.fused ? ", penwidth=2" : "") + ", label=" + dotQuote(label) + "];";
  }

  // Draws the chain of kernels named `base` after `start` (an input's node, or none) and its
  // operands' edges; returns its head ("" if no kernel has that name). tails_[base] is its last.
  std::string chain(const std::string& start, const std::string& base) {
    const auto c = chains_.find(base);
    std::string previous = start, head = start;
    if (c != chains_.end())
      for (size_t k : c->second) {
        if (!previous.empty()) edges_.insert({previous, id(k)});
        if (head.empty()) head = id(k);
        previous = id(k);
      }
    if (const auto o = operands_.find(base); o != operands_.end() && !head.empty())
      for (size_t k : o->second) edges_.insert({id(k), head});
    if (!previous.empty()) tails_[base] = previous;
    return head;
  }

  static std::string summary(const Session& session, const TemporaryPoolStatistics& pool) {
    const GraphStatistics st = session.graph().statistics();
    std::string s = session.modelInfo().graphName + ": " + std::to_string(st.nodes) + " nodes -> " +
                    std::to_string(st.kernels) + " kernels (" + std::to_string(st.fusedNeurons) +
                    " neurons fused, " + std::to_string(st.foldedBatchNormalizations) +
                    " batch norms folded, " + std::to_string(st.fusedResiduals) +
                    " residual adds fused, " + std::to_string(st.conversions) +
                    " image/tensor conversions)\n";
    s += "batch " + std::to_string(session.batch());
    s += session.chunks() > 1 ? " split into " + std::to_string(session.chunks()) + " chunks of " +
                                    std::to_string(session.chunkSize()) + " (the array-layer limit)"
                              : " in one piece";
    s += "; temporaries: " + std::to_string(pool.temporariesCreated) + " made, " +
         std::to_string(pool.reuses) + " reusing freed memory, peak " +
         std::to_string(pool.peakBytesInUse) + " bytes of " +
         std::to_string(session.graph().intermediateTensorBytes(session.chunkSize())) +
         " without reuse";
    return s;
  }

  // The drawn nodes that produce ONNX value `name`.
  std::vector<std::string> sources(const std::string& name) {
    if (constants_.count(name) || name.empty()) return {};
    const auto p = producer_.find(name);
    if (p == producer_.end()) {
      const auto tail = tails_.find(name);  // an input, maybe converted
      return {tail != tails_.end() ? tail->second : "in:" + name};
    }
    if (const auto tail = tails_.find(labels_[size_t(p->second)]); tail != tails_.end())
      return {tail->second};
    if (auto memo = removed_.find(p->second); memo != removed_.end()) return memo->second;
    removed_[p->second] = {};  // a cycle (none in a valid model) ends here
    std::vector<std::string> all, residual;
    for (const auto& input : model_.graph().node(p->second).input())
      for (const std::string& s : sources(input))
        if (std::find(all.begin(), all.end(), s) == all.end()) {
          all.push_back(s);
          if (s[0] == 'k' &&
              nodes_[std::stoul(s.substr(1))].kind.find("+ residual") != std::string::npos)
            residual.push_back(s);
        }
    const std::string& op = model_.graph().node(p->second).op_type();
    if ((op == "Add" || op == "Sum") && residual.size() == 1) {
      for (const std::string& s : all)
        if (s != residual[0]) edges_.insert({s, residual[0]});
      all = residual;
    }
    return removed_[p->second] = all;
  }

  onnx::ModelProto model_;
  std::vector<DrawnNode> nodes_;
  std::vector<std::string> labels_;                      // per ONNX node
  std::map<std::string, std::vector<size_t>> chains_;    // base name -> drawn nodes in order
  std::map<std::string, std::vector<size_t>> operands_;  // base name -> its constants
  std::map<std::string, std::string> tails_;             // base name -> its chain's last
  std::set<std::string> constants_;                      // initializers
  std::map<std::string, int> producer_;                  // ONNX value -> ONNX node
  std::map<int, std::vector<std::string>> removed_;      // ONNX node compile() removed -> sources
  std::set<std::pair<std::string, std::string>> edges_;
};

void writeDot(const Arguments& args, const std::string& path, const std::string& dotPath) {
  const ModelSetup setup = prepareModel(args, false);
  Context context = makeContext(args);
  Session session = loadSession(context, setup);
  // One recording, for what the temporary pool made and reused.
  CommandBuffer cb(context, "inspect");
  session.encode(cb);
  const TemporaryPoolStatistics pool = cb.temporaryPoolStatistics();
  cb.commit();
  cb.waitUntilCompleted();
  writeText(dotPath, GraphDrawing(path, session).dot(session, pool), "--dot");
}

}  // namespace

int inspect(const std::vector<std::string>& rest) {
  std::vector<Option> options = modelOptions();
  options.push_back({"--json", OptionKind::value});
  options.push_back({"--dot", OptionKind::value});
  Arguments args("inspect", rest, options);
  if (args.has("--help")) {
    std::printf(
        "usage: vkcnn inspect MODEL.onnx [--shape NAME=DIMS] [--batch N] [--json FILE]\n"
        "                                [--dot FILE.dot]\n\n"
        "Describes a model without running it: inputs and outputs with their shapes (dynamic\n"
        "dimensions by name), IR version, opset, producer, the operators it uses and whether\n"
        "vkcnn supports each, its parameters, and the FLOPs of its convolutions and matrix\n"
        "products (2 per multiply-add) at the input shapes (dynamic sizes from --shape, the\n"
        "batch from --batch, default 1).\n\n"
        "  --shape NAME=DIMS   the shape of input NAME, e.g. --shape input=1x3x48x320\n"
        "  --batch N           the size of a dynamic batch dimension (default 1)\n"
        "  --json FILE         the same as JSON (- for standard output)\n"
        "  --dot FILE.dot      also load the model on a device and draw its optimised graph in\n"
        "                      Graphviz's dot language (dot -Tsvg FILE.dot -o graph.svg): fused\n"
        "                      kernels, Image and Tensor values, in-place writes, temporaries\n"
        "                      and the batch split; --device, --fp16/--fp32 apply to it\n");
    return 0;
  }
  const std::string json = args.get("--json");
  const std::string dotPath = args.get("--dot");
  if (!json.empty()) checkWritable(json, "--json");
  if (!dotPath.empty()) checkWritable(dotPath, "--dot");
  if (json == "-" && dotPath == "-")
    throw UsageError("--json - and --dot - would both write to standard output; give one a file");
  const std::string path = args.model();
  if (isCompiledFile(path)) return inspectCompiled(path, args);
  const OnnxModelInfo info = inspectOnnx(path);
  // The input shapes for FLOPs, if every dynamic dimension gets a size.
  std::map<std::string, std::vector<int64_t>> shapes;
  std::string shapesNote;
  try {
    ModelSetup setup = prepareModel(args, false);
    const int64_t batch = setup.options.batch ? setup.options.batch : 1;
    for (const auto& input : info.inputs) {
      auto given = setup.options.inputShapes.find(input.name);
      std::vector<int64_t> d =
          given != setup.options.inputShapes.end() ? given->second : input.dims;
      if (!d.empty() && d[0] < 0) d[0] = batch;
      shapes[input.name] = d;
    }
  } catch (const UsageError& e) {
    if (!args.all("--shape").empty() || args.has("--batch")) throw;
    shapes.clear();
  }
  const Census c = census(path, shapes);
  const std::vector<std::string> supported = supportedOnnxOperators();
  auto isSupported = [&](const std::string& op) {
    return std::binary_search(supported.begin(), supported.end(), op);
  };
  uint64_t unsupportedNodes = 0;
  for (const auto& [op, count] : c.operators) unsupportedNodes += isSupported(op) ? 0 : count;

  if (json != "-" && dotPath != "-") {
    std::printf("%s\n", path.c_str());
    std::printf("  producer %s %s, IR version %lld, opset %lld, graph '%s'\n",
                info.producerName.empty() ? "(none)" : info.producerName.c_str(),
                info.producerVersion.c_str(), static_cast<long long>(info.irVersion),
                static_cast<long long>(info.opsetVersion), info.graphName.c_str());
    std::printf("inputs:\n");
    for (const auto& i : info.inputs)
      std::printf("  %-24s %-20s %s\n", i.name.c_str(), declared(i).c_str(), i.elementType.c_str());
    std::printf("outputs:\n");
    for (const auto& o : info.outputs)
      std::printf("  %-24s %-20s %s\n", o.name.c_str(), declared(o).c_str(), o.elementType.c_str());
    std::printf("operators (nodes, supported by vkcnn):\n");
    for (const auto& [op, count] : c.operators)
      std::printf("  %-24s %6llu  %s\n", op.c_str(), static_cast<unsigned long long>(count),
                  isSupported(op) ? "yes" : "NO");
    if (unsupportedNodes)
      std::printf("  %llu nodes use operators vkcnn does not support\n",
                  static_cast<unsigned long long>(unsupportedNodes));
    std::printf("parameters: %s (%llu) in %llu initializers, %s bytes\n",
                readable(double(c.parameters)).c_str(),
                static_cast<unsigned long long>(c.parameters),
                static_cast<unsigned long long>(c.initializers),
                readable(double(c.parameterBytes)).c_str());
    if (!c.flopsNote.empty()) {
      std::printf("FLOPs: unknown (%s)\n", c.flopsNote.c_str());
    } else {
      std::string at;
      for (const auto& [name, d] : shapes)
        at += (at.empty() ? "" : ", ") + name + " " + shapeText(d);
      std::printf("FLOPs: %s (%llu) in %u convolutions and matrix products at %s\n",
                  readable(double(c.flops)).c_str(), static_cast<unsigned long long>(c.flops),
                  c.flopNodes - c.flopNodesUnknown, at.c_str());
      if (c.flopNodesUnknown)
        std::printf("  (%u more whose shapes onnx's shape inference did not find)\n",
                    c.flopNodesUnknown);
    }
  }
  if (!json.empty()) {
    auto tensors = [](const std::vector<OnnxTensorInfo>& list) {
      std::string s = "[";
      for (const auto& t : list) {
        std::string dims = "[";
        for (size_t i = 0; i < t.dims.size(); ++i)
          dims += (i ? ", " : "") +
                  (t.dims[i] >= 0 ? std::to_string(t.dims[i])
                                  : Json::quote(i < t.dimParams.size() ? t.dimParams[i] : ""));
        s += (s.size() > 1 ? ", " : "") + Json()
                                              .add("name", t.name)
                                              .raw("shape", dims + "]")
                                              .add("element_type", t.elementType)
                                              .str();
      }
      return s + "]";
    };
    std::string ops = "[";
    for (const auto& [op, count] : c.operators)
      ops += (ops.size() > 1 ? ", " : "") +
             Json().add("op", op).add("nodes", count).add("supported", isSupported(op)).str();
    Json j;
    j.add("model", path)
        .add("producer", info.producerName)
        .add("producer_version", info.producerVersion)
        .add("ir_version", int64_t(info.irVersion))
        .add("opset", int64_t(info.opsetVersion))
        .add("graph", info.graphName)
        .raw("inputs", tensors(info.inputs))
        .raw("outputs", tensors(info.outputs))
        .raw("operators", ops + "]")
        .add("unsupported_nodes", unsupportedNodes)
        .add("parameters", c.parameters)
        .add("parameter_bytes", c.parameterBytes);
    if (c.flopsNote.empty())
      j.add("flops", c.flops);
    else
      j.raw("flops", "null").add("flops_note", c.flopsNote);
    writeText(json, j.str() + "\n", "--json");
  }
  if (!dotPath.empty()) writeDot(args, path, dotPath);
  return 0;
}

int ops(const std::vector<std::string>& rest) {
  Arguments args("ops", rest, {{"--json", OptionKind::value}});
  if (args.has("--help")) {
    std::printf(
        "usage: vkcnn ops [--json FILE]\n\n"
        "Lists the ONNX operators (default domain) vkcnn's importer supports.\n");
    return 0;
  }
  if (!args.positional().empty()) throw UsageError("ops takes no model");
  const std::string json = args.get("--json");
  if (!json.empty()) checkWritable(json, "--json");
  const std::vector<std::string> supported = supportedOnnxOperators();
  if (json != "-")
    for (const auto& op : supported) std::printf("%s\n", op.c_str());
  if (!json.empty()) {
    std::string list = "[";
    for (const auto& op : supported) list += (list.size() > 1 ? ", " : "") + Json::quote(op);
    writeText(json, Json().raw("operators", list + "]").str() + "\n", "--json");
  }
  return 0;
}

}  // namespace vkcnn::cli
