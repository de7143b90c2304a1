#!/usr/bin/python3
"""Trains the Fashion-MNIST "hello world" CNN and exports it for vkcnn's sample.

Run it with Debian's interpreter (python3-torch 1.13, python3-numpy), not a pyenv python:

    /usr/bin/python3 scripts/train-fashion-mnist.py [--epochs N] [--out DIR]

Reads Debian's dataset-fashion-mnist IDX files (/usr/share/datasets/fashion-mnist/*.gz) by hand
(gzip + IDX), trains on the CPU with fixed seeds, a fixed thread count and
torch.use_deterministic_algorithms(True), evaluates on the 10,000 test images, and writes into
samples/fashion_mnist/weights/:

  <layer>_weights.dat, <layer>_bias.dat   raw little-endian float32 in MPS order
                                          weight[outputChannels][kernelHeight][kernelWidth][inputChannels]
  test_predictions.u8                     10,000 uint8: PyTorch's argmax class per test image
  test_logits_first8.f32                  float32 [8][10]: PyTorch's logits of test images 0..7
  accuracy.txt                            accuracy, architecture, file shapes, run facts

Input normalisation is pixel/255 and nothing else (no mean/std): a unorm8 image holds exactly that.
"""

import argparse
import gzip
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

DATA_DIR = "/usr/share/datasets/fashion-mnist"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(ROOT, "samples", "fashion_mnist", "weights")

SEED = 20240601
THREADS = 2  # fixed: CPU kernels may sum in a different order with another thread count
EPOCHS = 6
BATCH = 128
LEARNING_RATE = 2e-3

CLASSES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
           "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]


def read_idx(path):
    """Parses one gzip'd IDX file: big-endian magic 0x000008TD (T=0x08: uint8, D: dimensions),
    D big-endian uint32 sizes, then the data row-major."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    zero, dtype, dims = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype != 0x08:
        raise ValueError(f"{path}: not an unsigned-byte IDX file (magic {data[:4].hex()})")
    shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    body = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims)
    if body.size != int(np.prod(shape)):
        raise ValueError(f"{path}: {body.size} bytes of data for shape {shape}")
    return body.reshape(shape)


def load(split):
    prefix = "train" if split == "train" else "t10k"
    images = read_idx(os.path.join(DATA_DIR, f"{prefix}-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(DATA_DIR, f"{prefix}-labels-idx1-ubyte.gz"))
    assert images.shape[1:] == (28, 28) and images.shape[0] == labels.shape[0]
    x = torch.from_numpy(images.astype(np.float32) / 255.0).unsqueeze(1)  # N,1,28,28
    y = torch.from_numpy(labels.astype(np.int64))
    return x, y


class Net(nn.Module):
    """conv1 5x5 1->16 pad 2 + ReLU -> maxpool 2x2/2 -> conv2 5x5 16->32 pad 2 + ReLU ->
    maxpool 2x2/2 -> fc1 7*7*32->64 + ReLU -> fc2 64->10 -> softmax (at inference)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 5, padding=2)
        self.conv2 = nn.Conv2d(16, 32, 5, padding=2)
        self.fc1 = nn.Linear(32 * 7 * 7, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        # relu(maxpool(x)) == maxpool(relu(x)) exactly (both are monotonic); pooling first is
        # cheaper to train. Inference (and the MPS network) is conv + fused ReLU, then pooling.
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2(x), 2))
        x = torch.flatten(x, 1)  # NCHW order: c, h, w
        x = F.relu(self.fc1(x))
        return self.fc2(x)  # logits; softmax does not change the argmax


def f16(t):
    return t.half().float()


def forward_float16_storage(net, x):
    """The model with every image between kernels rounded to float16, as vkcnn stores them by
    default (accumulation stays float32): predicts how far the GPU sample may drift."""
    x = f16(x)
    x = f16(F.relu(net.conv1(x)))
    x = f16(F.max_pool2d(x, 2))
    x = f16(F.relu(net.conv2(x)))
    x = f16(F.max_pool2d(x, 2))
    x = f16(F.relu(net.fc1(torch.flatten(x, 1))))
    return f16(net.fc2(x))


def evaluate(net, x, forward=None):
    forward = forward or net
    net.eval()
    logits = []
    with torch.no_grad():
        for i in range(0, x.shape[0], 1000):
            logits.append(forward(x[i:i + 1000]))
    return torch.cat(logits)


