#!/usr/bin/env python3
"""Checks the benchmark scripts' logic without a GPU or PyTorch: the report on canned figures
(torch.compile's column, its failures, the ratios), the torch.compile child's results, timeout and
resumption, and that every script under scripts/bench parses (ctest bench_scripts)."""
import glob
import json
import os
import py_compile
import subprocess
import sys
import tempfile
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import pytorch_side  # noqa: E402  (imports without PyTorch)
import report  # noqa: E402

PT = {"torch": "2.11.0", "gpu": "NVIDIA H200", "networks": {
    "resnet50": {"fp16_b1": {"eager": {"median_ms": 4.0}, "graph": {"median_ms": 0.9}},
                 "fp16_b32": {"eager": {"median_ms": 4.07}, "graph": {"median_ms": 2.4}},
                 "fp16_b1_relative_l2": 0.0294, "fp16_b32_relative_l2": 0.0304},
    "vgg16": {"fp16_b1": {"eager": {"median_ms": 1.57}, "graph": {"median_ms": 0.441}},
              "fp16_b32": {"eager": {"median_ms": 4.01}, "graph": {"median_ms": 3.9}}}}}
COMPILED = {
    "resnet50": {"network": "resnet50", "configs": {
        "fp16_b1": {"median_ms": 0.59, "p90_ms": 0.6, "compile_s": 41.0},
        "fp16_b32": {"median_ms": 2.0, "p90_ms": 2.1, "compile_s": 50.2},
        "fp32_b1": {"error": "BackendCompilerFailed: triton ran out of shared memory"},
        "fp32_b32": {"error": "not finished within --compile-timeout 420 s"}}}}


def vk(net, fmt, batch, resident, l2=0.02):
    return {"model": f"/tmp/m/{net}.onnx", "format": fmt, "batch": batch,
            "resident_median_ms": resident, "gpu_median_ms": resident * 0.95,
            "end_to_end_median_ms": resident * 1.1, "dispatches": 56, "barriers": 50,
            "peak_temporary_bytes": 2**21, "intermediate_tensor_bytes": 2**22, "relative_l2": l2}


RUNS = {("resnet50", "fp16", 1): vk("resnet50", "fp16", 1, 0.831),
        ("resnet50", "fp16", 32): vk("resnet50", "fp16", 32, 3.946),
        ("vgg16", "fp16", 1): vk("vgg16", "fp16", 1, 0.544, 0.00115)}


def write(path, value):
    with open(path, "w") as f:
        json.dump(value, f)


def rows(text):
    return [l for l in text.splitlines() if l.startswith("| ") and not l.startswith("| network")]


class Report(unittest.TestCase):
    def test_compile_column_and_ratio(self):
        text = report.table(PT, COMPILED, RUNS, ["fp16:1", "fp16:32"])
        by = {tuple(c.strip() for c in r.split("|")[1:4]): [c.strip() for c in r.split("|")[1:-1]]
              for r in rows(text)}
        r = by[("resnet50", "fp16", "1")]
        self.assertEqual(len(r), len(report.COLUMNS))
        col = report.COLUMNS.index
        self.assertEqual(r[col("PyTorch compile")], "0.590")
        self.assertEqual(r[col("vs compile")], "0.71x")  # 0.59 / 0.831
        self.assertEqual(r[col("vs graph")], "1.08x")
        self.assertEqual(by[("resnet50", "fp16", "32")][col("vs compile")], "0.51x")
        # vgg16 has no compile entry: a dash, no ratio, and the note that it is still to do.
        self.assertEqual(by[("vgg16", "fp16", "1")][col("PyTorch compile")], "-")
        self.assertEqual(by[("vgg16", "fp16", "1")][col("vs compile")], "-")
        self.assertIn("torch.compile not timed yet (another call of the compile step resumes): vgg16",
                      text)
        # vgg16 batch 32 was asked for and has no vkcnn result: a row that says so.
        self.assertEqual(by[("vgg16", "fp16", "32")][col("vkcnn resident")], "failed")
        for r in by.values():
            self.assertEqual(len(r), len(report.COLUMNS))

    def test_failures_are_numbered_notes(self):
        runs = dict(RUNS)
        runs[("resnet50", "fp32", 1)] = vk("resnet50", "fp32", 1, 2.0)
        runs[("resnet50", "fp32", 32)] = vk("resnet50", "fp32", 32, 11.4)
        text = report.table(PT, COMPILED, runs)
        self.assertIn("| failed: BackendCompilerFailed (1) |", text)
        self.assertIn("| failed: timed out (2) |", text)
        self.assertIn("1. resnet50 fp32 batch 1: BackendCompilerFailed: triton ran out of shared memory",
                      text)
        self.assertIn("2. resnet50 fp32 batch 32: not finished within --compile-timeout 420 s", text)

    def test_without_compile_results(self):
        text = report.table(PT, {}, RUNS, ["fp16:1"])
        self.assertNotIn("not timed yet", text)
        self.assertNotIn("failed (", text)
        self.assertEqual(len(rows(text)), 3)  # resnet50 fp16 32 has a vkcnn result: shown

    def test_main_reads_a_results_folder(self):
        with tempfile.TemporaryDirectory() as d:
            write(os.path.join(d, "pytorch.json"), PT)
            write(os.path.join(d, "compile_resnet50.json"), COMPILED["resnet50"])
            for (net, fmt, b), r in RUNS.items():
                write(os.path.join(d, f"vkcnn_{net}_{fmt}_b{b}.json"), r)
            env = dict(os.environ, VKCNN_BENCH_CONFIGS="fp16:1 fp16:32")
            subprocess.run([sys.executable, os.path.join(HERE, "report.py"), d], check=True,
                           env=env, capture_output=True)
            with open(os.path.join(d, "results.md")) as f:
                text = f.read()
            self.assertIn("| resnet50 | fp16 | 1 | 4.000 | 0.900 | 0.590 | 0.831 |", text)


