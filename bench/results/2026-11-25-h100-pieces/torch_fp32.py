# fp32 batch-32 timings (TF32 off), beside vkcnn's fp32 runs; models exported by torch_fp16.py.
import json, os, sys
sys.path.insert(0, os.path.join(os.getcwd(), "scripts/bench"))
import torch
from pytorch_side import build, bench
out, nets, runs = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3])
torch.backends.cudnn.benchmark = True
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
report = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(0), "networks": {}}
for name in nets:
    report["networks"][name] = {"fp32_b32": bench(build(name), 32, torch.float32, runs, 10)}
    print(name, report["networks"][name], flush=True)
with open(os.path.join(out, "pytorch_fp32.json"), "w") as f:
    json.dump(report, f, indent=1)
