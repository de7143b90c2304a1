#!/usr/bin/env python3
"""The package's front door (ctest python_api): onnxruntime's habits beside the dict API
(get_inputs/get_outputs, run(output_names or None, feed) -> list, models from bytes and from any
os.PathLike, device= as an index, a name or a vkcnn.Device), every bad argument a vkcnn.Error
naming the Python parameter, the dtype rules (float64 and float16 converted, others refused),
and the documentation (help() lists every parameter; the .pyi stubs match the code).

    test_api.py MODEL.onnx   (fuzz/corpus/onnx/gap_flatten_gemm.onnx: x [N,4,3,3] -> y [N,5])
"""
import ast
import inspect
import pathlib
import pydoc
import sys
import unittest

import numpy as np

import vkcnn

MODEL = sys.argv.pop(1) if len(sys.argv) > 1 else None


def reference(x):
    """The seed generator's weights (fuzz/make_onnx_seeds.cpp): mean over H, W, then Gemm."""
    ramp = np.array([(i % 7 - 3) * 0.125 for i in range(25)], dtype=np.float64)
    return x.astype(np.float64).mean(axis=(2, 3)) @ ramp[:20].reshape(5, 4).T + ramp[:5]


def sample(batch=2, seed=5):
    return np.random.default_rng(seed).uniform(-2, 2, size=(batch, 4, 3, 3)).astype(np.float32)


class Checks(unittest.TestCase):
    def raises(self, *fragments, code="invalid argument"):
        """A context whose body must raise vkcnn.Error with every fragment in its message."""
        test = self

        class Context:
            def __enter__(self):
                return self

            def __exit__(self, kind, value, traceback):
                test.assertIsNotNone(kind, f"no vkcnn.Error (expected {fragments})")
                test.assertTrue(issubclass(kind, vkcnn.Error), f"{kind.__name__}: {value}")
                message = str(value)
                for f in fragments:
                    test.assertIn(f, message)
                test.assertNotIn("Options::", message)  # a C++ field, not the caller's terms
                if code is not None:
                    test.assertEqual(value.code, code, message)
                return True

        return Context()


class Loading(Checks):
    def test_path_like_and_bytes(self):
        x = sample(2)
        data = pathlib.Path(MODEL).read_bytes()
        for model in (MODEL, pathlib.Path(MODEL), data, bytearray(data), memoryview(data)):
            s = vkcnn.Session(model, precision="fp32", batch=2)
            np.testing.assert_allclose(s.run(x)["y"], reference(x), rtol=0, atol=1e-5)

    def test_bad_models(self):
        with self.raises("bytes", code="invalid model"):
            vkcnn.Session(b"this is not an ONNX model")
        with self.raises("model=", code="invalid model"):
            vkcnn.Session(b"")
        with self.raises("model=", "pathlib.Path", "int"):
            vkcnn.Session(42)
        with self.raises("missing.onnx", code="I/O error"):
            vkcnn.Session(pathlib.Path("/nonexistent/missing.onnx"))
        # Garbage of every length gives a message, never an empty one.
        for n in (1, 7, 100):
            with self.assertRaises(vkcnn.Error) as caught:
                vkcnn.Session(bytes(range(n)))
            self.assertGreater(len(str(caught.exception)), 10)


class Parameters(Checks):
    def test_device(self):
        x = sample(1)
        first = vkcnn.devices()[0]
        for device in (0, np.int64(0), first, first.name, first.name[:3]):
            s = vkcnn.Session(MODEL, precision="fp32", batch=1, device=device)
            self.assertEqual(s.device, first.name)
            np.testing.assert_allclose(s.run(x)["y"], reference(x), rtol=0, atol=1e-5)
        with self.raises("device=", "-1"):
            vkcnn.Session(MODEL, device=-1)
        with self.raises("device=", "float"):
            vkcnn.Session(MODEL, device=1.5)
        with self.raises("device=", "''"):
            vkcnn.Session(MODEL, device="")
        with self.raises("device=", "999", "matches none of"):
            vkcnn.Session(MODEL, device=999)
        with self.raises("device=", "no such device 1234"):
            vkcnn.Session(MODEL, device="no such device 1234")

    def test_batch(self):
        for batch in (-1, 1.5, True, "2", None, 2**32):
            with self.raises("batch=", "integer >= 1"):
                vkcnn.Session(MODEL, batch=batch)
        self.assertEqual(vkcnn.Session(MODEL, batch=np.uint8(3)).batch, 3)
        # The model's batch fixed by shapes= and another asked for.
        with self.raises("batch=2", "fixed at 3"):
            vkcnn.Session(MODEL, shapes={"x": [3, 4, 3, 3]}, batch=2)

    def test_shapes(self):
        with self.raises("shapes=", "dict"):
            vkcnn.Session(MODEL, shapes=[1, 4, 3, 3])
        with self.raises("shapes['x']", "list of dimensions"):
            vkcnn.Session(MODEL, shapes={"x": "1,4,3,3"})
        with self.raises("shapes['x']", ">= 1", "-1"):
            vkcnn.Session(MODEL, shapes={"x": [-1, 4, 3, 3]})
        with self.raises("shapes=", "keys"):
            vkcnn.Session(MODEL, shapes={0: [1, 4, 3, 3]})
        with self.raises("shapes=", "'nope'", "not an input"):
            vkcnn.Session(MODEL, shapes={"nope": [1, 4, 3, 3]})
        s = vkcnn.Session(MODEL, shapes={"x": np.array([2, 4, 3, 3])})
        self.assertEqual(s.inputs, {"x": (2, 4, 3, 3)})

    def test_flags_and_precision(self):
        with self.raises("precision=", "'fp16' or 'fp32'", "int8"):
            vkcnn.Session(MODEL, precision="int8")
        with self.raises("precision=", "NoneType"):
            vkcnn.Session(MODEL, precision=None)
        with self.raises("validation=", "True, False or None"):
            vkcnn.Session(MODEL, validation="yes")
        with self.raises("winograd=", "True, False or None"):
            vkcnn.Session(MODEL, winograd=0)
        with self.raises("optimize=", "True or False"):
            vkcnn.Session(MODEL, optimize=None)
        with self.raises("accumulate=", "'fp32' or 'fp16'", "fp8"):
            vkcnn.Session(MODEL, accumulate="fp8")
        with self.raises("accumulate=", "NoneType"):
            vkcnn.Session(MODEL, accumulate=None)
        with self.raises("external_data_dir="):
            vkcnn.Session(MODEL, external_data_dir=3)
        self.assertEqual(vkcnn.Session(MODEL, precision="float32").precision, "fp32")


