#!/usr/bin/env python3
"""Puts the PyTorch and vkcnn benchmark figures side by side as one Markdown table with ratios.

usage: report.py RESULTS_DIR   (reads pytorch.json and vkcnn_*.json there; writes results.md)
"""
import glob
import json
import os
import sys

# ncnn on the same H200 (../shared/GPU.md): Vulkan, fp16 + tensor cores, upload and download
# included, best of 50 runs. Keys are torchvision names.
NCNN_FP16_MIN_MS = {"squeezenet1_1": 2.32, "mobilenet_v2": 2.93, "shufflenet_v2_x1_0": 3.20,
                    "efficientnet_b0": 4.23, "googlenet": 4.87, "resnet18": 3.67, "resnet50": 5.09}


def main():
    out = sys.argv[1]
    path = os.path.join(out, "pytorch.json")
    pt = json.load(open(path)) if os.path.exists(path) else {"torch": "?", "gpu": "?", "networks": {}}
    runs = {}
    for path in glob.glob(os.path.join(out, "vkcnn_*.json")):
        r = json.load(open(path))
        net = os.path.basename(r["model"]).replace(".onnx", "")
        runs[(net, r["format"], r["batch"])] = r
    lines = [f"# vkcnn vs PyTorch {pt['torch']} on {pt['gpu']}", "",
             "Milliseconds per inference (median). Ratios > 1 mean vkcnn is faster.",
             "vkcnn resident: input and output stay on the GPU, the recorded command buffer is "
             "resubmitted (wall time, submit to fence). vkcnn e2e: input copied to host-mapped memory, "
             "one submission (upload, run, download), output copied out.", "",
             "| network | fmt | batch | PyTorch eager | PyTorch graph | vkcnn resident | vkcnn GPU | "
             "vs graph | vs eager | vkcnn e2e | ncnn fp16 | vs ncnn | dispatches | barriers | "
             "peak/intermediates MiB | rel. L2 | PyTorch fp16 rel. L2 |",
             "|" + "---|" * 17]
    for net, entry in pt["networks"].items():
        for fmt in ("fp16", "fp32"):
            for batch in (1, 32):
                p = entry.get(f"{fmt}_b{batch}", {})
                v = runs.get((net, fmt, batch))
                eager = p.get("eager", {}).get("median_ms")
                graph = p.get("graph", {}).get("median_ms")
                configs = os.environ.get("VKCNN_BENCH_CONFIGS")
                if not v and configs and f"{fmt}:{batch}" not in configs.split():
                    continue  # not asked for
                if not v:
                    lines.append(f"| {net} | {fmt} | {batch} | {eager or '-'} | {graph or '-'} | failed "
                                 "| | | | | | | | | | | |")
                    continue
                res, gpu, e2e = v["resident_median_ms"], v.get("gpu_median_ms", 0), v["end_to_end_median_ms"]
                ncnn = NCNN_FP16_MIN_MS.get(net) if (fmt == "fp16" and batch == 1) else None
                cell = lambda x: f"{x:.3f}" if x else "-"
                ratio = lambda a, b: f"{a / b:.2f}x" if a and b else "-"
                lines.append(
                    f"| {net} | {fmt} | {batch} | {cell(eager)} | {cell(graph)} | {cell(res)} | {cell(gpu)} | "
                    f"{ratio(graph, res)} | {ratio(eager, res)} | {cell(e2e)} | {cell(ncnn)} | {ratio(ncnn, e2e)} | "
                    f"{int(v['dispatches'])} | {int(v['barriers'])} | "
                    f"{v['peak_temporary_bytes'] / 2**20:.1f}/{v['intermediate_tensor_bytes'] / 2**20:.1f} | "
                    f"{float('nan') if v.get('relative_l2') is None else v['relative_l2']:.2g} | "
                    f"{entry.get(f'fp16_b{batch}_relative_l2', float('nan')) if fmt == 'fp16' else float('nan'):.2g} |")
    cold = [(k, r) for k, r in runs.items() if "cold_no_cache_ms" in r]
    if cold:
        lines += ["", "First inference of a fresh process (Context, import, pipelines, one run):", "",
                  "| network | fmt | without pipeline cache ms | with ms |", "|---|---|---|---|"]
        for (net, fmt, batch), r in sorted(cold):
            lines.append(f"| {net} | {fmt} | {r['cold_no_cache_ms']:.0f} | {r['cold_with_cache_ms']:.0f} |")
    text = "\n".join(lines) + "\n"
    open(os.path.join(out, "results.md"), "w").write(text)
    print(text)


if __name__ == "__main__":
    main()
