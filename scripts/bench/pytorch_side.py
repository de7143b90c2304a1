#!/usr/bin/env python3
"""PyTorch side of the GPU benchmark (runs on the GPU machine with its own PyTorch).

For each torchvision network: builds it with fixed-seed random weights, exports it to ONNX
(opset 17, dynamic batch), writes a fixed-seed input and PyTorch's float32 output (TF32 off) as
.npy at batch 1 and 32 for vkcnn to check against, and times PyTorch itself: eager and CUDA-graph
replay, float16 and float32 (TF32 off), batch 1 and 32, channels_last, median and p90 of N runs
after warm-up, measured with CUDA events. Results go to OUT/pytorch.json.
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np
import torch
import torchvision

NETWORKS = ["resnet18", "resnet50", "mobilenet_v2", "squeezenet1_1", "googlenet",
            "densenet121", "shufflenet_v2_x1_0", "efficientnet_b0", "vgg16", "mobilenet_v3_large",
            "resnext50_32x4d", "regnet_y_800mf"]


def build(name):
    """Fixed-seed random weights. Batch-norm statistics are calibrated on random inputs so that
    activations have the magnitudes of a trained network: with torchvision's initial statistics
    (mean 0, variance 1) some networks shrink their activations layer after layer until the
    logits (about 1e-9 for mobilenet_v2) are below float16's resolution, and no float16 engine
    could be checked against them."""
    torch.manual_seed(0)
    kwargs = {"weights": None}
    if name == "googlenet":
        kwargs.update(aux_logits=False, init_weights=True)
    model = getattr(torchvision.models, name)(**kwargs)
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if bns:
        for m in bns:
            m.reset_running_stats()
            m.momentum = None  # cumulative average over the calibration batches
        model.train()
        g = torch.Generator().manual_seed(7)
        with torch.no_grad():
            for _ in range(4):
                model(torch.randn(8, 3, 224, 224, generator=g))
    return model.eval()


def export(model, path, opset):
    x = torch.randn(1, 3, 224, 224)
    common = dict(input_names=["input"], output_names=["output"],
                  dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}}, opset_version=opset)
    try:
        torch.onnx.export(model, (x,), path, dynamo=False, **common)
    except TypeError:  # an older torch without the dynamo switch
        torch.onnx.export(model, (x,), path, **common)


def time_it(fn, runs, warmup):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return {"median_ms": statistics.median(times), "p90_ms": times[int(0.9 * (len(times) - 1))]}


def bench(model, batch, dtype, runs, warmup):
    m = model.to("cuda", dtype=dtype).to(memory_format=torch.channels_last)
    x = torch.randn(batch, 3, 224, 224, device="cuda", dtype=dtype).to(memory_format=torch.channels_last)
    result = {}
    with torch.inference_mode():
        result["eager"] = time_it(lambda: m(x), runs, warmup)
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):
                m(x)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            m(x)
        result["graph"] = time_it(graph.replay, runs, warmup)
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--networks", default=",".join(NETWORKS))
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--opset", type=int, default=17)
    parser.add_argument("--dtypes", default="fp16,fp32", help="which of fp16,fp32 to time")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    report = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(0), "networks": {}}
    for name in args.networks.split(","):
        t0 = time.time()
        model = build(name)
        path = os.path.join(args.out, f"{name}.onnx")
        export(model, path, args.opset)
        entry = {"onnx": path}
        for batch in (1, 32):
            g = torch.Generator().manual_seed(1234 + batch)
            x = torch.randn(batch, 3, 224, 224, generator=g)
            with torch.inference_mode():
                y = model.float()(x)
            np.save(os.path.join(args.out, f"{name}_b{batch}_input.npy"), x.numpy())
            np.save(os.path.join(args.out, f"{name}_b{batch}_output.npy"), y.numpy())
            # PyTorch's own float16 error against this float32 reference: the yardstick for
            # vkcnn's float16 error (same weights, float16 storage, float32 accumulation).
            with torch.inference_mode():
                m16 = build(name).to("cuda", dtype=torch.float16).to(memory_format=torch.channels_last)
                y16 = m16(x.to("cuda", dtype=torch.float16).to(memory_format=torch.channels_last))
            y16 = y16.float().cpu()
            entry[f"fp16_b{batch}_relative_l2"] = float((y16 - y).norm() / y.norm())
        for label, dtype in (("fp16", torch.float16), ("fp32", torch.float32)):
            if label not in args.dtypes.split(","):
                continue
            for batch in (1, 32):
                entry[f"{label}_b{batch}"] = bench(build(name), batch, dtype, args.runs, args.warmup)
        report["networks"][name] = entry
        print(f"pytorch: {name} done in {time.time() - t0:.1f} s", flush=True)
        torch.cuda.empty_cache()
    with open(os.path.join(args.out, "pytorch.json"), "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
