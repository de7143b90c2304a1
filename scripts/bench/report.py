#!/usr/bin/env python3
"""Puts the PyTorch and vkcnn benchmark figures side by side as one Markdown table with ratios.

usage: report.py RESULTS_DIR   (reads pytorch.json, compile_*.json and vkcnn_*.json there; writes
                                results.md)
       report.py --ab AB_DIR NAME...
                               (the ab step: reads AB_DIR/NAME_NETWORK_FMT_bBATCH_ROUND.json of each
                                condition NAME, and pytorch.json / compile_*.json beside AB_DIR;
                                writes AB_DIR/ab.md: each condition's mean resident time, its ratio
                                to the first condition's, the GPU time, the relative L2)

PyTorch's columns: eager, the CUDA graph of its eager kernels, and torch.compile
(mode="reduce-overhead": inductor's fused kernels replayed as CUDA graphs). Against the CUDA graph
of eager kernels the ratio flatters vkcnn; torch.compile is what a PyTorch user who cares about
speed runs. A torch.compile configuration that failed or was not run says so under the table.
Nothing here imports PyTorch (scripts/bench/test_bench_scripts.py runs it on canned figures).
"""
import glob
import json
import os
import re
import sys

# ncnn on the same H200 (../shared/GPU.md): Vulkan, fp16 + tensor cores, upload and download
# included, best of 50 runs. Keys are torchvision names.
NCNN_FP16_MIN_MS = {"squeezenet1_1": 2.32, "mobilenet_v2": 2.93, "shufflenet_v2_x1_0": 3.20,
                    "efficientnet_b0": 4.23, "googlenet": 4.87, "resnet18": 3.67, "resnet50": 5.09}

COLUMNS = ["network", "fmt", "batch", "PyTorch eager", "PyTorch graph", "PyTorch compile",
           "vkcnn resident", "vkcnn GPU", "vs compile", "vs graph", "vs eager", "vkcnn e2e",
           "ncnn fp16", "vs ncnn", "dispatches", "barriers", "peak/intermediates MiB", "rel. L2",
           "PyTorch fp16 rel. L2"]


def read_json(path):
    with open(path) as f:
        return json.load(f)


def load(out):
    """(pytorch, compiled, runs): pytorch.json, {network: compile entry}, {(net, fmt, batch): vkcnn}."""
    path = os.path.join(out, "pytorch.json")
    pt = read_json(path) if os.path.exists(path) else {"torch": "?", "gpu": "?", "networks": {}}
    compiled = {}
    for path in glob.glob(os.path.join(out, "compile_*.json")):
        entry = read_json(path)
        compiled[entry["network"]] = entry
    runs = {}
    for path in glob.glob(os.path.join(out, "vkcnn_*.json")):
        r = read_json(path)
        net = os.path.basename(r["model"]).replace(".onnx", "")
        runs[(net, r["format"], r["batch"])] = r
    return pt, compiled, runs


def cell(x):
    return f"{x:.3f}" if x else "-"


def ratio(a, b):
    return f"{a / b:.2f}x" if a and b else "-"


def short_reason(error):
    """A few words for a table cell; the whole message goes under the table."""
    if error.startswith("not finished"):
        return "timed out"
    if error.startswith("the compiling process died"):
        return "process died"
    head = error.split(":", 1)[0]
    return head if len(head) <= 32 else head[:29] + "..."


def compile_cell(entry, key, notes):
    """The torch.compile median for `key` (fp16_b1 ...), or a note's number where it has none."""
    if entry is None:
        return "-", None
    result = entry.get("configs", {}).get(key)
    if result is None:
        return "-", None
    if "error" in result:
        notes.append(f"{entry['network']} {key.replace('_b', ' batch ')}: {result['error']}")
        return f"failed: {short_reason(result['error'])} ({len(notes)})", None
    return cell(result.get("median_ms")), result.get("median_ms")


