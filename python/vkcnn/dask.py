"""vkcnn.dask: a model mapped over many inputs on a Dask cluster (Debian's python3-distributed).

    from distributed import Client
    import vkcnn.dask
    client = Client("scheduler:8786")              # or Client(LocalCluster(n_workers=2))
    results = vkcnn.dask.map_model(client, "model.onnx", ["a.npy", "b.npy", array, ...])
    results[0]["probabilities"]                    # {output name: numpy.ndarray}, input order

Each worker process loads the model once, into one Session that stays with that worker (it is
kept on the worker object, so it lives as long as the worker process and no longer), pinned to
that worker's GPU: device= as given, else the worker's VKCNN_DEVICE (dask-worker started with it,
one worker per GPU: docs/scale-out.md), else the default device. One input is one task: a task
whose worker dies is run again on another worker by the scheduler, and one that raises is retried
`retries` times, so no input is lost. Results come back in input order.

On one machine of several GPUs, gpu_cluster() starts that cluster: one worker process per GPU,
each pinned to its GPU by VKCNN_DEVICE, one thread each:

    with vkcnn.dask.gpu_cluster() as cluster, Client(cluster) as client:
        results = vkcnn.dask.map_model(client, "model.onnx", inputs)
"""

import os

import numpy as np

__all__ = ["map_model", "gpu_cluster"]

# The attribute on a distributed.Worker holding its Sessions, by (model, options).
_WORKER_SESSIONS = "_vkcnn_sessions"


def _load_input(item, channels):
    """An input as a numpy array: an array as given, a .npy file, or a picture (PIL) as
    float32 [1, C, H, W] in 0..1, grey for a model input of one channel, else RGB."""
    if isinstance(item, np.ndarray):
        return item
    if isinstance(item, (str, os.PathLike)):
        path = os.fspath(item)
        if path.endswith(".npy"):
            return np.load(path)
        try:
            from PIL import Image
        except ImportError:
            raise ValueError(f"inputs: {path} is not a .npy file, and pictures need python3-pil")
        with Image.open(path) as picture:
            pixels = np.asarray(picture.convert("L" if channels == 1 else "RGB"),
                                dtype=np.float32) / 255.0
        if pixels.ndim == 2:
            pixels = pixels[:, :, None]
        return np.ascontiguousarray(pixels.transpose(2, 0, 1)[None])
    raise TypeError(f"inputs: each item must be a numpy array or a file's path, not "
                    f"{type(item).__name__}")


def _session(model, options):
    """This worker process's Session for `model` (made on first use)."""
    import vkcnn
    try:
        from distributed import get_worker
        holder = get_worker()
    except (ImportError, ValueError):
        holder = _session  # outside a worker (tests, a local scheduler): this process
    sessions = getattr(holder, _WORKER_SESSIONS, None)
    if sessions is None:
        sessions = {}
        setattr(holder, _WORKER_SESSIONS, sessions)
    key = (model, tuple(sorted(options.items(), key=lambda kv: kv[0])))
    if key not in sessions:
        options = dict(options)
        if options.get("device") is None and os.environ.get("VKCNN_DEVICE"):
            options["device"] = os.environ["VKCNN_DEVICE"]
        options["shapes"] = {k: list(v) for k, v in options["shapes"]} or None
        sessions[key] = vkcnn.Session(model, **options)
    return sessions[key]


def _run(model, options, input_name, item):
    session = _session(model, options)
    names = [i.name for i in session.get_inputs()]
    if input_name is not None and input_name not in names:
        raise ValueError(f"input_name={input_name!r} is not an input of the model ({names})")
    info = session.get_inputs()[names.index(input_name) if input_name else 0]
    channels = info.shape[1] if len(info.shape) == 4 else 3
    outputs = session.run(None, {info.name: _load_input(item, channels)})
    return {o.name: value for o, value in zip(session.get_outputs(), outputs)}


def map_model(client, model, inputs, *, input_name=None, precision="fp16", shapes=None,
              batch=0, device=None, retries=2, progress=True):
    """Runs `model` on every item of `inputs` on the workers of `client` (a distributed.Client).

    Parameters:
      model: the ONNX file's path, readable by every worker (a shared or copied file).
      inputs: a sequence of numpy arrays, .npy paths or picture paths (python3-pil), or a dask
          array, whose blocks along the first axis are the inputs.
      input_name: the input each item feeds; None: the model's first input.
      precision, shapes, batch, device: as for vkcnn.Session; device None: each worker's
          VKCNN_DEVICE, else the default device.
      retries: how many times a task that raised is run again.
      progress: show distributed's progress bar (on standard output) while it runs.

    Returns a list, in input order, of {output name: numpy.ndarray}.
    """
    if hasattr(inputs, "to_delayed") and hasattr(inputs, "chunks"):  # a dask array
        blocks = inputs.rechunk({i: -1 for i in range(1, inputs.ndim)}).to_delayed()
        inputs = [client.compute(block) for block in blocks.reshape(-1)]
    if isinstance(model, os.PathLike):
        model = os.fspath(model)
    if not isinstance(model, str):
        raise TypeError(f"model= must be an ONNX file's path, not {type(model).__name__}")
    options = {"precision": precision, "batch": batch, "device": device,
               "shapes": tuple(sorted((k, tuple(v)) for k, v in (shapes or {}).items()))}
    # pure=False: equal inputs still run (and come back) once each, in order.
    futures = [client.submit(_run, model, options, input_name, item, pure=False, retries=retries)
               for item in inputs]
    if progress:
        from distributed import progress as show
        show(futures, notebook=False)
    return client.gather(futures)


def gpu_cluster(devices=None, **scheduler_options):
    """A distributed cluster on this machine with one worker process per device, each pinned to
    its device (VKCNN_DEVICE in the worker's environment) and with one thread, so one Session
    serves one GPU.

    Parameters:
      devices: device indices (int) or name substrings (str), one worker each (a device may
          repeat); None: every GPU vkcnn.devices() lists (every device where there is no GPU).
      scheduler_options: passed to the scheduler (e.g. dashboard_address=None).

    Returns a distributed.SpecCluster; use it as a context manager or close() it.
    """
    from distributed import Nanny, Scheduler, SpecCluster
    import vkcnn

    if devices is None:
        listed = vkcnn.devices()
        gpus = [d.index for d in listed if d.type != "CPU"]
        devices = gpus or [d.index for d in listed]
    if isinstance(devices, (str, bytes)) or not hasattr(devices, "__iter__"):
        raise TypeError(f"devices= must be a list of indices or names, not {type(devices).__name__}")
    devices = [str(d) for d in devices]
    if not devices:
        raise ValueError("devices= is empty; give None for every GPU")
    workers = {f"vkcnn-device-{k}-{d}": {"cls": Nanny,
                                          "options": {"nthreads": 1, "env": {"VKCNN_DEVICE": d}}}
               for k, d in enumerate(devices)}
    scheduler = {"cls": Scheduler, "options": {"dashboard_address": None, **scheduler_options}}
    return SpecCluster(workers=workers, scheduler=scheduler)
