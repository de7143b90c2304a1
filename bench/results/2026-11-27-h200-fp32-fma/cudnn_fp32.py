# cuDNN's time for each shape of a vkcnn-bench-conv shapes file: F.conv2d in float32 (TF32 off),
# channels_last, cudnn.benchmark, median of CUDA-event timings. Prints one JSON line per shape.
import json, sys, statistics, torch
import torch.nn.functional as F
torch.backends.cudnn.benchmark = True
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
for line in open(sys.argv[1]):
    if not line.strip() or line.startswith("#"): continue
    name, n, c, h, w, k, kh, kw, sh, sw, ph, pw, dh, dw, g = line.split()
    n, c, h, w, k, kh, kw, sh, sw, ph, pw, dh, dw, g = map(int, (n, c, h, w, k, kh, kw, sh, sw, ph, pw, dh, dw, g))
    x = torch.randn(n, c, h, w, device="cuda").to(memory_format=torch.channels_last)
    wt = torch.randn(k, c // g, kh, kw, device="cuda").to(memory_format=torch.channels_last)
    b = torch.randn(k, device="cuda")
    f = lambda: F.relu(F.conv2d(x, wt, b, (sh, sw), (ph, pw), (dh, dw), g))
    for _ in range(5): f()
    torch.cuda.synchronize(); ts = []
    for _ in range(20):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); f(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
    ho = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1; wo = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    flops = 2 * n * k * ho * wo * (c // g) * kh * kw
    ms = statistics.median(ts)
    print(json.dumps({"name": name, "ms": ms, "tflops": flops / ms / 1e9}), flush=True)
