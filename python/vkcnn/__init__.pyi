# Stubs of the package vkcnn (python/vkcnn/__init__.py, where the docstrings are).
import os
from typing import Mapping, Optional, Sequence, Union, overload

import numpy as np
import numpy.typing as npt

from ._vkcnn import Device as Device, Error as Error, __version__ as __version__, devices as devices

ArrayLike = npt.ArrayLike
Model = Union[str, os.PathLike[str], os.PathLike[bytes], bytes, bytearray, memoryview]

CONVERTED_DTYPES: tuple[np.dtype, ...]

class NodeArg:
    name: str
    shape: list[int]
    type: str
    dtype: np.dtype
    def __init__(self, name: str, shape: Sequence[int]) -> None: ...

class Session:
    def __init__(self, model: Model, precision: str = "fp16",
                 shapes: Optional[Mapping[str, Sequence[int]]] = None, batch: int = 0,
                 device: Union[int, str, Device, None] = None, validation: Optional[bool] = None,
                 optimize: bool = True, winograd: Optional[bool] = None,
                 external_data_dir: Union[str, os.PathLike[str], None] = None,
                 accumulate: str = "fp32") -> None: ...
    @property
    def inputs(self) -> dict[str, tuple[int, ...]]: ...
    @property
    def outputs(self) -> dict[str, tuple[int, ...]]: ...
    def get_inputs(self) -> list[NodeArg]: ...
    def get_outputs(self) -> list[NodeArg]: ...
    @property
    def batch(self) -> int: ...
    @property
    def precision(self) -> str: ...
    @property
    def device(self) -> str: ...
    @property
    def load_statistics(self) -> dict[str, Union[float, int, bool]]: ...
    @overload
    def run(self, output_names_or_inputs: Union[Mapping[str, ArrayLike], ArrayLike]
            ) -> dict[str, npt.NDArray[np.float32]]: ...
    @overload
    def run(self, output_names_or_inputs: Optional[Sequence[str]],
            input_feed: Mapping[str, ArrayLike], run_options: None = None
            ) -> list[npt.NDArray[np.float32]]: ...

class SessionPool:
    def __init__(self, model: Union[str, os.PathLike[str], os.PathLike[bytes]],
                 devices: Optional[Sequence[Union[int, str, Device]]] = None,
                 piece_batch: int = 0, queue_depth: int = 2, precision: str = "fp16",
                 shapes: Optional[Mapping[str, Sequence[int]]] = None,
                 validation: Optional[bool] = None, optimize: bool = True,
                 winograd: Optional[bool] = None, accumulate: str = "fp32") -> None: ...
    @property
    def inputs(self) -> dict[str, tuple[int, ...]]: ...
    @property
    def outputs(self) -> dict[str, tuple[int, ...]]: ...
    def get_inputs(self) -> list[NodeArg]: ...
    def get_outputs(self) -> list[NodeArg]: ...
    @property
    def batch(self) -> int: ...
    @property
    def precision(self) -> str: ...
    @property
    def devices(self) -> list[dict[str, Union[str, bool, int, float]]]: ...
    @property
    def live_devices(self) -> int: ...
    @overload
    def run(self, output_names_or_inputs: Union[Mapping[str, ArrayLike], ArrayLike]
            ) -> dict[str, npt.NDArray[np.float32]]: ...
    @overload
    def run(self, output_names_or_inputs: Optional[Sequence[str]],
            input_feed: Mapping[str, ArrayLike], run_options: None = None
            ) -> list[npt.NDArray[np.float32]]: ...
