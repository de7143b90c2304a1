"""vkcnn: a Vulkan compute inference engine for CNNs.

    import numpy as np, vkcnn
    s = vkcnn.Session("model.onnx", precision="fp16", shapes={"input": [1, 3, 224, 224]})
    outputs = s.run({"input": x})          # {name: numpy.ndarray (float32)}
    [logits] = s.run(None, {"input": x})   # onnxruntime's form: a list, in output order
    s.get_inputs()[0].name, s.get_inputs()[0].shape

This package checks what the caller gave and names the parameter in its messages; the engine
itself is the extension module vkcnn._vkcnn. Every failure is a vkcnn.Error (a RuntimeError) with
.code ('invalid argument', 'invalid model', 'I/O error', ...). Inputs are float32; float64 and
float16 arrays are converted to float32, any other dtype is refused.
"""

import os
import re
from collections.abc import Mapping, Sequence

import numpy as np

from ._vkcnn import Device, Error, __version__, devices
from ._vkcnn import _Session, _SessionPool

__all__ = ["Device", "Error", "NodeArg", "Session", "SessionPool", "devices", "__version__"]

# The dtypes run() converts to float32 (documented in docs/python.md); any other is refused, so
# that integer pixels (0..255) are not silently taken as floats.
CONVERTED_DTYPES = (np.dtype(np.float64), np.dtype(np.float16))

# The library names its C++ options; a Python caller set them as these parameters.
_RENAMES = [
    (re.compile(r"\(VKCNN_DEVICE or ContextOptions::device\)"), "(device=, or VKCNN_DEVICE)"),
    (re.compile(r"VKCNN_VALIDATION or ContextOptions::validation"), "validation=, or VKCNN_VALIDATION"),
    (re.compile(r"ContextOptions::fenceTimeoutMs or "), ""),
    (re.compile(r"ContextOptions::memoryBudget"), "VKCNN_MEMORY_BUDGET"),
    (re.compile(r"SessionOptions::inputShapes"), "shapes="),
    (re.compile(r"SessionOptions::externalDataDirectory"), "external_data_dir="),
    (re.compile(r"ContextOptions::(\w+)"), lambda m: _snake(m.group(1)) + "="),
    (re.compile(r"SessionOptions::(\w+)"), lambda m: _snake(m.group(1)) + "="),
    (re.compile(r"SessionPoolOptions::(\w+)"), lambda m: _snake(m.group(1)) + "="),
    (re.compile(r"\ba batch of (\d+) was asked for"), r"batch=\1 was asked for"),
]


def _snake(name):
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name)


def _error(message, code="invalid argument"):
    e = Error(message)
    e.code = code
    return e


def _renamed(e):
    """The library's Error with its message in the Python caller's terms."""
    message = str(e)
    for pattern, replacement in _RENAMES:
        message = pattern.sub(replacement, message)
    e.args = (message,)
    return e


def _describe(value):
    return f"{type(value).__name__} {value!r}" if not isinstance(value, (bytes, bytearray)) \
        else f"{type(value).__name__} of {len(value)} bytes"


def _model(model):
    if isinstance(model, (bytes, bytearray, memoryview)):
        data = bytes(model)
        if not data:
            raise _error("model= is empty bytes; give an ONNX file's path or its bytes",
                         "invalid model")
        return data
    if isinstance(model, (str, os.PathLike)):
        path = os.fsdecode(os.fspath(model))
        if not path:
            raise _error("model= is an empty path")
        if "\0" in path:
            raise _error(f"model= path {path!r} holds a NUL character")
        return path
    raise _error("model= must be an ONNX file's path (str or os.PathLike such as pathlib.Path) "
                 f"or the model's bytes, not {_describe(model)}")


def _precision(precision):
    names = {"fp16": "fp16", "float16": "fp16", "fp32": "fp32", "float32": "fp32"}
    if not isinstance(precision, str) or precision not in names:
        raise _error(f"precision= must be 'fp16' or 'fp32', not {_describe(precision)}")
    return names[precision]


def _accumulate(accumulate):
    if not isinstance(accumulate, str) or accumulate not in ("fp16", "fp32"):
        raise _error(f"accumulate= must be 'fp32' or 'fp16', not {_describe(accumulate)}")
    return accumulate


