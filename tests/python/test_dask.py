"""vkcnn.dask on a LocalCluster of 2 worker processes (lavapipe under ctest): results in input
order, equal to one in-process Session's; a worker killed mid-run loses no input.

usage: test_dask.py MODEL.onnx (the Fashion-MNIST sample's model: input [batch, 1, 28, 28])
"""

import logging
import os
import signal
import sys
import tempfile
import time

import numpy as np

import vkcnn
import vkcnn.dask
from distributed import Client, LocalCluster, wait


def main():
    model = sys.argv[1]
    # The scheduler logs the killed worker's lost keys as errors: expected here.
    logging.getLogger("distributed").setLevel(logging.CRITICAL)
    rng = np.random.default_rng(43)
    arrays = [rng.random((1, 1, 28, 28), dtype=np.float32) for _ in range(10)]
    folder = tempfile.mkdtemp(prefix="vkcnn-test-dask-")
    paths = []
    for i, a in enumerate(arrays[:4]):
        paths.append(os.path.join(folder, f"x{i}.npy"))
        np.save(paths[-1], a)
    # A picture (PNG, grey for the model's one channel): pixels k/255, as the model gets them.
    from PIL import Image
    pixels = (arrays[4][0, 0] * 255).round().astype(np.uint8)
    arrays[4] = pixels.astype(np.float32)[None, None] / 255.0
    paths.append(os.path.join(folder, "x4.png"))
    Image.fromarray(pixels, mode="L").save(paths[-1])
    inputs = paths + arrays[5:]  # files (.npy and a picture) and arrays mixed

    local = vkcnn.Session(model)
    expected = [local.run({"input": a}) for a in arrays]

    def check(results, what):
        assert len(results) == len(expected), f"{what}: {len(results)} results for {len(expected)}"
        for i, (got, want) in enumerate(zip(results, expected)):
            assert set(got) == set(want), f"{what}: input {i}: outputs {sorted(got)}"
            for name in want:
                np.testing.assert_allclose(got[name], want[name], rtol=1e-3, atol=1e-4,
                                           err_msg=f"{what}: input {i}, output {name}")

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        check(vkcnn.dask.map_model(client, model, inputs), "2 workers")
        # One Session per worker process, kept between calls.
        sessions = client.run(lambda dask_worker: len(getattr(dask_worker, "_vkcnn_sessions", {})))
        assert sorted(sessions.values()) == [1, 1], sessions

        # A dask array: its blocks along the first axis are the inputs.
        import dask.array as da
        stacked = da.from_array(np.concatenate(arrays), chunks=(1, 1, 28, 28))
        check(vkcnn.dask.map_model(client, model, stacked, progress=False), "dask array")

        # A worker killed while tasks run: the nanny starts it again and the scheduler reruns
        # the lost tasks elsewhere, so every input still has its result.
        pids = client.run(os.getpid)
        futures = [client.submit(vkcnn.dask._run, model,
                                 {"precision": "fp16", "batch": 0, "device": None, "shapes": ()},
                                 None, a, pure=False, retries=2) for a in arrays * 3]
        victim = sorted(pids.values())[0]
        deadline = time.monotonic() + 120
        while not any(f.done() for f in futures) and time.monotonic() < deadline:
            time.sleep(0.01)
        pending = sum(not f.done() for f in futures)
        assert pending > 0, "every task finished before the kill: the test would prove nothing"
        os.kill(victim, signal.SIGKILL)
        wait(futures, timeout=300)
        results = client.gather(futures)
        check(results[:10], "killed worker, first pass")
        check(results[10:20], "killed worker, second pass")
        check(results[20:], "killed worker, third pass")
        print(f"killed worker {victim} with {pending} of {len(futures)} tasks unfinished")

    # gpu_cluster: one worker per device, each pinned by VKCNN_DEVICE (here the first device
    # twice, as a machine of 2 GPUs would have 0 and 1).
    with vkcnn.dask.gpu_cluster(devices=[0, 0]) as cluster, Client(cluster) as client:
        pinned = client.run(lambda: os.environ.get("VKCNN_DEVICE"))
        assert sorted(pinned.values()) == ["0", "0"], pinned
        threads = client.nthreads()
        assert sorted(threads.values()) == [1, 1], threads
        check(vkcnn.dask.map_model(client, model, arrays, progress=False), "gpu_cluster")
    print("vkcnn.dask: 2 workers, a dask array, a killed worker and gpu_cluster: all results in "
          "order")


if __name__ == "__main__":
    main()
