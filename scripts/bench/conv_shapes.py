#!/usr/bin/env python3
"""Per-shape convolution benchmark of issue #11 (runs on the GPU machine, with its PyTorch).

Enumerates every distinct convolution of the benchmark networks (torchvision architectures,
forward hooks at 224x224), then for each batch and storage format times
  - vkcnn: one convolution (its dispatches), GPU timestamps, through bench/conv_bench.cpp
    (vkcnn-bench-conv), ReLU fused as the networks use it;
  - PyTorch: F.conv2d on the same shape, channels_last, cudnn.benchmark, CUDA events (fp32 with
    TF32 off);
and writes OUT/conv_<fmt>_b<batch>.md (shapes sorted by the time the networks spend in them in
vkcnn: time x occurrences), OUT/conv_shapes.json (everything) and a summary on stdout.

  python3 scripts/bench/conv_shapes.py --bench .device-build/bin/vkcnn-bench-conv --out DIR
      [--batches 1,32] [--formats fp16,fp32] [--networks a,b] [--tiles auto,legacy,128x128,...]

--from-json PATH re-renders the tables of a saved conv_shapes.json (no GPU or PyTorch needed).
--tiles times each format once per configuration (VKCNN_CONVOLUTION_TILE forces one; "auto" is the
selector's own choice) and reports the best of them per shape beside the first one's.
--pieces adds, for shapes whose batch the 2048-layer limit splits, the wall time of the pieces
side by side as a Graph runs them (the timestamps of "vkcnn ms" serialise them: up to 2x more).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

NETWORKS = ["resnet18", "resnet50", "vgg16", "mobilenet_v2", "efficientnet_b0",
            "resnext50_32x4d", "regnet_y_800mf", "mobilenet_v3_large", "densenet121"]


def enumerate_shapes(networks):
    """{key: {network: count}}, key = (c, h, w, k, kh, kw, sh, sw, ph, pw, dh, dw, groups)."""
    import torch
    import torchvision
    shapes = {}
    for net in networks:
        model = getattr(torchvision.models, net)(weights=None).eval()
        hooks = []

        def hook(module, inputs, _output, net=net):
            x = inputs[0]
            pad = module.padding
            if isinstance(pad, str):
                raise RuntimeError(f"{net}: string padding {pad}")
            key = (x.shape[1], x.shape[2], x.shape[3], module.out_channels,
                   module.kernel_size[0], module.kernel_size[1], module.stride[0],
                   module.stride[1], pad[0], pad[1], module.dilation[0], module.dilation[1],
                   module.groups)
            shapes.setdefault(key, {}).setdefault(net, 0)
            shapes[key][net] += 1

        for m in model.modules():
            if isinstance(m, torch.nn.Conv2d):
                hooks.append(m.register_forward_hook(hook))
        with torch.no_grad():
            model(torch.zeros(1, 3, 224, 224))
        for h in hooks:
            h.remove()
    return shapes


def flops(key, n):
    c, h, w, k, kh, kw, sh, sw, ph, pw, dh, dw, g = key
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    return 2.0 * n * oh * ow * k * kh * kw * (c // g)


def describe(key):
    c, h, w, k, kh, kw, sh, sw, ph, pw, dh, dw, g = key
    s = f"{kh}x{kw}/{sh} {c}->{k} @{h}x{w}"
    if g > 1:
        s += " dw" if g == c else f" g{g}"
    if dh > 1 or dw > 1:
        s += f" dil{dh}"
    return s


def run_vkcnn(bench, keys, batch, fmt, tiles, work, iterations, neuron="relu", pieces=False,
              warmup=None, cold=False):
    """{tile: {shape index: result}} from one vkcnn-bench-conv run over every shape; with
    pieces, also {"pieces": {shape index: its pieces side by side}} where the batch is split."""
    path = os.path.join(work, f"shapes_b{batch}.txt")
    with open(path, "w") as f:
        for i, key in enumerate(keys):
            f.write(f"s{i} {batch} " + " ".join(str(v) for v in key) + "\n")
    cmd = [bench, "conv", path, f"--{fmt}", "--iterations", str(iterations),
           "--tiles", ",".join(tiles), "--neuron", neuron] + (["--pieces"] if pieces else []) + \
          (["--warmup", str(warmup)] if warmup is not None else []) + (["--cold"] if cold else [])
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        print(out.stderr[-2000:], file=sys.stderr)
    with open(os.path.join(work, f"vkcnn_{fmt}_b{batch}.jsonl"), "w") as f:
        f.write(out.stdout)
    results = {t: {} for t in tiles}
    for line in out.stdout.splitlines():
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue
        key = r.get("tile", tiles[0])
        if "pieces" in r:  # the first configuration's pieces side by side go in the table
            key = "pieces" if r.get("pieces_tile", tiles[0]) == tiles[0] else "pieces " + r["pieces_tile"]
        results.setdefault(key, {})[int(r["name"][1:])] = r
    return results


def run_torch(keys, batch, fmt, iterations):
    import torch
    import torch.nn.functional as F
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    dtype = torch.float16 if fmt == "fp16" else torch.float32
    results = {}
    for i, key in enumerate(keys):
        c, h, w, k, kh, kw, sh, sw, ph, pw, dh, dw, g = key
        torch.manual_seed(i)
        x = torch.randn(batch, c, h, w, device="cuda", dtype=dtype).to(
            memory_format=torch.channels_last)
        wt = (torch.randn(k, c // g, kh, kw, device="cuda", dtype=dtype) * 0.05).to(
            memory_format=torch.channels_last)
        b = torch.randn(k, device="cuda", dtype=dtype) * 0.1

        def step():
            return F.conv2d(x, wt, b, (sh, sw), (ph, pw), (dh, dw), g)

        for _ in range(3):
            step()
        torch.cuda.synchronize()
        times = []
        for _ in range(iterations):
            s = torch.cuda.Event(enable_timing=True)
            e = torch.cuda.Event(enable_timing=True)
            s.record()
            step()
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e))
        results[i] = {"ms": statistics.median(times), "min_ms": min(times)}
        del x, wt, b
    return results


def write_table(out, tag, rows, tiles):
    """OUT/conv_<tag>.md from one run's rows (sorted in place); returns a summary line."""
    fmt, batch = tag.split("_b")
    rows.sort(key=lambda r: -(r["vk"] or 0) * r["count"])
    lines = [f"# vkcnn vs PyTorch F.conv2d, {fmt}, batch {batch}", "",
             "Sorted by the time the networks spend in each shape in vkcnn "
             "(median ms x occurrences). ratio = cuDNN ms / vkcnn ms (> 1: vkcnn "
             "faster). TFLOP/s counts 2 x MACs.", "",
             "| shape | uses | GFLOP | vkcnn ms | TFLOP/s | config | cuDNN ms | TFLOP/s "
             "| ratio | best forced | ratio | pieces side by side |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    tot_vk = tot_th = tot_best = 0.0
    per_net = {}

    def f(v, fmt_="{:.4f}"):
        return fmt_.format(v) if v else "-"

    def side_by_side(r):  # where the layer limit splits the batch: its pieces as a Graph runs them
        return f"{r['pieces']} x: {r['pieces_ms']:.4f}" if r.get("pieces_ms") else "-"
    for r in rows:
        vkms, thms, best = r["vk"], r["torch"], r["vk_best"]
        tot_vk += (vkms or 0) * r["count"]
        tot_th += (thms or 0) * r["count"]
        tot_best += (best or 0) * r["count"]
        for entry in r["nets"].split(","):
            net, uses = entry.split(":")
            n = per_net.setdefault(net, [0.0, 0.0])
            n[0] += (r.get("pieces_ms") or vkms or 0) * int(uses)  # as a Graph runs it
            n[1] += (thms or 0) * int(uses)
        tf = r["gflop"] / vkms if vkms else None
        tt = r["gflop"] / thms if thms else None
        ratio = thms / vkms if vkms and thms else None
        bratio = thms / best if best and thms else None
        lines.append(
            f"| {r['desc']} | {r['count']} | {r['gflop']:.3f} | {f(vkms)} | "
            f"{f(tf, '{:.1f}')} | {r['cfg_' + tiles[0]].split(' (')[-1].rstrip(')')} | "
            f"{f(thms)} | {f(tt, '{:.1f}')} | {f(ratio, '{:.2f}')} | "
            f"{r['best_tile'] or '-'} {f(best)} | {f(bratio, '{:.2f}')} | "
            f"{side_by_side(r)} |")
    tot_side = sum((r.get("pieces_ms") or r["vk"] or 0) * r["count"] for r in rows)
    lines += ["", f"Sum over all uses: vkcnn {tot_vk:.3f} ms, best forced {tot_best:.3f} "
              f"ms, cuDNN {tot_th:.3f} ms."]
    if any(r.get("pieces_ms") for r in rows):
        lines += ["", "vkcnn ms is the sum of a split batch's dispatches one after another "
                  "(timestamps); a Graph runs the pieces side by side (last column, wall time): "
                  f"with those, the sum is {tot_side:.3f} ms."]
    lines += ["",
              "Per network (its convolutions' time x uses, a split batch's pieces side by side "
              "where measured; cuDNN timed per call, so at batch 1 its launch cost is in every "
              "call):", "",
              "| network | vkcnn ms | cuDNN ms | ratio |", "|---|---|---|---|"]
    for net, (v, t) in sorted(per_net.items(), key=lambda x: -x[1][0]):
        lines.append(f"| {net} | {v:.3f} | {t:.3f} | {f(t / v if v and t else None, '{:.2f}')} |")
    with open(os.path.join(out, f"conv_{tag}.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    top = [r for r in rows[:10] if r["vk"] and r["torch"]]
    return (f"{tag}: sum vkcnn {tot_vk:.3f} ms (best forced {tot_best:.3f}), cuDNN "
            f"{tot_th:.3f} ms; top-10 ratios " +
            " ".join(f"{r['torch'] / r['vk']:.2f}" for r in top))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench")
    ap.add_argument("--out", required=True)
    ap.add_argument("--from-json", help="only re-render the tables of a saved conv_shapes.json")
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--formats", default="fp16,fp32")
    ap.add_argument("--networks", default=",".join(NETWORKS))
    ap.add_argument("--tiles", default="auto")
    ap.add_argument("--only-3x3-stride-1", action="store_true",
                    help="only the dense 3x3 stride-1 shapes (those Winograd computes)")
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--pieces", action="store_true",
                    help="where the layer limit splits the batch, also time its pieces side by "
                         "side as a Graph runs them (vkcnn-bench-conv --pieces)")
    ap.add_argument("--warmup", type=float,
                    help="seconds each configuration runs before its timed round "
                         "(vkcnn-bench-conv's default unless given)")
    ap.add_argument("--cold", action="store_true",
                    help="weights and source from DRAM, as inside a network (vkcnn-bench-conv "
                         "--cold); PyTorch's side stays warm")
    ap.add_argument("--neuron", default="relu", choices=["relu", "none", "relu6", "silu"],
                    help="vkcnn's fused neuron (PyTorch's side always applies ReLU: with another, "
                         "pass --no-torch)")
    args = ap.parse_args()
    if args.from_json:
        return from_json(args.from_json, args.out)
    if not args.bench:
        ap.error("--bench is required (or --from-json)")
    os.makedirs(args.out, exist_ok=True)
    networks = args.networks.split(",")
    shapes = enumerate_shapes(networks)
    keys = sorted(shapes)
    if args.only_3x3_stride_1:
        keys = [k for k in keys if k[4:8] == (3, 3, 1, 1) and k[10:] == (1, 1, 1)]
    print(f"{len(keys)} distinct convolutions in {len(networks)} networks", flush=True)
    tiles = args.tiles.split(",")
    everything = {"networks": networks, "shapes": [
        {"key": list(k), "desc": describe(k), "count": shapes[k]} for k in keys], "runs": {}}
    summary = []
    for fmt in args.formats.split(","):
        for batch in [int(b) for b in args.batches.split(",")]:
            tag = f"{fmt}_b{batch}"
            fmt_tiles = tiles
            vk = run_vkcnn(args.bench, keys, batch, fmt, fmt_tiles, args.out, args.iterations,
                           args.neuron, args.pieces, args.warmup, args.cold)
            th = {} if args.no_torch else run_torch(keys, batch, fmt, args.iterations)
            rows = []
            for i, key in enumerate(keys):
                count = sum(shapes[key].values())
                fl = flops(key, batch)
                row = {"key": list(key), "desc": describe(key), "count": count, "gflop": fl / 1e9,
                       "nets": ",".join(f"{n}:{c}" for n, c in shapes[key].items())}
                for t in fmt_tiles:
                    r = vk[t].get(i, {})
                    row[f"vk_{t}"] = r.get("ms")
                    row[f"cfg_{t}"] = r.get("config", r.get("error", "missing"))
                best = [(row[f"vk_{t}"], t) for t in fmt_tiles if row[f"vk_{t}"]]
                row["vk"] = row.get(f"vk_{fmt_tiles[0]}")
                row["vk_best"], row["best_tile"] = min(best) if best else (None, None)
                row["torch"] = th.get(i, {}).get("ms")
                split = vk.get("pieces", {}).get(i)
                if split:
                    # As a Graph runs them (encodeBatch); older runs had one encode a piece.
                    row["pieces"] = split["pieces"]
                    row["pieces_ms"] = split.get("batch_ms", split["concurrent_ms"])
                rows.append(row)
            everything["runs"][tag] = rows
            summary.append(write_table(args.out, tag, rows, fmt_tiles))
            with open(os.path.join(args.out, "conv_shapes.json"), "w") as f:
                json.dump(everything, f, indent=1)
            print(summary[-1], flush=True)
    print("\n".join(summary))


def from_json(path, out):
    """Re-renders the tables of a saved conv_shapes.json (no GPU, no PyTorch needed)."""
    with open(path) as fh:
        everything = json.load(fh)
    os.makedirs(out, exist_ok=True)
    for tag, rows in everything["runs"].items():
        tiles = [k[3:] for k in rows[0] if k.startswith("vk_") and k != "vk_best"]
        tiles.sort(key=lambda t: t != "auto")
        print(write_table(out, tag, rows, tiles))


if __name__ == "__main__":
    main()