def _is_int(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _shapes(shapes):
    if shapes is None:
        return {}
    if not isinstance(shapes, Mapping):
        raise _error("shapes= must be a dict {input name: [dimensions]}, not "
                     f"{_describe(shapes)}")
    result = {}
    for name, dims in shapes.items():
        if not isinstance(name, str):
            raise _error(f"shapes= keys must be input names (str), not {_describe(name)}")
        if isinstance(dims, (str, bytes)) or not isinstance(dims, (Sequence, np.ndarray)):
            raise _error(f"shapes['{name}'] must be a list of dimensions, not {_describe(dims)}")
        for d in dims:
            if not _is_int(d) or d < 1:
                raise _error(f"shapes['{name}'] = {list(dims)!r}: every dimension must be an "
                             f"integer >= 1, not {_describe(d)}")
        result[name] = [int(d) for d in dims]
    return result


def _batch(batch):
    if not _is_int(batch) or batch < 0 or batch > 0xFFFFFFFF:
        raise _error(f"batch= must be an integer >= 1 (images per run), or 0 for the model's "
                     f"batch; got {_describe(batch)}")
    return int(batch)


def _device(device):
    if device is None:
        return ""
    if _is_int(device):
        if device < 0:
            raise _error(f"device= index {device} is negative; vkcnn.devices() lists the indices")
        return str(int(device))
    if isinstance(device, Device):
        return str(device.index)
    if isinstance(device, str) and device:
        return device
    raise _error("device= must be an index (int), a name substring (str) or a vkcnn.Device, "
                 f"not {_describe(device)}")


def _flag(name, value, optional=True):
    if value is None and optional:
        return None
    if not isinstance(value, (bool, np.bool_)):
        allowed = "True, False or None" if optional else "True or False"
        raise _error(f"{name}= must be {allowed}, not {_describe(value)}")
    return bool(value)


def _float32(array, what):
    """`array` as a C-contiguous float32 numpy array (float64 and float16 converted)."""
    if not isinstance(array, np.ndarray):
        try:
            array = np.asarray(array)
        except (ValueError, TypeError) as e:
            raise _error(f"{what} is not an array: {e}") from None
    if array.dtype != np.float32:
        if array.dtype not in CONVERTED_DTYPES:
            raise _error(f"{what} has dtype {array.dtype}; vkcnn takes float32 (float64 and "
                         f"float16 are converted); convert it, e.g. x.astype(numpy.float32), "
                         f"scaling integer pixels as the model expects")
        array = array.astype(np.float32)
    return np.ascontiguousarray(array)


class NodeArg:
    """An input or output of a Session, as onnxruntime's NodeArg: name, shape (a list of ints,
    the whole batch), type ('tensor(float)') and dtype (numpy.float32)."""

    __slots__ = ("name", "shape")
    type = "tensor(float)"
    dtype = np.dtype(np.float32)

    def __init__(self, name, shape):
        self.name = name
        self.shape = list(shape)

    def __repr__(self):
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"

    def __eq__(self, other):
        return isinstance(other, NodeArg) and (self.name, self.shape) == (other.name, other.shape)

    __hash__ = None


class _Model:
    """What a Session and a SessionPool share: their inputs and outputs, and run()."""

    @property
    def inputs(self):
        """{name: shape tuple} of every input, in the model's order (a Session's whole batch, a
        SessionPool's piece)."""
        return {a.name: tuple(a.shape) for a in self._inputs}

    @property
    def outputs(self):
        """{name: shape tuple} of every output, in the model's order (a Session's whole batch, a
        SessionPool's piece)."""
        return {a.name: tuple(a.shape) for a in self._outputs}

    def get_inputs(self):
        """The inputs as a list of NodeArg (name, shape, type, dtype), in the model's order."""
        return list(self._inputs)

    def get_outputs(self):
        """The outputs as a list of NodeArg (name, shape, type, dtype), in the model's order."""
        return list(self._outputs)

    @property
    def batch(self):
        """Images per run (a SessionPool: per piece; its run() takes any multiple)."""
        return self._session.batch

    @property
    def precision(self):
        """'fp16' or 'fp32'."""
        return self._session.precision

    def run(self, output_names_or_inputs, input_feed=None, run_options=None):
        """Runs the model once, in one of two forms.

        run(inputs) -> {output name: numpy.ndarray}
            inputs: {input name: array} with every input, or one array for a model with one
            input. Returns every output, in the model's order.

        run(output_names, input_feed) -> [numpy.ndarray, ...]   (onnxruntime's form)
            output_names: a list of output names, or None for every output in the model's order.
            input_feed: {input name: array} with every input.
            run_options: None (onnxruntime's RunOptions are not supported).
            Returns the outputs named, in that order.

        Arrays are shaped as get_inputs() says (the whole batch) and are float32; float64 and
        float16 are converted, any other dtype is a vkcnn.Error. Outputs are float32.
        """
        if run_options is not None:
            raise _error(f"run_options= is not supported (give None), got {_describe(run_options)}")
        if input_feed is None:
            if output_names_or_inputs is None or _is_name_list(output_names_or_inputs):
                raise _error("run(output_names, input_feed): input_feed= is missing (a dict "
                             "{input name: array})")
            return self._run_all(output_names_or_inputs, "inputs")
        names = self._output_names(output_names_or_inputs)
        results = self._run_all(input_feed, "input_feed")
        return [results[n] for n in names]

    def _output_names(self, names):
        known = [a.name for a in self._outputs]
        if names is None:
            return known
        if not _is_name_list(names):
            raise _error("output_names= must be a list of output names or None, not "
                         f"{_describe(names)}")
        for n in names:
            if n not in known:
                raise _error(f"output_names= names '{n}', which is not an output of the model; "
                             f"its outputs are: {', '.join(known)}")
        return list(names)

    def _run_all(self, feed, parameter):
        if isinstance(feed, Mapping):
            arrays = {}
            for name, value in feed.items():
                if not isinstance(name, str):
                    raise _error(f"{parameter}= keys must be input names (str), not "
                                 f"{_describe(name)}")
                arrays[name] = _float32(value, f"{parameter}['{name}']")
        else:
            if len(self._inputs) != 1:
                raise _error(f"{parameter}=: the model has {len(self._inputs)} inputs ("
                             f"{', '.join(a.name for a in self._inputs)}); give a dict "
                             "{name: array}")
            name = self._inputs[0].name
            arrays = {name: _float32(feed, f"{parameter} (input '{name}')")}
        try:
            return self._session.run(arrays)
        except Error as e:
            raise _renamed(e) from None


class Session(_Model):
    """A model loaded, compiled and ready to run on a Vulkan device (onnxruntime's
    InferenceSession).

    Parameters:
      model: the ONNX file's path (str or any os.PathLike, e.g. pathlib.Path) or the model's
          bytes (bytes, bytearray or memoryview), as onnxruntime takes them.
      precision: 'fp16' (default) or 'fp32': how intermediate and output images are stored;
          kernels compute in float32 either way.
      shapes: {input name: [dimensions]}, every dimension listed: sizes for dynamic dimensions.
      batch: images per run (an integer >= 1), or 0 (default) for the model's batch (1 where it
          is dynamic).
      device: which Vulkan device: an index into vkcnn.devices() (int), a substring of its name
          (str) or a vkcnn.Device; None: VKCNN_DEVICE, else the first discrete GPU (then
          integrated GPU, then CPU).
      validation: True turns on the Vulkan validation layer; None: VKCNN_VALIDATION, else off.
      optimize: False keeps the graph's fusions and folding off (to debug the optimizer).
      winograd: False keeps 3x3 convolutions off Winograd (less weight memory); None:
          VKCNN_NO_WINOGRAD, else on.
      external_data_dir: where weights stored as ONNX external data are; None: the model
          file's directory (from bytes, external data then needs this).
      accumulate: 'fp32' (default) or 'fp16': what the convolutions on the matrix units sum
          in; 'fp16' is faster and less accurate (ConvolutionDescriptor::accumulatorPrecision).
          Paths without a float16 accumulator, and precision='fp32', ignore it.

    Every failure is a vkcnn.Error naming the parameter or input that was wrong.
    """

    def __init__(self, model, precision="fp16", shapes=None, batch=0, device=None,
                 validation=None, optimize=True, winograd=None, external_data_dir=None,
                 accumulate="fp32"):
        if external_data_dir is not None and not isinstance(external_data_dir,
                                                            (str, os.PathLike)):
            raise _error("external_data_dir= must be a directory's path (str or os.PathLike), "
                         f"not {_describe(external_data_dir)}")
        arguments = (_model(model), _precision(precision), _shapes(shapes), _batch(batch),
                     _device(device), _flag("validation", validation),
                     _flag("optimize", optimize, optional=False), _flag("winograd", winograd),
                     os.fsdecode(os.fspath(external_data_dir)) if external_data_dir else "",
                     _accumulate(accumulate))
        try:
            self._session = _Session(*arguments)
        except Error as e:
            raise _renamed(e) from None
        self._inputs = [NodeArg(name, shape) for name, shape in self._session.inputs]
        self._outputs = [NodeArg(name, shape) for name, shape in self._session.outputs]

    @property
    def device(self):
        """The name of the Vulkan device the session runs on."""
        return self._session.device

    @property
    def load_statistics(self):
        """Where the load's time went: milliseconds per phase (parse_ms, check_ms, import_ms,
        optimize_ms, pack_ms, upload_ms, load_ms, ...; first_run_ms once run() was called)."""
        return self._session.load_statistics

    def __repr__(self):
        ins = ", ".join(f"{a.name}{a.shape}" for a in self._inputs)
        outs = ", ".join(f"{a.name}{a.shape}" for a in self._outputs)
        return f"vkcnn.Session({ins} -> {outs}, {self.precision}, {self.device!r})"


class SessionPool(_Model):
    """One model on several Vulkan devices of this machine, for throughput (vkcnn::SessionPool).

    Every device's session is compiled for the same batch, the piece (piece_batch images). run()
    takes a batch that is a multiple of the piece, cuts it into pieces and the devices take them
    as they become free, so a faster device runs more pieces; the outputs come back in order,
    bit-identical to one Session of the piece's batch. A device that is lost leaves the pool and
    its piece runs on another; run() fails only when no device is left.

    Parameters:
      model: the ONNX file's path (str or any os.PathLike).
      devices: the devices, each an index into vkcnn.devices() (int), a substring of its name
          (str) or a vkcnn.Device; one may be listed twice. None: every GPU (every device where
          there is no GPU).
      piece_batch: images per piece (an integer >= 1), or 0 (default) for the model's batch (1
          where it is dynamic).
      queue_depth: pieces queued per device beyond those running (an integer >= 1; default 2).
      precision, shapes, validation, optimize, winograd, accumulate: as for vkcnn.Session.

    get_inputs() and get_outputs() give one piece's shapes. Every failure is a vkcnn.Error naming
    the parameter or input that was wrong.
    """

    def __init__(self, model, devices=None, piece_batch=0, queue_depth=2, precision="fp16",
                 shapes=None, validation=None, optimize=True, winograd=None, accumulate="fp32"):
        path = _model(model)
        if not isinstance(path, str):
            raise _error("model= must be an ONNX file's path for a SessionPool (each device "
                         "loads it), not bytes")
        if devices is None:
            chosen = []
        elif isinstance(devices, (str, bytes)) or not isinstance(devices, Sequence):
            raise _error("devices= must be a list of devices (indices, name substrings or "
                         f"vkcnn.Device) or None, not {_describe(devices)}")
        else:
            chosen = [_device(d) for d in devices]
            if not chosen:
                raise _error("devices= is an empty list; give None for every GPU")
        if not _is_int(piece_batch) or piece_batch < 0 or piece_batch > 0xFFFFFFFF:
            raise _error("piece_batch= must be an integer >= 1 (images per piece), or 0 for the "
                         f"model's batch; got {_describe(piece_batch)}")
        if not _is_int(queue_depth) or queue_depth < 1 or queue_depth > 0xFFFFFFFF:
            raise _error(f"queue_depth= must be an integer >= 1, not {_describe(queue_depth)}")
        arguments = (path, _precision(precision), _shapes(shapes), int(piece_batch), chosen,
                     _flag("validation", validation), _flag("optimize", optimize, optional=False),
                     _flag("winograd", winograd), _accumulate(accumulate), int(queue_depth))
        try:
            self._session = _SessionPool(*arguments)
        except Error as e:
            raise _renamed(e) from None
        self._inputs = [NodeArg(name, shape) for name, shape in self._session.inputs]
        self._outputs = [NodeArg(name, shape) for name, shape in self._session.outputs]

    @property
    def devices(self):
        """Every device of the pool, lost ones included: a list of dicts (name, requested, lost,
        lost_reason, pieces, busy_ms, images_per_second)."""
        return self._session.devices

    @property
    def live_devices(self):
        """How many devices are not lost."""
        return self._session.live_devices

    def __repr__(self):
        names = ", ".join(d["name"] for d in self.devices)
        return f"vkcnn.SessionPool(piece of {self.batch}, {self.precision}, [{names}])"


def _is_name_list(value):
    return isinstance(value, (list, tuple)) and all(isinstance(n, str) for n in value)