def table(pt, compiled, runs, configs=None):
    """The report as Markdown. `configs`: the fmt:batch pairs asked for (None: all)."""
    lines = [f"# vkcnn vs PyTorch {pt['torch']} on {pt['gpu']}", "",
             "Milliseconds per inference (median). Ratios > 1 mean vkcnn is faster.",
             "vkcnn resident: input and output stay on the GPU, the recorded command buffer is "
             "resubmitted (wall time, submit to fence). vkcnn e2e: input copied to host-mapped memory, "
             "one submission (upload, run, download), output copied out. PyTorch graph: its eager "
             "kernels replayed as a CUDA graph; PyTorch compile: torch.compile(mode=\"reduce-overhead\"), "
             "inductor's fused kernels replayed as CUDA graphs.", "",
             "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    notes = []
    networks = list(pt["networks"])
    networks += [n for n in sorted({k[0] for k in runs} | set(compiled)) if n not in networks]
    for net in networks:
        entry = pt["networks"].get(net, {})
        for fmt in ("fp16", "fp32"):
            for batch in (1, 32):
                v = runs.get((net, fmt, batch))
                if not v and configs is not None and f"{fmt}:{batch}" not in configs:
                    continue  # not asked for
                p = entry.get(f"{fmt}_b{batch}", {})
                eager = p.get("eager", {}).get("median_ms")
                graph = p.get("graph", {}).get("median_ms")
                comp_text, comp = compile_cell(compiled.get(net), f"{fmt}_b{batch}", notes)
                if not v:
                    row = [net, fmt, str(batch), cell(eager), cell(graph), comp_text, "failed"]
                    lines.append("| " + " | ".join(row + [""] * (len(COLUMNS) - len(row))) + " |")
                    continue
                res, gpu, e2e = v["resident_median_ms"], v.get("gpu_median_ms", 0), v["end_to_end_median_ms"]
                ncnn = NCNN_FP16_MIN_MS.get(net) if (fmt == "fp16" and batch == 1) else None
                l2 = v.get("relative_l2")
                torch_l2 = entry.get(f"fp16_b{batch}_relative_l2") if fmt == "fp16" else None
                row = [net, fmt, str(batch), cell(eager), cell(graph), comp_text, cell(res), cell(gpu),
                       ratio(comp, res), ratio(graph, res), ratio(eager, res), cell(e2e), cell(ncnn),
                       ratio(ncnn, e2e), str(int(v["dispatches"])), str(int(v["barriers"])),
                       f"{v['peak_temporary_bytes'] / 2**20:.1f}/{v['intermediate_tensor_bytes'] / 2**20:.1f}",
                       f"{float('nan') if l2 is None else l2:.2g}",
                       f"{float('nan') if torch_l2 is None else torch_l2:.2g}"]
                lines.append("| " + " | ".join(row) + " |")
    if notes:
        lines += ["", "torch.compile failed or was not run:", ""]
        lines += [f"{i}. {note}" for i, note in enumerate(notes, 1)]
    missing = [n for n in networks if n not in compiled and n in pt["networks"]]
    if missing and compiled:
        lines += ["", "torch.compile not timed yet (another call of the compile step resumes): "
                  + ", ".join(missing)]
    cold = [(k, r) for k, r in runs.items() if "cold_no_cache_ms" in r]
    if cold:
        lines += ["", "First inference of a fresh process (Context, import, pipelines, one run):", "",
                  "| network | fmt | without pipeline cache ms | with ms |", "|---|---|---|---|"]
        for (net, fmt, batch), r in sorted(cold):
            lines.append(f"| {net} | {fmt} | {r['cold_no_cache_ms']:.0f} | {r['cold_with_cache_ms']:.0f} |")
    return "\n".join(lines) + "\n"


def ab_table(records, names, pt=None, compiled=None):
    """records: {(name, net, fmt, batch): [vkcnn bench JSON, ...]} -> Markdown."""
    pt = pt or {"networks": {}}
    compiled = compiled or {}
    first = names[0]
    head = ["network", "fmt", "batch"] + [f"{n} ms" for n in names] + \
        [f"{n}/{first}" for n in names[1:]] + ["GPU ms " + " / ".join(names), "rel. L2 " + " / ".join(names),
                                              "runs", "PyTorch eager", "graph", "compile"]
    lines = [f"Resident median ms, the mean over each condition's runs (conditions alternated: "
             f"{' '.join(names)}); ratios < 1: faster than {first}.", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    keys = sorted({(net, fmt, batch) for (_, net, fmt, batch) in records})
    mean = lambda xs: sum(xs) / len(xs) if xs else None
    for net, fmt, batch in keys:
        runs = {n: records.get((n, net, fmt, batch), []) for n in names}
        res = {n: mean([r["resident_median_ms"] for r in runs[n]]) for n in names}
        gpu = {n: mean([r.get("gpu_median_ms", 0) for r in runs[n]]) for n in names}
        l2 = {n: runs[n][0].get("relative_l2") if runs[n] else None for n in names}
        p = pt["networks"].get(net, {}).get(f"{fmt}_b{batch}", {})
        c = compiled.get(net, {}).get("configs", {}).get(f"{fmt}_b{batch}", {})
        row = [net, fmt, str(batch)] + [cell(res[n]) for n in names] + \
            [f"{res[n] / res[first]:.3f}" if res[n] and res[first] else "-" for n in names[1:]] + \
            [" / ".join(cell(gpu[n]) for n in names),
             " / ".join("-" if l2[n] is None else f"{l2[n]:.3g}" for n in names),
             " / ".join(str(len(runs[n])) for n in names),
             cell(p.get("eager", {}).get("median_ms")), cell(p.get("graph", {}).get("median_ms")),
             cell(c.get("median_ms")) if "median_ms" in c else ("failed" if "error" in c else "-")]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def load_ab(directory, names):
    records = {}
    pattern = re.compile(r"(.+)_(fp16|fp32)_b(\d+)_(\d+)\.json$")
    for path in sorted(glob.glob(os.path.join(directory, "*.json"))):
        base = os.path.basename(path)
        name = next((n for n in names if base.startswith(n + "_")), None)
        m = pattern.match(base[len(name) + 1:]) if name else None
        if not m:
            continue
        with open(path) as f:
            r = json.load(f)
        records.setdefault((name, m.group(1), m.group(2), int(m.group(3))), []).append(r)
    return records


def main():
    if sys.argv[1] == "--ab":
        directory, names = sys.argv[2], sys.argv[3:]
        pt, compiled, _ = load(os.path.dirname(os.path.abspath(directory)))
        text = ab_table(load_ab(directory, names), names, pt, compiled)
        open(os.path.join(directory, "ab.md"), "w").write(text)
        print(text)
        return
    out = sys.argv[1]
    pt, compiled, runs = load(out)
    configs = os.environ.get("VKCNN_BENCH_CONFIGS")
    text = table(pt, compiled, runs, configs.split() if configs else None)
    open(os.path.join(out, "results.md"), "w").write(text)
    print(text)


if __name__ == "__main__":
    main()
