// Builds small ONNX models with the onnx protobuf API for the importer tests (test_onnx_*; those
// link onnx). Header-only so the shared test support library does not depend on onnx.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace vkcnn::test {

class OnnxModelBuilder {
 public:
  explicit OnnxModelBuilder(int64_t opset, int64_t irVersion = 8) {
    model.set_ir_version(irVersion);
    model.set_producer_name("vkcnn-test");
    auto* o = model.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    model.mutable_graph()->set_name("test");
  }

  // dims: -1 is a dynamic dimension named by dimParams[k] (or "d<k>").
  OnnxModelBuilder& input(const std::string& name, const std::vector<int64_t>& dims,
                          int32_t type = onnx::TensorProto::FLOAT,
                          const std::vector<std::string>& dimParams = {}) {
    fillValueInfo(model.mutable_graph()->add_input(), name, dims, type, dimParams);
    return *this;
  }
  // An output of `rank` dimensions whose sizes are left to shape inference.
  OnnxModelBuilder& output(const std::string& name, int rank) {
    std::vector<int64_t> dims(size_t(rank), -1);
    std::vector<std::string> params;
    for (int k = 0; k < rank; ++k) params.push_back(name + "_" + std::to_string(k));
    fillValueInfo(model.mutable_graph()->add_output(), name, dims, onnx::TensorProto::FLOAT,
                  params);
    return *this;
  }
  OnnxModelBuilder& output(const std::string& name, const std::vector<int64_t>& dims,
                           int32_t type = onnx::TensorProto::FLOAT) {
    fillValueInfo(model.mutable_graph()->add_output(), name, dims, type, {});
    return *this;
  }
  onnx::TensorProto& initializer(const std::string& name, const std::vector<int64_t>& dims,
                                 const std::vector<float>& values) {
    auto* t = model.mutable_graph()->add_initializer();
    fillTensor(*t, name, dims, values);
    return *t;
  }
  onnx::TensorProto& initializerInt64(const std::string& name, const std::vector<int64_t>& dims,
                                      const std::vector<int64_t>& values) {
    auto* t = model.mutable_graph()->add_initializer();
    fillTensor(*t, name, dims, values);
    return *t;
  }
  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = {}) {
    auto* n = model.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }

  std::vector<uint8_t> bytes() const {
    const std::string s = model.SerializeAsString();
    return std::vector<uint8_t>(s.begin(), s.end());
  }

  static void fillTensor(onnx::TensorProto& t, const std::string& name,
                         const std::vector<int64_t>& dims, const std::vector<float>& values) {
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t.add_dims(d);
    t.set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4));
  }
  static void fillTensor(onnx::TensorProto& t, const std::string& name,
                         const std::vector<int64_t>& dims, const std::vector<int64_t>& values) {
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : dims) t.add_dims(d);
    for (int64_t v : values) t.add_int64_data(v);
  }

  onnx::ModelProto model;

 private:
  static void fillValueInfo(onnx::ValueInfoProto* v, const std::string& name,
                            const std::vector<int64_t>& dims, int32_t type,
                            const std::vector<std::string>& dimParams) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    auto* shape = tt->mutable_shape();
    for (size_t k = 0; k < dims.size(); ++k) {
      auto* d = shape->add_dim();
      if (dims[k] >= 0)
        d->set_dim_value(dims[k]);
      else
        d->set_dim_param(k < dimParams.size() ? dimParams[k] : "d" + std::to_string(k));
    }
  }
};

inline void setAttribute(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
inline void setAttribute(onnx::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}
inline void setAttribute(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}
inline void setAttribute(onnx::NodeProto& n, const std::string& name,
                         const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
inline void setAttribute(onnx::NodeProto& n, const std::string& name, const std::vector<float>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOATS);
  for (float x : v) a->add_floats(x);
}
inline void setTensorAttribute(onnx::NodeProto& n, const std::string& name,
                               const std::vector<int64_t>& dims, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::TENSOR);
  OnnxModelBuilder::fillTensor(*a->mutable_t(), "", dims, v);
}
inline void setTensorAttribute(onnx::NodeProto& n, const std::string& name,
                               const std::vector<int64_t>& dims, const std::vector<float>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::TENSOR);
  OnnxModelBuilder::fillTensor(*a->mutable_t(), "", dims, v);
}

// The front of the importer tests' small networks: Conv 3x3 with pads 1 (initializers W
// [outputs, inputs, 3, 3] from `w` and B from `bias`), Relu and MaxPool 2x2 stride 2, from `input`
// to `output`, through values c and r; nodes conv, relu and pool.
inline void addConvReluPool(OnnxModelBuilder& b, const std::string& input, int64_t inputs,
                            const std::vector<float>& w, const std::vector<float>& bias,
                            const std::string& output) {
  const int64_t outputs = int64_t(bias.size());
  b.initializer("W", {outputs, inputs, 3, 3}, w);
  b.initializer("B", {outputs}, bias);
  auto& c = b.node("Conv", {input, "W", "B"}, {"c"}, "conv");
  setAttribute(c, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Relu", {"c"}, {"r"}, "relu");
  auto& p = b.node("MaxPool", {"r"}, {output}, "pool");
  setAttribute(p, "kernel_shape", std::vector<int64_t>{2, 2});
  setAttribute(p, "strides", std::vector<int64_t>{2, 2});
}

}  // namespace vkcnn::test
