# Session 28: micro models for the image path's throughput (run 2). Each is exported with a static
# batch of 32; `vkcnn profile` times its kernels.
import os, sys, torch
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
class Relu(torch.nn.Module):
    def forward(self, x): return torch.relu(x)
class AddRelu(torch.nn.Module):
    def forward(self, x): return x + torch.relu(x)
class Pool(torch.nn.Module):
    def forward(self, x): return torch.nn.functional.max_pool2d(x, 2)
class Conv(torch.nn.Module):
    def __init__(self, c, k, residual):
        super().__init__(); self.a = torch.nn.Conv2d(c, k, 1); self.b = torch.nn.Conv2d(c, k, 1) if residual else None
    def forward(self, x):
        y = self.a(x)
        return torch.relu(y + self.b(x)) if self.b is not None else torch.relu(y)
models = {
    "relu64": (Relu(), (32, 64, 56, 56)),
    "relu256": (Relu(), (32, 256, 56, 56)),
    "relu64_224": (Relu(), (32, 64, 224, 224)),
    "addrelu64": (AddRelu(), (32, 64, 56, 56)),
    "pool64_224": (Pool(), (32, 64, 224, 224)),
    "conv64x256": (Conv(64, 256, False), (32, 64, 56, 56)),
    "conv64x256res": (Conv(64, 256, True), (32, 64, 56, 56)),
    "conv256x64": (Conv(256, 64, False), (32, 256, 56, 56)),
}
for name, (m, shape) in models.items():
    x = torch.randn(*shape)
    torch.onnx.export(m.eval(), (x,), os.path.join(out, name + ".onnx"), input_names=["x"],
                      output_names=["y"], opset_version=17, dynamo=False)
    print(name, shape)
