#!/usr/bin/python3
"""Writes the PyTorch exports the import tests run (tests/test_onnx_torch.cpp) into
tests/data/torch/: for each model NAME.onnx, its inputs NAME.inK.bin and PyTorch's outputs
NAME.outK.bin (raw little-endian float32, row-major). Debian's python3-torch and
python3-torchvision only; seeded, so the files are reproducible on one torch version.

  convnext17 / convnext13  a reduced ConvNeXt from torchvision's own CNBlock and LayerNorm2d
                           (stem, two stages of two blocks, downsampling, head; widths 16 and
                           32, 64x64 input): permutes to NHWC, LayerNorm over channels, 4-D
                           MatMuls (Linear), GELU (Erf), layer scale, residuals. Exported at
                           opset 17 (LayerNormalization) and 13 (LayerNorm decomposed into
                           ReduceMean, Sub, Pow, Sqrt, Div). convnext_tiny itself is 110 MB.
  detection                a RetinaNet-style head on two feature levels: box and class
                           convolutions permuted to NHWC, reshaped to [1, anchors, 4] and
                           [1, anchors, classes], concatenated, softmax over the classes.
  nhwc                     a classifier fed [1, H, W, 3] that permutes to NCHW first.
  crnn                     a CRNN-style recogniser: conv backbone down to height 1, squeeze,
                           transpose to [N, T, C], self-attention (batched MatMuls, softmax
                           over T), Linear and softmax over the classes; the width is dynamic
                           ("W"); references at widths 64 (crnn) and 96 (crnn_w96).
"""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision.models.convnext import CNBlock, LayerNorm2d

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "torch")
os.makedirs(out, exist_ok=True)


def randomize(model):
    # Trained-looking weights: LayerNorm scales and layer scales away from their 1 / 1e-6 inits.
    g = torch.Generator().manual_seed(7)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1 or name.endswith("layer_scale"):
                p.copy_(1 + 0.5 * (torch.rand(p.shape, generator=g) - 0.5)
                        if "weight" in name or "layer_scale" in name
                        else 0.2 * (torch.rand(p.shape, generator=g) - 0.5))
    return model.eval()


def save(name, model, inputs, opset, dynamic_axes=None, input_names=None, output_names=None,
         export=True):
    input_names = input_names or ["x"]
    with torch.no_grad():
        outputs = model(*inputs)
    if not isinstance(outputs, tuple):
        outputs = (outputs,)
    output_names = output_names or ["y%d" % k for k in range(len(outputs))]
    if export:
        torch.onnx.export(model, tuple(inputs), os.path.join(out, name + ".onnx"),
                          opset_version=opset, input_names=input_names,
                          output_names=output_names, dynamic_axes=dynamic_axes,
                          do_constant_folding=True)
    for k, t in enumerate(inputs):
        t.contiguous().numpy().astype("<f4").tofile(os.path.join(out, "%s.in%d.bin" % (name, k)))
    for k, t in enumerate(outputs):
        t.contiguous().numpy().astype("<f4").tofile(os.path.join(out, "%s.out%d.bin" % (name, k)))
    print(name, [tuple(t.shape) for t in inputs], "->", [tuple(t.shape) for t in outputs])


class SmallConvNeXt(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Sequential(nn.Conv2d(3, 16, 4, 4), LayerNorm2d(16, eps=1e-6)),
            nn.Sequential(CNBlock(16, 1e-6, 0.0), CNBlock(16, 1e-6, 0.0)),
            nn.Sequential(LayerNorm2d(16, eps=1e-6), nn.Conv2d(16, 32, 2, 2)),
            nn.Sequential(CNBlock(32, 1e-6, 0.0), CNBlock(32, 1e-6, 0.0)),
        )
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(LayerNorm2d(32, eps=1e-6), nn.Flatten(1),
                                        nn.Linear(32, classes))

    def forward(self, x):
        return self.classifier(self.avgpool(self.features(x)))


class DetectionHead(nn.Module):
    def __init__(self, anchors=3, classes=5):
        super().__init__()
        self.classes = classes
        self.backbone = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.ReLU(),
                                      nn.Conv2d(16, 16, 3, 2, 1), nn.ReLU())
        self.down = nn.Conv2d(16, 16, 3, 2, 1)
        self.box = nn.Conv2d(16, anchors * 4, 3, 1, 1)
        self.cls = nn.Conv2d(16, anchors * classes, 3, 1, 1)

    def forward(self, x):
        f1 = self.backbone(x)
        f2 = F.relu(self.down(f1))
        boxes, scores = [], []
        for f in (f1, f2):
            n = f.shape[0]
            boxes.append(self.box(f).permute(0, 2, 3, 1).reshape(n, -1, 4))
            scores.append(self.cls(f).permute(0, 2, 3, 1).reshape(n, -1, self.classes))
        return torch.cat(boxes, 1), torch.cat(scores, 1).softmax(-1)


class NhwcClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1), nn.ReLU(), nn.Conv2d(8, 8, 3, 2, 1),
                                  nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(1),
                                  nn.Linear(8, 5))

    def forward(self, x):
        return self.body(x.permute(0, 3, 1, 2))


class CRNN(nn.Module):
    def __init__(self, classes=12, width=48):
        super().__init__()
        self.width = width
        self.cnn = nn.Sequential(
            nn.Conv2d(3, 16, 3, 1, 1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2, 2),
            nn.Conv2d(16, 32, 3, 1, 1), nn.ReLU(), nn.MaxPool2d(2, 2),
            nn.Conv2d(32, 32, 3, 1, 1), nn.ReLU(), nn.MaxPool2d((2, 1), (2, 1)),
            nn.Conv2d(32, width, (4, 1)), nn.ReLU())
        self.q = nn.Linear(width, width)
        self.k = nn.Linear(width, width)
        self.v = nn.Linear(width, width)
        self.fc = nn.Linear(width, classes)

    def forward(self, x):
        f = self.cnn(x).squeeze(2).permute(0, 2, 1)  # [N, T, C]
        a = torch.softmax(self.q(f) @ self.k(f).transpose(1, 2) / math.sqrt(self.width), dim=-1)
        f = f + a @ self.v(f)
        return torch.softmax(self.fc(f), dim=2)  # [N, T, classes]


torch.manual_seed(0)
convnext = randomize(SmallConvNeXt())
x = torch.rand(1, 3, 64, 64) * 2 - 1
save("convnext17", convnext, [x], 17)
save("convnext13", convnext, [x], 13)
torch.manual_seed(1)
save("detection", randomize(DetectionHead()), [torch.rand(1, 3, 64, 64) * 2 - 1], 13,
     output_names=["boxes", "scores"])
torch.manual_seed(2)
save("nhwc", randomize(NhwcClassifier()), [torch.rand(1, 16, 16, 3) * 2 - 1], 13)
torch.manual_seed(3)
crnn = randomize(CRNN())
save("crnn", crnn, [torch.rand(1, 3, 32, 64) * 2 - 1], 13,
     dynamic_axes={"x": {3: "W"}, "y0": {1: "T"}})
save("crnn_w96", crnn, [torch.rand(1, 3, 32, 96) * 2 - 1], 13, export=False)
