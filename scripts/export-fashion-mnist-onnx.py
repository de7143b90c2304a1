#!/usr/bin/python3
"""Writes samples/fashion_mnist/weights/fashion_mnist.onnx from the committed MPS-order .dat
weights (Debian's python3-onnx and numpy only): the same network as the kernel-API sample, as a
PyTorch export would describe it (Conv, Relu, MaxPool, Flatten, Gemm, Softmax; NCHW weights), so
the ONNX importer can be checked on a trained network against PyTorch's own predictions."""
import os
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "samples", "fashion_mnist", "weights")


def load(name, shape):
    return np.fromfile(os.path.join(here, name), dtype="<f4").reshape(shape)


# MPS order [out][kh][kw][in] -> ONNX Conv [out][in][kh][kw].
conv1 = load("conv1_weights.dat", (16, 5, 5, 1)).transpose(0, 3, 1, 2)
conv2 = load("conv2_weights.dat", (32, 5, 5, 16)).transpose(0, 3, 1, 2)
# fc1 [64][7][7][32] -> PyTorch Linear [64][32*7*7] over the NCHW flattening (c, h, w).
fc1 = load("fc1_weights.dat", (64, 7, 7, 32)).transpose(0, 3, 1, 2).reshape(64, 32 * 7 * 7)
fc2 = load("fc2_weights.dat", (10, 1, 1, 64)).reshape(10, 64)
init = [numpy_helper.from_array(np.ascontiguousarray(a, np.float32), n) for a, n in [
    (conv1, "conv1.weight"), (load("conv1_bias.dat", (16,)), "conv1.bias"),
    (conv2, "conv2.weight"), (load("conv2_bias.dat", (32,)), "conv2.bias"),
    (fc1, "fc1.weight"), (load("fc1_bias.dat", (64,)), "fc1.bias"),
    (fc2, "fc2.weight"), (load("fc2_bias.dat", (10,)), "fc2.bias")]]
nodes = [
    helper.make_node("Conv", ["input", "conv1.weight", "conv1.bias"], ["c1"], kernel_shape=[5, 5], pads=[2, 2, 2, 2]),
    helper.make_node("Relu", ["c1"], ["r1"]),
    helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Conv", ["p1", "conv2.weight", "conv2.bias"], ["c2"], kernel_shape=[5, 5], pads=[2, 2, 2, 2]),
    helper.make_node("Relu", ["c2"], ["r2"]),
    helper.make_node("MaxPool", ["r2"], ["p2"], kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Flatten", ["p2"], ["f"], axis=1),
    helper.make_node("Gemm", ["f", "fc1.weight", "fc1.bias"], ["g1"], transB=1),
    helper.make_node("Relu", ["g1"], ["r3"]),
    helper.make_node("Gemm", ["r3", "fc2.weight", "fc2.bias"], ["logits"], transB=1),
    helper.make_node("Softmax", ["logits"], ["probabilities"], axis=1),
]
graph = helper.make_graph(
    nodes, "fashion_mnist",
    [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 1, 28, 28])],
    [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["batch", 10]),
     helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 10])], init)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="vkcnn")
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, os.path.join(here, "fashion_mnist.onnx"))
print("wrote", os.path.join(here, "fashion_mnist.onnx"))