class OnnxruntimeHabits(Checks):
    def setUp(self):
        self.s = vkcnn.Session(MODEL, precision="fp32", batch=2)

    def test_node_args(self):
        [x] = self.s.get_inputs()
        [y] = self.s.get_outputs()
        self.assertEqual((x.name, x.shape, x.type, x.dtype), ("x", [2, 4, 3, 3], "tensor(float)",
                                                              np.float32))
        self.assertEqual((y.name, y.shape), ("y", [2, 5]))
        self.assertIn("NodeArg(name='x'", repr(x))
        self.assertEqual(self.s.inputs, {"x": (2, 4, 3, 3)})  # today's dict API beside it

    def test_run_returns_a_list(self):
        x = sample(2)
        for names in (None, ["y"], ("y",)):
            out = self.s.run(names, {"x": x})
            self.assertIsInstance(out, list)
            self.assertEqual(len(out), 1)
            np.testing.assert_allclose(out[0], reference(x), rtol=0, atol=1e-5)
        out = self.s.run(output_names_or_inputs=None, input_feed={"x": x}, run_options=None)
        np.testing.assert_allclose(out[0], reference(x), rtol=0, atol=1e-5)
        # The dict API is unchanged.
        self.assertEqual(list(self.s.run({"x": x})), ["y"])

    def test_each_run_returns_new_arrays(self):
        # Inputs that are exactly the model's go to the GPU from numpy's memory and the outputs
        # come into new arrays: an earlier result keeps its values, the input is not written.
        x1, x2 = sample(2, seed=1), sample(2, seed=2)
        kept = x1.copy()
        [y1] = self.s.run(None, {"x": x1})
        [y2] = self.s.run(None, {"x": x2})
        self.assertFalse(np.shares_memory(y1, y2))
        np.testing.assert_array_equal(x1, kept)
        np.testing.assert_allclose(y1, reference(x1), rtol=0, atol=1e-5)
        np.testing.assert_allclose(y2, reference(x2), rtol=0, atol=1e-5)
        self.assertTrue(y1.flags.c_contiguous and y1.flags.writeable)

    def test_run_errors(self):
        x = sample(2)
        with self.raises("output_names=", "'z'", "its outputs are: y"):
            self.s.run(["z"], {"x": x})
        with self.raises("output_names=", "list of output names"):
            self.s.run("y", {"x": x})
        with self.raises("input_feed=", "missing"):
            self.s.run(None)
        with self.raises("input_feed=", "missing"):
            self.s.run(["y"])
        with self.raises("run_options="):
            self.s.run(None, {"x": x}, run_options=object())
        with self.raises("input_feed['x']", "not an array"):
            self.s.run(None, {"x": [[1, 2], [3]]})
        with self.raises("'nope'"):
            self.s.run(None, {"nope": x})
        with self.raises("input 'x' is [2, 4, 3, 3]", "[1, 4, 3, 3] was given"):
            self.s.run(None, {"x": x[:1]})


