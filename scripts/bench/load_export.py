#!/usr/bin/env python3
# Exports torchvision networks with random (seeded) weights as self-contained ONNX files in /tmp
# (the load-time runs: scripts/bench-gpu.sh --steps load; bench/log/2026-11-24-h100-load.md).
import os, sys, torch, torchvision
torch.manual_seed(0)
for name in sys.argv[1:]:
    m = getattr(torchvision.models, name)(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)
    path = f"/tmp/{name}.onnx"
    kw = dict(input_names=["input"], output_names=["output"], opset_version=13)
    try:
        torch.onnx.export(m, x, path, dynamo=False, **kw)
    except TypeError:
        torch.onnx.export(m, x, path, **kw)
    # Newer exporters may write the weights beside the model (external data): fold them in.
    try:
        import onnx
        model = onnx.load(path)
        onnx.save_model(model, path, save_as_external_data=False)
    except ImportError:
        pass
    print(name, os.path.getsize(path), flush=True)
