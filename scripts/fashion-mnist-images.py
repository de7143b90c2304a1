#!/usr/bin/python3
"""Writes test images of Debian's dataset-fashion-mnist as one float32 .npy of shape
[COUNT, 1, 28, 28], pixel/255: the input samples/fashion_mnist/weights/fashion_mnist.onnx takes
(made by scripts/export-fashion-mnist-onnx.py). Prints each image's true class. The README's first
run; tests/test_cli.cpp runs it as the README does.

usage: scripts/fashion-mnist-images.py OUT.npy [COUNT] [FIRST]   (COUNT 4, FIRST 0 by default)"""
import gzip
import os
import sys

import numpy as np

DATASET = "/usr/share/datasets/fashion-mnist"
here = os.path.dirname(os.path.abspath(__file__))

if len(sys.argv) < 2 or len(sys.argv) > 4 or sys.argv[1].startswith("-"):
    sys.exit(__doc__.split("\n\n")[-1])
out = sys.argv[1]
count = int(sys.argv[2]) if len(sys.argv) > 2 else 4
first = int(sys.argv[3]) if len(sys.argv) > 3 else 0
if not (1 <= count and 0 <= first and first + count <= 10000):
    sys.exit("COUNT and FIRST pick images among the 10000 test images")

with gzip.open(os.path.join(DATASET, "t10k-images-idx3-ubyte.gz")) as f:
    images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 1, 28, 28)
with gzip.open(os.path.join(DATASET, "t10k-labels-idx1-ubyte.gz")) as f:
    labels = np.frombuffer(f.read(), np.uint8, offset=8)
with open(os.path.join(here, "..", "samples", "fashion_mnist", "labels.txt")) as f:
    names = f.read().splitlines()

np.save(out, (images[first:first + count] / np.float32(255)).astype(np.float32))
print(f"wrote {out}: test images {first}..{first + count - 1}, shape [{count}, 1, 28, 28]")
for i in range(first, first + count):
    print(f"  image {i - first}  class {labels[i]}  {names[labels[i]]}")