def mps_order(net):
    """Each layer's weights as weight[outputChannels][kernelHeight][kernelWidth][inputChannels]
    (PyTorch convolutions are [out][in][kh][kw]: permute (0,2,3,1)). fc1 is the MPS convolution
    whose 7x7 kernel spans the whole 7x7x32 source: its Linear weight [64][32*7*7] is flattened
    in c,h,w order, so reshape to [64][32][7][7] and permute to [64][7][7][32]. fc2 is
    [10][1][1][64]."""
    def conv(w):
        return w.detach().permute(0, 2, 3, 1).contiguous().numpy()
    return {
        "conv1": (conv(net.conv1.weight), net.conv1.bias),
        "conv2": (conv(net.conv2.weight), net.conv2.bias),
        "fc1": (conv(net.fc1.weight.reshape(64, 32, 7, 7)), net.fc1.bias),
        "fc2": (conv(net.fc2.weight.reshape(10, 64, 1, 1)), net.fc2.bias),
    }


def numpy_mps_forward(weights, images):
    """An independent forward pass from the exported MPS-order arrays alone (no PyTorch): checks
    that the files mean what accuracy.txt says. images: N,28,28 float32 in [0,1]; HWC layout."""
    def conv(x, w, b, pad):  # x: N,H,W,Cin; w: Cout,kh,kw,Cin
        n, h, wd, _ = x.shape
        cout, kh, kw, _ = w.shape
        xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
        oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
        y = np.zeros((n, oh, ow, cout), np.float64)
        for ky in range(kh):
            for kx in range(kw):
                y += xp[:, ky:ky + oh, kx:kx + ow, :] @ w[:, ky, kx, :].T.astype(np.float64)
        return y + b

    def pool(x):
        n, h, w, c = x.shape
        return x.reshape(n, h // 2, 2, w // 2, 2, c).max(axis=(2, 4))

    relu = lambda v: np.maximum(v, 0)
    x = images[..., None].astype(np.float64)
    x = pool(relu(conv(x, *weights["conv1"], 2)))
    x = pool(relu(conv(x, *weights["conv2"], 2)))
    x = relu(conv(x, *weights["fc1"], 0))  # valid 7x7 convolution: 1x1x64
    x = conv(x, *weights["fc2"], 0)        # 1x1x10
    return x.reshape(x.shape[0], 10)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=EPOCHS)
    parser.add_argument("--batch", type=int, default=BATCH)
    parser.add_argument("--lr", type=float, default=LEARNING_RATE)
    parser.add_argument("--out", default=OUT_DIR)
    args = parser.parse_args()

    start = time.time()
    torch.manual_seed(SEED)
    np.random.seed(SEED)
    torch.set_num_threads(THREADS)
    torch.set_num_interop_threads(1)
    torch.use_deterministic_algorithms(True)

    train_x, train_y = load("train")
    test_x, test_y = load("test")
    print(f"train {tuple(train_x.shape)}, test {tuple(test_x.shape)}  ({time.time() - start:.1f} s)")

    net = Net()
    optimizer = torch.optim.Adam(net.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(
        optimizer, T_max=args.epochs * ((train_x.shape[0] + args.batch - 1) // args.batch))
    shuffle = torch.Generator().manual_seed(SEED)
    for epoch in range(args.epochs):
        net.train()
        order = torch.randperm(train_x.shape[0], generator=shuffle)
        total = 0.0
        for i in range(0, order.numel(), args.batch):
            batch = order[i:i + args.batch]
            optimizer.zero_grad()
            loss = F.cross_entropy(net(train_x[batch]), train_y[batch])
            loss.backward()
            optimizer.step()
            scheduler.step()
            total += loss.item() * batch.numel()
        accuracy = (evaluate(net, test_x).argmax(1) == test_y).double().mean().item() * 100
        print(f"epoch {epoch + 1}/{args.epochs}: loss {total / train_x.shape[0]:.4f}, "
              f"test accuracy {accuracy:.2f}%  ({time.time() - start:.1f} s)")
    train_seconds = time.time() - start

    logits = evaluate(net, test_x)
    predictions = logits.argmax(1)
    correct = int((predictions == test_y).sum())
    accuracy = 100.0 * correct / test_y.numel()
    half_logits = evaluate(net, test_x, lambda x: forward_float16_storage(net, x))
    half_predictions = half_logits.argmax(1)
    half_logit_error = (half_logits - logits).abs().max().item()
    half_logit_error8 = (half_logits[:8] - logits[:8]).abs().max().item()
    half_correct = int((half_predictions == test_y).sum())
    half_agree = int((half_predictions == predictions).sum())

    os.makedirs(args.out, exist_ok=True)
    weights = mps_order(net)
    sizes = {}
    for name, (w, b) in weights.items():
        for suffix, array in (("weights", w), ("bias", b.detach().numpy())):
            path = os.path.join(args.out, f"{name}_{suffix}.dat")
            data = np.ascontiguousarray(array, dtype="<f4")
            data.tofile(path)
            sizes[f"{name}_{suffix}.dat"] = (data.shape, data.nbytes)
    predictions.numpy().astype(np.uint8).tofile(os.path.join(args.out, "test_predictions.u8"))
    logits[:8].numpy().astype("<f4").tofile(os.path.join(args.out, "test_logits_first8.f32"))

    # Read the files back and run them through an independent MPS-order forward pass.
    loaded = {}
    for name, (w, _) in weights.items():
        lw = np.fromfile(os.path.join(args.out, f"{name}_weights.dat"), "<f4").reshape(w.shape)
        lb = np.fromfile(os.path.join(args.out, f"{name}_bias.dat"), "<f4")
        loaded[name] = (lw, lb)
    check = numpy_mps_forward(loaded, test_x[:200, 0].numpy())
    check_error = float(np.abs(check - logits[:200].numpy()).max())
    if check_error > 1e-3 or not (check.argmax(1) == predictions[:200].numpy()).all():
        sys.exit(f"exported weights do not reproduce PyTorch's logits (max error {check_error})")

    total_bytes = sum(n for _, n in sizes.values())
    lines = [
        f"accuracy {accuracy:.2f}",
        f"correct {correct} of {test_y.numel()} Fashion-MNIST test images (t10k, in file order)",
        f"float16-storage simulation: accuracy {100.0 * half_correct / test_y.numel():.2f}, "
        f"agrees with the float32 predictions on {half_agree} of {test_y.numel()} images, "
        f"largest logit difference {half_logit_error8:.4f} over test images 0..7, "
        f"{half_logit_error:.4f} over all",
        "",
        "input: one 28x28 image of 1 feature channel, value = pixel/255 (no mean/std)",
        "conv1: convolution 5x5, 1->16 channels, stride 1, padding 2 (same), + bias, ReLU -> 28x28x16",
        "pool1: max pooling 2x2, stride 2 -> 14x14x16",
        "conv2: convolution 5x5, 16->32 channels, stride 1, padding 2 (same), + bias, ReLU -> 14x14x32",
        "pool2: max pooling 2x2, stride 2 -> 7x7x32",
        "fc1: fully connected 7*7*32 -> 64 (MPS: a 7x7 valid convolution over the whole source), "
        "+ bias, ReLU -> 1x1x64",
        "fc2: fully connected 64 -> 10, + bias -> 1x1x10 (logits)",
        "softmax over the 10 channels -> class probabilities; class = argmax",
        "classes: " + ", ".join(f"{i} {c}" for i, c in enumerate(CLASSES)),
        "",
        "files (raw little-endian float32, MPS order [out][kernelHeight][kernelWidth][in]):",
    ]
    for name, (shape, nbytes) in sizes.items():
        lines.append(f"  {name:20s} {'x'.join(map(str, shape)):12s} {nbytes} bytes")
    lines += [
        f"  total {total_bytes} bytes",
        "  test_predictions.u8  10000 uint8: PyTorch argmax class per test image",
        "  test_logits_first8.f32  8x10 float32: PyTorch logits (before softmax) of test images 0..7",
        "",
        f"training: {args.epochs} epochs, Adam lr {args.lr} cosine-annealed to 0, batch {args.batch}, "
        f"seed {SEED}, {THREADS} threads, deterministic algorithms, torch {torch.__version__}, "
        f"{train_seconds:.0f} s on this machine ({os.cpu_count()} CPUs)",
    ]
    with open(os.path.join(args.out, "accuracy.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"export check: first 200 logits from the .dat files match within {check_error:.1e}")
    print(f"total {time.time() - start:.1f} s")


if __name__ == "__main__":
    main()