class CompileSide(unittest.TestCase):
    CONFIGS = pytorch_side.CONFIGS

    def test_parse_results_and_noise(self):
        out = "\n".join([
            "compiling ... (the compiler's own output)",
            json.dumps({"config": "fp16_b1", "median_ms": 0.5, "p90_ms": 0.6, "compile_s": 40}),
            json.dumps({"config": "fp16_b32", "error": "RuntimeError: boom"}),
            '{"config": broken json'])
        r = pytorch_side.parse_compile_output(out, self.CONFIGS, 0, False, 420)
        self.assertEqual(r["fp16_b1"]["median_ms"], 0.5)
        self.assertEqual(r["fp16_b32"], {"error": "RuntimeError: boom"})
        self.assertEqual(r["fp32_b1"], {"error": "no result"})
        self.assertEqual(set(r), {"fp16_b1", "fp16_b32", "fp32_b1", "fp32_b32"})

    def test_timeout_and_death(self):
        out = json.dumps({"config": "fp16_b1", "median_ms": 0.5})
        r = pytorch_side.parse_compile_output(out, self.CONFIGS, -9, True, 30)
        self.assertEqual(r["fp16_b1"]["median_ms"], 0.5)
        self.assertEqual(r["fp32_b32"]["error"], "not finished within --compile-timeout 30 s")
        r = pytorch_side.parse_compile_output("", self.CONFIGS, -11, False, 30, "Segmentation fault")
        self.assertEqual(r["fp16_b1"]["error"],
                         "the compiling process died (signal 11): Segmentation fault")
        r = pytorch_side.parse_compile_output("", self.CONFIGS, 1, False, 30)
        self.assertEqual(r["fp16_b1"]["error"], "the compiling process died (exit status 1)")

    def test_describe_error(self):
        self.assertEqual(pytorch_side.describe_error(ValueError("\n  first line\nsecond")),
                         "ValueError: first line")
        self.assertEqual(pytorch_side.describe_error(RuntimeError()), "RuntimeError")
        self.assertLessEqual(len(pytorch_side.describe_error(RuntimeError("x" * 500))), 160)

    def args(self, out, **kw):
        a = dict(out=out, runs=3, warmup=1, dtypes="fp16,fp32", compile_timeout=30,
                 compile_budget=600)
        a.update(kw)
        return types.SimpleNamespace(**a)

    def test_child_killed_at_the_timeout_keeps_what_it_finished(self):
        # A child that finishes one configuration, then hangs (with a worker of its own, as the
        # compiler's are): killed with its session at the timeout; the first result is kept.
        script = ("import json, subprocess, sys, time\n"
                  "print(json.dumps({'config': 'fp16_b1', 'median_ms': 0.42}), flush=True)\n"
                  "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
                  "time.sleep(60)\n")
        saved = pytorch_side.child_command
        pytorch_side.child_command = lambda name, args, configs: [sys.executable, "-c", script]
        try:
            with tempfile.TemporaryDirectory() as d:
                entry = pytorch_side.compile_network("resnet50", self.args(d, compile_timeout=2),
                                                     self.CONFIGS)
        finally:
            pytorch_side.child_command = saved
        self.assertLess(entry["elapsed_s"], 30)
        self.assertEqual(entry["configs"]["fp16_b1"]["median_ms"], 0.42)
        self.assertIn("--compile-timeout 2 s", entry["configs"]["fp32_b32"]["error"])

    def test_a_dying_child_says_why(self):
        script = "import sys; sys.stderr.write('Fatal: out of memory\\n'); sys.exit(3)"
        saved = pytorch_side.child_command
        pytorch_side.child_command = lambda name, args, configs: [sys.executable, "-c", script]
        try:
            with tempfile.TemporaryDirectory() as d:
                entry = pytorch_side.compile_network("vgg16", self.args(d), self.CONFIGS)
        finally:
            pytorch_side.child_command = saved
        self.assertEqual(entry["configs"]["fp16_b32"]["error"],
                         "the compiling process died (exit status 3): Fatal: out of memory")

    def test_compile_all_resumes_and_keeps_to_its_budget(self):
        done = []
        saved = pytorch_side.compile_network

        def fake(name, args, configs):
            done.append(name)
            return {"network": name, "elapsed_s": 1.0,
                    "configs": {pytorch_side.config_key(l, b): {"median_ms": 1.0} for l, b in configs}}
        pytorch_side.compile_network = fake
        try:
            with tempfile.TemporaryDirectory() as d:
                write(os.path.join(d, "compile_resnet18.json"), {"network": "resnet18", "configs": {
                    pytorch_side.config_key(l, b): {"median_ms": 2.0} for l, b in self.CONFIGS}})
                # No budget: nothing starts, and the networks are left for another call.
                finished = pytorch_side.compile_all(self.args(d, compile_budget=0),
                                                    ["resnet18", "resnet50", "vgg16"])
                self.assertFalse(finished)
                self.assertEqual(done, [])
                # A budget the first network uses up: it finishes, the next waits.
                clock = iter([0.0, 0.0, 100.0])  # the start, resnet50's start, vgg16's
                real_time, pytorch_side.time.time = pytorch_side.time.time, lambda: next(clock)
                try:
                    finished = pytorch_side.compile_all(self.args(d, compile_budget=50),
                                                        ["resnet18", "resnet50", "vgg16"])
                finally:
                    pytorch_side.time.time = real_time
                self.assertFalse(finished)
                self.assertEqual(done, ["resnet50"])
                finished = pytorch_side.compile_all(self.args(d, dtypes="fp16"),
                                                    ["resnet18", "resnet50", "vgg16"])
                self.assertTrue(finished)
                self.assertEqual(done, ["resnet50", "vgg16"])
                with open(os.path.join(d, "compile_vgg16.json")) as f:
                    entry = json.load(f)
                self.assertEqual(set(entry["configs"]), {"fp16_b1", "fp16_b32"})
                # fp32 asked for later: only the configurations each file lacks, merged in.
                done.clear()
                asked = []
                pytorch_side.compile_network = lambda name, args, configs: (
                    asked.append((name, configs)) or fake(name, args, configs))
                self.assertTrue(pytorch_side.compile_all(self.args(d), ["resnet18", "vgg16"]))
                self.assertEqual(asked, [("vgg16", [("fp32", 1), ("fp32", 32)])])
                with open(os.path.join(d, "compile_vgg16.json")) as f:
                    entry = json.load(f)
                self.assertEqual(set(entry["configs"]), {"fp16_b1", "fp16_b32", "fp32_b1", "fp32_b32"})
        finally:
            pytorch_side.compile_network = saved


