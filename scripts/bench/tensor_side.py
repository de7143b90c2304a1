#!/usr/bin/env python3
"""The tensor step's helpers (scripts/bench-gpu.sh --steps tensor; issue #12):

  tensor_side.py export WORK                 torchvision's convnext_tiny (seeded weights, layer
                                             scales from [0.2, 1]) as WORK/convnext_tiny.onnx, its
                                             input and PyTorch's float64 and float32 outputs
  tensor_side.py compare OUTPUT.npy REFERENCE.npy TARGET
                                             one line: relative L2 against the reference, pass or
                                             FAIL against TARGET, max |diff|, top-1
  tensor_side.py summary PROFILE.json        the fp16 profile's Tensor conversions and transposes
                                             against same-size element-wise ops, as Markdown
"""
import sys


def set_argv(argv):
    """The bodies below read their arguments from sys.argv[1:], as the scripts they came from."""
    sys.argv = [sys.argv[0]] + argv


def export(argv):
    """Exports the model and the references."""
    set_argv(argv)
    import copy, inspect, os, sys
    import numpy as np, torch, torchvision
    work = sys.argv[1]
    torch.manual_seed(0)
    m = torchvision.models.convnext_tiny(weights=None).eval()
    for name, p in m.named_parameters():
        if name.endswith("layer_scale"):
            p.data.uniform_(0.2, 1.0)  # random init leaves them at 1e-6: the blocks would not count
    x = torch.randn(1, 3, 224, 224)
    with torch.no_grad():
        y32 = m(x)
        # The reference is float64, so that PyTorch's own float32 rounding does not count against
        # vkcnn; the summary shows how far PyTorch's float32 is from it.
        y = copy.deepcopy(m).double()(x.double())
    np.save(os.path.join(work, "input.npy"), x.numpy())
    np.save(os.path.join(work, "reference.npy"), y.numpy())
    np.save(os.path.join(work, "pytorch_fp32.npy"), y32.numpy())
    kw = {}
    params = inspect.signature(torch.onnx.export).parameters
    if "dynamo" in params:
        kw["dynamo"] = False  # the TorchScript exporter: one file, no external data at this size
    path = os.path.join(work, "convnext_tiny.onnx")
    torch.onnx.export(m, x, path, opset_version=17, input_names=["input"], output_names=["logits"], **kw)
    extra = [f for f in os.listdir(work) if f != "convnext_tiny.onnx"
             and not f.endswith((".log", ".json", ".txt", ".npy"))]
    if extra:
        sys.exit(f"the export wrote side files (external data?): {extra}")
    print(f"torch {torch.__version__} torchvision {torchvision.__version__}; "
          f"{os.path.getsize(path) / 1e6:.1f} MB")


def compare(argv):
    """One comparison line."""
    set_argv(argv)
    import sys
    import numpy as np
    try:
        got = np.load(sys.argv[1]).astype(np.float64).ravel()
    except Exception as e:
        print(f"no output ({e})"); sys.exit(0)
    want = np.load(sys.argv[2]).astype(np.float64).ravel()
    rel = np.linalg.norm(got - want) / np.linalg.norm(want)
    ok = "pass" if rel <= float(sys.argv[3]) else "FAIL"
    print(f"relative L2 {rel:.3e} (target {sys.argv[3]}: {ok}), max |diff| {np.abs(got - want).max():.3e}, "
          f"top-1 {got.argmax()} vs PyTorch {want.argmax()}")


def summary(argv):
    """The profile's summary tables."""
    set_argv(argv)
    import json, re, statistics, sys
    from collections import defaultdict
    try:
        p = json.load(open(sys.argv[1]))
    except Exception as e:
        print(f"\nno profile ({e})"); sys.exit(0)
    # Element counts of the values on Tensors, by node name: "NAME (kind) -> tensor [d, ...]".
    size = {}
    for v in p["tensor_values"]:
        m = re.match(r"(.*) \(([^()]*)\) -> tensor \[([0-9, ]*)\]$", v["node"])
        if m:
            n = 1
            for d in m.group(3).split(","):
                n *= int(d) if d.strip() else 1
            size[m.group(1)] = n
    conversions = ("ImageToTensor", "TensorToImage", "TensorTranspose")
    elementwise = ("TensorBinary", "TensorUnary")
    rows = defaultdict(lambda: defaultdict(list))  # elements -> kind -> [ms]
    total = defaultdict(float)
    unsized = 0
    previous = None  # element count of the last dispatch's value
    for k in p["kernels"]:
        m = re.match(r"(\w+) '(.*)'", k["label"])
        kind, name = (m.group(1), m.group(2)) if m else (k["label"], "")
        group = kind if kind in conversions + elementwise else "other"
        total[group] += k["median_ms"]
        n = size.get(name)
        if n is None and kind == "TensorToImage":
            # Named after the image it makes, whose source view is no Tensor value of its own: its
            # source is the value the dispatch before it wrote.
            n = previous
        previous = size.get(name)
        if group == "other":
            continue
        if n is None:
            unsized += 1
            continue
        rows[n][kind].append(k["median_ms"])
    print(f"\n## fp16 profile: {p['total_ms']:.3f} ms of kernels over {p['dispatches']} dispatches "
          f"({p['iterations']} iterations, medians; device {p['device']})\n")
    print("| kernels | ms in all | share |\n|---|---:|---:|")
    for g in conversions + elementwise + ("other",):
        print(f"| {g} | {total[g]:.3f} | {100 * total[g] / max(p['total_ms'], 1e-12):.1f}% |")
    print("\nPer element count: median ms of one dispatch (count of dispatches); ratio = the largest "
          "median of the three conversion kinds over the median element-wise op of the same size "
          "(worst: the slowest single dispatch over it).\n")
    print("| elements | " + " | ".join(conversions + elementwise) + " | ratio | worst |")
    print("|---:|" + "---:|" * (len(conversions) + len(elementwise) + 2))
    worst = []
    for n in sorted(rows):
        r = rows[n]
        cells = [f"{statistics.median(r[k]):.4f} ({len(r[k])})" if r[k] else "" for k in conversions + elementwise]
        ew = [t for k in elementwise for t in r[k]]
        cv = [t for k in conversions for t in r[k]]
        ratio = slowest = ""
        if ew and cv:
            x = max(statistics.median(r[k]) for k in conversions if r[k]) / statistics.median(ew)
            worst.append((x, n))
            ratio, slowest = f"{x:.2f}", f"{max(cv) / statistics.median(ew):.2f}"
        print(f"| {n} | " + " | ".join(cells) + f" | {ratio} | {slowest} |")
    if worst:
        x, n = max(worst)
        verdict = "holds" if x <= 1.0 else "does NOT hold"
        print(f"\nLargest median ratio {x:.2f} at {n} elements: the criterion {verdict} "
              f"(<= 1.0 at every size with both kinds).")
    if unsized:
        print(f"\n({unsized} dispatches of those kinds had no size in tensor_values and are left out.)")


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command not in ("export", "compare", "summary"):
        sys.exit(__doc__)
    {"export": export, "compare": compare, "summary": summary}[command](sys.argv[2:])
