#!/usr/bin/env python3
"""PyTorch side of the GPU benchmark (runs on the GPU machine with its own PyTorch).

For each torchvision network: builds it with fixed-seed random weights, exports it to ONNX
(opset 17, dynamic batch), writes a fixed-seed input and PyTorch's float32 output (TF32 off) as
.npy at batch 1 and 32 for vkcnn to check against, and times PyTorch itself: eager and CUDA-graph
replay, float16 and float32 (TF32 off), batch 1 and 32, channels_last, median and p90 of N runs
after warm-up, measured with CUDA events. Results go to OUT/pytorch.json.

Then torch.compile(model, mode="reduce-overhead") (inductor's fused kernels replayed as CUDA
graphs: what a PyTorch user who cares about speed runs), the same four configurations, one child
process a network so that a compiler failure or hang costs that network alone: each configuration
that fails records why, a network's child is killed after --compile-timeout seconds (what it
finished is kept), and no network is started after --compile-budget seconds. Results go to
OUT/compile_NETWORK.json, one file a network; a later call with --compile-only times the networks
that have none (compiling takes about a minute a configuration on the H200: `--no-compile` skips
it). The helpers that read and describe results import neither PyTorch nor numpy
(scripts/bench/test_bench_scripts.py runs them without a GPU).
"""
import argparse
import copy
import json
import os
import signal
import statistics
import subprocess
import sys
import time

try:
    import numpy as np
    import torch
    import torchvision
except ImportError:  # the result helpers below run without them (tests, the report machine)
    np = torch = torchvision = None

CONFIGS = [("fp16", 1), ("fp16", 32), ("fp32", 1), ("fp32", 32)]
COMPILE_MODE = "reduce-overhead"

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


def describe_error(error):
    """One line naming what went wrong: the exception's type and its message's first line."""
    lines = [l.strip() for l in str(error).splitlines() if l.strip()]
    text = f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
    return text if len(text) <= 160 else text[:157] + "..."


def config_key(label, batch):
    return f"{label}_b{batch}"


def parse_compile_output(text, configs, returncode, timed_out, timeout_s, log_tail=""):
    """The child's results by configuration (`fp16_b1`: {median_ms, p90_ms, compile_s} or
    {error}) from its output lines, one JSON object each; a configuration with no line says why:
    the child timed out, died, or said nothing."""
    results = {}
    for line in text.splitlines():
        if not line.startswith('{"config"'):
            continue  # the compiler's own output
        try:
            record = json.loads(line)
        except ValueError:
            continue
        results[record.pop("config")] = record
    if timed_out:
        missing = f"not finished within --compile-timeout {timeout_s} s"
    elif returncode:
        why = f"exit status {returncode}" if returncode > 0 else f"signal {-returncode}"
        missing = f"the compiling process died ({why})" + (f": {log_tail}" if log_tail else "")
    else:
        missing = "no result"
    for label, batch in configs:
        results.setdefault(config_key(label, batch), {"error": missing})
    return results


def compile_child(name, configs, runs, warmup):
    """In the child process: times torch.compile of `name` for each configuration, one JSON line
    on stdout as each finishes."""
    base = build(name)  # the calibration runs on the CPU: once, not once a configuration
    for label, batch in configs:
        t0 = time.time()
        try:
            torch._dynamo.reset()
            dtype = torch.float16 if label == "fp16" else torch.float32
            m = copy.deepcopy(base).to("cuda", dtype=dtype).to(memory_format=torch.channels_last)
            x = torch.randn(batch, 3, 224, 224, device="cuda", dtype=dtype).to(
                memory_format=torch.channels_last)
            with torch.inference_mode():
                compiled = torch.compile(m, mode=COMPILE_MODE)
                for _ in range(3):  # compiles, then records the CUDA graph
                    compiled(x)
                torch.cuda.synchronize()
                compile_s = time.time() - t0
                result = time_it(lambda: compiled(x), runs, warmup)
            result["compile_s"] = round(compile_s, 1)
        except Exception as e:  # a configuration the compiler cannot do: say why, go on
            result = {"error": describe_error(e)}
        print(json.dumps({"config": config_key(label, batch), **result}), flush=True)
        torch.cuda.empty_cache()


