# pytorch_side.py's main, fp16 only (the device budget): exports, references, fp16 b1/b32 timings.
import json, os, sys, time
sys.path.insert(0, os.path.join(os.getcwd(), "scripts/bench"))
import numpy as np
import torch
from pytorch_side import build, export, bench

out, nets, runs = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3])
batches = [int(b) for b in (sys.argv[4] if len(sys.argv) > 4 else "1,32").split(",")]
os.makedirs(out, exist_ok=True)
torch.backends.cudnn.benchmark = True
report = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(0), "networks": {}}
for name in nets:
    t0 = time.time()
    model = build(name)
    path = os.path.join(out, f"{name}.onnx")
    export(model, path, 17)
    entry = {"onnx": path}
    for batch in batches:
        g = torch.Generator().manual_seed(1234 + batch)
        x = torch.randn(batch, 3, 224, 224, generator=g)
        with torch.inference_mode():
            y = model.float()(x)
        np.save(os.path.join(out, f"{name}_b{batch}_input.npy"), x.numpy())
        np.save(os.path.join(out, f"{name}_b{batch}_output.npy"), y.numpy())
        with torch.inference_mode():
            m16 = build(name).to("cuda", dtype=torch.float16).to(memory_format=torch.channels_last)
            y16 = m16(x.to("cuda", dtype=torch.float16).to(memory_format=torch.channels_last))
        entry[f"fp16_b{batch}_relative_l2"] = float((y16.float().cpu() - y).norm() / y.norm())
        entry[f"fp16_b{batch}"] = bench(build(name), batch, torch.float16, runs, 10)
    report["networks"][name] = entry
    print(f"pytorch: {name} done in {time.time() - t0:.1f} s", flush=True)
with open(os.path.join(out, "pytorch.json"), "w") as f:
    json.dump(report, f, indent=1)
