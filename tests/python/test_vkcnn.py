#!/usr/bin/env python3
"""The Python module (ctest python_module, and tests/install/run.sh on the installed one):
devices, a session on a small ONNX classifier head (global average pool, flatten, Gemm) against
numpy in fp32 and fp16, errors as vkcnn.Error with the library's message, and, where Debian's
python3-torch is installed, a small convolutional network against PyTorch.

    test_vkcnn.py MODEL.onnx   (fuzz/corpus/onnx/gap_flatten_gemm.onnx)
"""
import os
import sys
import tempfile
import unittest

import numpy as np

import vkcnn

MODEL = sys.argv.pop(1) if len(sys.argv) > 1 else None


def ramp(n):
    """The seed generator's weights (fuzz/make_onnx_seeds.cpp)."""
    return np.array([(i % 7 - 3) * 0.125 for i in range(n)], dtype=np.float64)


def reference(x):
    w = ramp(20).reshape(5, 4)
    b = ramp(5)
    return x.astype(np.float64).mean(axis=(2, 3)) @ w.T + b


class Module(unittest.TestCase):
    def test_version_and_devices(self):
        self.assertRegex(vkcnn.__version__, r"^\d+\.\d+\.\d+$")
        devices = vkcnn.devices()
        self.assertGreaterEqual(len(devices), 1)
        for d in devices:
            self.assertIsInstance(d.name, str)
            self.assertIn(d.type, ("other", "integrated GPU", "discrete GPU", "virtual GPU", "CPU"))
            self.assertIn("vkcnn.Device(", repr(d))

    def test_session_fp32(self):
        s = vkcnn.Session(MODEL, precision="fp32", shapes={"x": [3, 4, 3, 3]})
        self.assertEqual(s.inputs, {"x": (3, 4, 3, 3)})
        self.assertEqual(s.outputs, {"y": (3, 5)})
        self.assertEqual(s.batch, 3)
        self.assertEqual(s.precision, "fp32")
        self.assertIsInstance(s.device, str)
        rng = np.random.default_rng(7)
        for _ in range(2):  # the second run resubmits the recording
            x = rng.uniform(-2, 2, size=(3, 4, 3, 3)).astype(np.float32)
            out = s.run({"x": x})
            self.assertEqual(list(out), ["y"])
            y = out["y"]
            self.assertEqual(y.dtype, np.float32)
            self.assertEqual(y.shape, (3, 5))
            np.testing.assert_allclose(y, reference(x), rtol=0, atol=1e-5)
        # One array for a one-input model; float64 and non-contiguous arrays are converted.
        x64 = rng.uniform(-1, 1, size=(3, 3, 3, 4)).transpose(0, 3, 1, 2)
        np.testing.assert_allclose(s.run(x64)["y"], reference(x64), rtol=0, atol=1e-5)

    def test_winograd_option(self):
        # ContextOptions::winograd reaches the Session's Context; the classifier head has no 3x3
        # convolution, so the results are the same either way.
        x = np.random.default_rng(3).uniform(-2, 2, size=(1, 4, 3, 3)).astype(np.float32)
        for winograd in (False, True, None):
            s = vkcnn.Session(MODEL, precision="fp32", batch=1, winograd=winograd)
            np.testing.assert_allclose(s.run(x)["y"], reference(x), rtol=0, atol=1e-5)
        with self.assertRaises(vkcnn.Error) as caught:
            vkcnn.Session(MODEL, precision="fp32", winograd="off")
        self.assertIn("winograd=", str(caught.exception))

    def test_device_profile_option(self):
        # ContextOptions::deviceProfile reaches the Session's Context: the mobile profile runs the
        # head within its limits, a batch of 300 (a layer each) in chunks of its 256 array layers.
        x = np.random.default_rng(5).uniform(-2, 2, size=(300, 4, 3, 3)).astype(np.float32)
        for profile, expected in (("mobile", "mobile"), ("native", "native"), (None, "native")):
            s = vkcnn.Session(MODEL, precision="fp32", batch=300, device_profile=profile)
            self.assertEqual(s.device_profile, expected)
            np.testing.assert_allclose(s.run(x)["y"], reference(x), rtol=0, atol=1e-5)
        with self.assertRaises(vkcnn.Error) as caught:
            vkcnn.Session(MODEL, device_profile="phone")
        self.assertIn("device_profile=", str(caught.exception))

    def test_accumulate_option(self):
        # float16 accumulators are asked of the matrix-unit convolutions only; this model's
        # classifier (a fully connected layer) and float32 storage have none, so the results are
        # those of float32 accumulation.
        x = np.random.default_rng(4).uniform(-2, 2, size=(2, 4, 3, 3)).astype(np.float32)
        for precision in ("fp32", "fp16"):
            y32 = vkcnn.Session(MODEL, precision=precision, batch=2).run(x)["y"]
            y16 = vkcnn.Session(MODEL, precision=precision, batch=2, accumulate="fp16").run(x)["y"]
            np.testing.assert_array_equal(y16, y32)

    def test_session_fp16(self):
        s = vkcnn.Session(MODEL, precision="fp16", batch=2)
        self.assertEqual(s.inputs, {"x": (2, 4, 3, 3)})
        x = np.linspace(-3, 3, 2 * 4 * 9, dtype=np.float32).reshape(2, 4, 3, 3)
        load = s.load_statistics
        self.assertGreater(load["parse_ms"], 0)
        self.assertGreater(load["load_ms"], 0)
        self.assertEqual(load["first_run_ms"], 0)
        # The Session's own Context started while the model loaded.
        self.assertGreater(load["context_ms"], 0)
        self.assertLessEqual(load["context_wait_ms"], load["context_ms"])
        np.testing.assert_allclose(s.run({"x": x})["y"], reference(x), rtol=0, atol=1e-2)
        self.assertGreater(s.load_statistics["first_run_ms"], 0)

    def test_errors(self):
        s = vkcnn.Session(MODEL, precision="fp32", batch=1)
        with self.assertRaises(vkcnn.Error) as caught:
            s.run({"x": np.zeros((1, 4, 3, 2), np.float32)})
        self.assertIn("input 'x'", str(caught.exception))
        self.assertEqual(caught.exception.code, "invalid argument")
        self.assertIsInstance(caught.exception, RuntimeError)
        with self.assertRaises(vkcnn.Error) as caught:
            s.run({"nope": np.zeros((1, 4, 3, 3), np.float32)})
        self.assertIn("nope", str(caught.exception))
        with self.assertRaises(vkcnn.Error) as caught:
            vkcnn.Session("/nonexistent/model.onnx")
        self.assertIn("/nonexistent/model.onnx", str(caught.exception))
        self.assertEqual(caught.exception.code, "I/O error")
        with self.assertRaises(vkcnn.Error) as caught:
            vkcnn.Session(MODEL, precision="int8")
        self.assertIn("precision=", str(caught.exception))
        with self.assertRaises(vkcnn.Error) as caught:
            s.run({1: np.zeros((1, 4, 3, 3), np.float32)})
        self.assertIn("inputs= keys must be input names", str(caught.exception))
        with self.assertRaises(vkcnn.Error) as caught:
            vkcnn.Session(MODEL, device="no such device 1234")
        self.assertIn("no such device 1234", str(caught.exception))


try:
    import torch
except ImportError:
    torch = None


@unittest.skipIf(torch is None, "python3-torch is not installed")
class AgainstTorch(unittest.TestCase):
    def test_small_cnn(self):
        torch.manual_seed(0)
        net = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
            torch.nn.MaxPool2d(2), torch.nn.Conv2d(8, 5, 3, stride=2), torch.nn.Sigmoid(),
            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(5, 4)).eval()
        x = torch.rand(2, 3, 16, 16)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "net.onnx")
            torch.onnx.export(net, x, path, input_names=["input"], output_names=["logits"],
                              opset_version=13)
            s = vkcnn.Session(path, precision="fp32")
            y = s.run({"input": x.numpy()})["logits"]
        with torch.no_grad():
            expected = net(x).numpy()
        np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)


if __name__ == "__main__":
    if MODEL is None:
        sys.exit("usage: test_vkcnn.py MODEL.onnx")
    unittest.main(verbosity=2)