def child_command(name, args, configs):
    return [sys.executable, os.path.abspath(__file__), args.out, "--compile-child", name,
            "--runs", str(args.runs), "--warmup", str(args.warmup),
            "--dtypes", ",".join(sorted({label for label, _ in configs}))]


def compile_network(name, args, configs):
    """Runs compile_child for `name` in a process of its own (and its session: the compiler's
    workers are killed with it), at most args.compile_timeout seconds."""
    log = os.path.join(args.out, f"compile_{name}.log")
    cmd = child_command(name, args, configs)
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=os.path.join(args.out, "inductor-cache"))
    start = time.time()
    with open(log, "w") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, env=env,
                                start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=args.compile_timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            timed_out = True
    tail = ""
    if proc.returncode and not timed_out:
        with open(log) as f:
            lines = [l.strip() for l in f if l.strip()]
        tail = lines[-1][:160] if lines else ""
    return {"torch": getattr(torch, "__version__", "?"), "network": name, "mode": COMPILE_MODE,
            "elapsed_s": round(time.time() - start, 1),
            "configs": parse_compile_output(out, configs, proc.returncode, timed_out,
                                            args.compile_timeout, tail)}


def compile_all(args, networks):
    """torch.compile of the configurations each network's compile_NETWORK.json lacks (another
    call's fp16 stays when fp32 is asked for), each network started within the budget; False
    where networks are left for another call."""
    configs = [(label, batch) for label, batch in CONFIGS if label in args.dtypes.split(",")]
    start = time.time()
    for name in networks:
        path = os.path.join(args.out, f"compile_{name}.json")
        old = {}
        if os.path.exists(path):
            with open(path) as f:
                old = json.load(f)
        missing = [(l, b) for l, b in configs if config_key(l, b) not in old.get("configs", {})]
        if not missing:
            continue
        if time.time() - start >= args.compile_budget:
            print(f"pytorch: torch.compile of {name} and later left for another call "
                  f"(--compile-budget {args.compile_budget} s spent)", flush=True)
            return False
        entry = compile_network(name, args, missing)
        entry["configs"] = {**old.get("configs", {}), **entry["configs"]}
        with open(path, "w") as f:
            json.dump(entry, f, indent=1)
        failed = [k for k, v in entry["configs"].items() if "error" in v]
        print(f"pytorch: torch.compile {name} done in {entry['elapsed_s']} s"
              + (f" ({', '.join(failed)} failed)" if failed else ""), flush=True)
    return True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--networks", default=",".join(NETWORKS))
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--opset", type=int, default=17)
    parser.add_argument("--dtypes", default="fp16,fp32", help="which of fp16,fp32 to time")
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    parser.add_argument("--compile-only", action="store_true",
                        help="only torch.compile, for the networks without compile_NETWORK.json")
    parser.add_argument("--compile-timeout", type=int, default=300,
                        help="seconds a network's torch.compile child may take (its 4 configs)")
    parser.add_argument("--compile-budget", type=int, default=480,
                        help="seconds within which networks may start compiling (resume later)")
    parser.add_argument("--compile-child", metavar="NETWORK", help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    networks = args.networks.split(",")
    if args.compile_child:
        compile_child(args.compile_child,
                      [(l, b) for l, b in CONFIGS if l in args.dtypes.split(",")],
                      args.runs, args.warmup)
        return 0
    if args.compile_only:
        return 0 if compile_all(args, networks) else 3
    report = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(0), "networks": {}}
    for name in networks:
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
    if not args.no_compile:
        return 0 if compile_all(args, networks) else 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