class LoadAndTensorSteps(unittest.TestCase):
    def run_script(self, *args):
        return subprocess.run([sys.executable, *args], capture_output=True, text=True, check=True).stdout

    def test_load_table(self):
        with tempfile.TemporaryDirectory() as d:
            write(os.path.join(d, "after-p1-resnet50.json"),
                  {"cold_context_ms": 130.0, "cold_total_ms": 1800.5, "cold_upload_submissions": 5})
            write(os.path.join(d, "after-p2-resnet50.json"), {"cold_context_ms": 120.0, "cold_total_ms": 350.0})
            out = self.run_script(os.path.join(HERE, "load_side.py"), "table", d)
        self.assertIn("| context | 130.0 | 120.0 |", out)
        self.assertIn("| total | 1800.5 | 350.0 |", out)
        self.assertIn("| submissions | 5 |  |", out)

    def test_tensor_summary(self):
        profile = {"tensor_values": [{"node": "add (Add) -> tensor [1, 56, 56, 96]"},
                                     {"node": "t (Transpose) -> tensor [1, 96, 56, 56]"}],
                   "kernels": [{"label": "TensorBinary 'add'", "median_ms": 0.005},
                               {"label": "TensorTranspose 't'", "median_ms": 0.0045},
                               {"label": "Convolution 'conv'", "median_ms": 0.05}],
                   "total_ms": 0.0595, "dispatches": 3, "iterations": 5, "device": "lavapipe"}
        with tempfile.TemporaryDirectory() as d:
            write(os.path.join(d, "p.json"), profile)
            out = self.run_script(os.path.join(HERE, "tensor_side.py"), "summary", os.path.join(d, "p.json"))
        self.assertIn("| 301056 |", out)
        self.assertIn("Largest median ratio 0.90 at 301056 elements: the criterion holds", out)


class Scripts(unittest.TestCase):
    def test_python_scripts_compile(self):
        for path in glob.glob(os.path.join(HERE, "*.py")):
            py_compile.compile(path, doraise=True)

    def test_shell_scripts_parse(self):
        paths = glob.glob(os.path.join(HERE, "*.sh")) + glob.glob(os.path.join(ROOT, "scripts", "*.sh"))
        for path in paths:
            r = subprocess.run(["bash", "-n", path], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, path + ": " + r.stderr)


if __name__ == "__main__":
    unittest.main()