class Dtypes(Checks):
    def setUp(self):
        self.s = vkcnn.Session(MODEL, precision="fp32", batch=2)

    def test_converted(self):
        x = sample(2)
        for dtype in (np.float64, np.float16):
            given = x.astype(dtype)
            np.testing.assert_allclose(self.s.run({"x": given})["y"], reference(given),
                                       rtol=0, atol=1e-5)
        # Nested lists of floats are float64; Fortran-ordered arrays are made contiguous.
        np.testing.assert_allclose(self.s.run(x.tolist())["y"], reference(x), rtol=0, atol=1e-5)
        f = np.asfortranarray(x)
        np.testing.assert_allclose(self.s.run({"x": f})["y"], reference(x), rtol=0, atol=1e-5)

    def test_refused(self):
        for dtype in (np.uint8, np.int32, np.int64, np.bool_, np.complex64):
            given = np.ones((2, 4, 3, 3), dtype)
            with self.raises("inputs['x']", str(np.dtype(dtype)), "float32"):
                self.s.run({"x": given})
            with self.raises("input_feed['x']", str(np.dtype(dtype))):
                self.s.run(None, {"x": given})
            with self.raises("inputs (input 'x')", str(np.dtype(dtype))):
                self.s.run(given)
        with self.raises("int64"):
            self.s.run(np.ones((2, 4, 3, 3), np.int64).tolist())  # lists of ints too


class Pool(Checks):
    """vkcnn.SessionPool over the first device listed twice: the same outputs as one Session of
    the piece's batch, the onnxruntime form, per-device statistics and its parameters' errors."""

    def test_run_matches_one_session(self):
        first = vkcnn.devices()[0]
        pool = vkcnn.SessionPool(MODEL, devices=[0, first.name], piece_batch=2, precision="fp32")
        self.assertEqual(pool.batch, 2)
        self.assertEqual(pool.live_devices, 2)
        self.assertEqual(pool.get_inputs()[0].shape, [2, 4, 3, 3])
        x = sample(8)
        y = pool.run(x)["y"]
        self.assertEqual(y.shape, (8, 5))
        one = vkcnn.Session(MODEL, precision="fp32", batch=2, device=0)
        expected = np.concatenate([one.run(x[p:p + 2])["y"] for p in range(0, 8, 2)])
        np.testing.assert_array_equal(y, expected)  # bit for bit
        [y2] = pool.run(None, {"x": x})
        np.testing.assert_array_equal(y2, expected)
        self.assertEqual(sum(d["pieces"] for d in pool.devices), 8)
        self.assertEqual([d["name"] for d in pool.devices], [first.name] * 2)
        self.assertIn("SessionPool", repr(pool))

    def test_errors(self):
        with self.raises("piece_batch=", "-1"):
            vkcnn.SessionPool(MODEL, piece_batch=-1)
        with self.raises("queue_depth=", "0"):
            vkcnn.SessionPool(MODEL, queue_depth=0)
        with self.raises("devices=", "str"):
            vkcnn.SessionPool(MODEL, devices="0")
        with self.raises("devices=", "empty"):
            vkcnn.SessionPool(MODEL, devices=[])
        with self.raises("device=", "float"):
            vkcnn.SessionPool(MODEL, devices=[1.5])
        with self.raises("model=", "path"):
            vkcnn.SessionPool(b"bytes")
        pool = vkcnn.SessionPool(MODEL, devices=[0, 0], piece_batch=2)
        with self.raises("piece_batch=", "multiple"):
            pool.run(sample(3))


class Documentation(unittest.TestCase):
    PARAMETERS = ["model", "precision", "shapes", "batch", "device", "validation", "optimize",
                  "winograd", "external_data_dir", "accumulate"]

    def test_help_lists_every_parameter(self):
        text = pydoc.render_doc(vkcnn.Session, renderer=pydoc.plaintext)
        for name in self.PARAMETERS:
            self.assertIn(f"{name}:", text)  # described in the class docstring
            self.assertIn(f"{name}=", text.replace("model,", "model=,"))  # in the signature
        for method in ("get_inputs", "get_outputs", "run", "load_statistics"):
            self.assertIn(method, text)
        self.assertIn("run(output_names, input_feed)", text)
        self.assertIn("Error", pydoc.render_doc(vkcnn, renderer=pydoc.plaintext))
        self.assertTrue(vkcnn.Error.__doc__)

    def test_stubs_match_the_code(self):
        package = pathlib.Path(vkcnn.__file__).parent
        self.assertTrue((package / "py.typed").exists())
        stub = ast.parse((package / "__init__.pyi").read_text())
        classes = {n.name: n for n in stub.body if isinstance(n, ast.ClassDef)}
        init = next(f for f in classes["Session"].body
                    if isinstance(f, ast.FunctionDef) and f.name == "__init__")
        stubbed = [a.arg for a in init.args.args][1:]
        self.assertEqual(stubbed, list(inspect.signature(vkcnn.Session).parameters))
        self.assertEqual(stubbed, self.PARAMETERS)
        methods = {f.name for f in classes["Session"].body if isinstance(f, ast.FunctionDef)}
        public = {n for n in dir(vkcnn.Session) if not n.startswith("_")}
        self.assertEqual(public, methods - {"__init__"})
        ast.parse((package / "_vkcnn.pyi").read_text())


if __name__ == "__main__":
    if MODEL is None:
        sys.exit("usage: test_api.py MODEL.onnx")
    unittest.main(verbosity=2)
