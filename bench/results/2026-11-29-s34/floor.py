#!/usr/bin/env python3
"""Session 34: the cost of one dependent kernel at batch 1, vkcnn against PyTorch's CUDA graph.
Writes chains of N element-wise ops (Tanh, which neither side fuses into a neighbour) on maps of
a few shapes as ONNX models (chain_C_H_W_N.onnx, fixed batch 1), and times the same chains in
PyTorch, float16, eager and CUDA-graph replay (CUDA events, median of the runs), to
OUT/floor_pytorch.json. The vkcnn side is `vkcnn bench` on the models (run5.sh)."""
import json, os, statistics, sys
import torch

OUT = sys.argv[1]
SHAPES = [(4, 8, 8), (64, 56, 56), (256, 14, 14), (512, 28, 28)]
LENGTHS = [16, 64]


class Chain(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n

    def forward(self, x):
        for _ in range(self.n):
            x = torch.tanh(x)
        return x


def time_it(fn, runs=200, warmup=20):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); e.synchronize()
        times.append(s.elapsed_time(e))
    return statistics.median(times)


results = {}
for c, h, w in SHAPES:
    for n in LENGTHS:
        name = f"chain_{c}_{h}_{w}_{n}"
        m = Chain(n).eval()
        torch.onnx.export(m, (torch.randn(1, c, h, w),), os.path.join(OUT, name + ".onnx"),
                          input_names=["input"], output_names=["output"], opset_version=17,
                          dynamo=False)
        x = torch.randn(1, c, h, w, device="cuda", dtype=torch.float16)
        with torch.inference_mode():
            eager = time_it(lambda: m(x))
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                for _ in range(3):
                    m(x)
            torch.cuda.current_stream().wait_stream(stream)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                m(x)
            graph = time_it(g.replay)
        results[name] = {"n": n, "eager_ms": eager, "graph_ms": graph}
        print(name, f"eager {eager:.4f} ms ({1000 * eager / n:.2f} us/op)  graph {graph:.4f} ms "
              f"({1000 * graph / n:.2f} us/op)", flush=True)
json.dump(results, open(os.path.join(OUT, "floor_pytorch.json"), "w"), indent=1)
