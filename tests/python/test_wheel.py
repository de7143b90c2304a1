#!/usr/bin/env python3
"""ctest python_wheel: the wheel as a user gets it. Builds it with `python3 -m build --wheel
--no-isolation` from this build tree (setup.py's VKCNN_WHEEL_BUILD_DIR, so nothing is compiled
again), installs it with pip (no index) into a fresh `python3 -m venv --system-site-packages`,
and runs the Fashion-MNIST sample's model there on the first test images against the PyTorch
logits stored beside it. The venv's Python must import the package from the venv, with no
PYTHONPATH or LD_LIBRARY_PATH.

    test_wheel.py SOURCE_DIR BUILD_DIR WORK_DIR
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

# Run by the venv's Python, from a directory outside the source tree.
RUN_MODEL = r"""
import gzip, sys
from pathlib import Path
import numpy as np
import vkcnn

venv, weights = Path(sys.argv[1]), Path(sys.argv[2])
assert Path(vkcnn.__file__).resolve().is_relative_to(venv.resolve()), vkcnn.__file__
with gzip.open("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz") as f:
    images = np.frombuffer(f.read(16 + 8 * 28 * 28)[16:], np.uint8).reshape(8, 1, 28, 28)
expected = np.fromfile(weights / "test_logits_first8.f32", np.float32).reshape(8, 10)

s = vkcnn.Session(weights / "fashion_mnist.onnx", precision="fp32", batch=8)
[name] = [a.name for a in s.get_inputs()]
outputs = s.run(None, {name: images.astype(np.float32) / 255})
logits = outputs[0].reshape(8, -1)
if logits.shape[1] == 10 and np.allclose(logits.sum(axis=1), 1, atol=1e-4):
    expected = np.exp(expected) / np.exp(expected).sum(axis=1, keepdims=True)  # softmax output
np.testing.assert_allclose(logits, expected, rtol=0, atol=2e-3)
try:
    s.run(None, {name: images})
    sys.exit("uint8 pixels were accepted")
except vkcnn.Error as e:
    assert "uint8" in str(e), str(e)
print(f"wheel: vkcnn {vkcnn.__version__} from {vkcnn.__file__} on {s.device}: "
      f"{len(images)} images match PyTorch")
"""


def run(command, **kwargs):
    shown = ["-c RUN_MODEL" if c == RUN_MODEL else str(c) for c in command if c != "-c"]
    print("+", " ".join(shown), flush=True)
    subprocess.run([str(c) for c in command], check=True, **kwargs)


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: test_wheel.py SOURCE_DIR BUILD_DIR WORK_DIR")
    source, build, work = (Path(a).resolve() for a in sys.argv[1:])
    if not (Path("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz").exists()):
        print("dataset-fashion-mnist is not installed: skipped")
        return 77
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    env = dict(os.environ, VKCNN_WHEEL_BUILD_DIR=str(build))
    for name in ("PYTHONPATH", "LD_LIBRARY_PATH"):
        env.pop(name, None)
    run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", work / "dist",
         source], env=env, cwd=source)
    wheels = list((work / "dist").glob("vkcnn-*.whl"))
    if len(wheels) != 1:
        sys.exit(f"expected one wheel in {work / 'dist'}, found {wheels}")
    venv = work / "venv"
    # --without-pip: the system's pip installs into the venv (the venv sees it through
    # --system-site-packages), which saves ensurepip's copy.
    run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", venv])
    python = venv / "bin" / "python"
    run([python, "-m", "pip", "install", "--no-index", "--no-cache-dir", "--disable-pip-version-check",
         "--quiet", wheels[0]], env=env)
    run([python, "-c", RUN_MODEL, venv, source / "samples/fashion_mnist/weights"], env=env,
        cwd=work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
