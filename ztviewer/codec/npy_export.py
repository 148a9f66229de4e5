"""One tensor written as a ``.npy`` file. A dense tensor is streamed: its data is decoded a chunk at a time
(:func:`.decode.iter_decoded`, which gives back the file's pages as it goes) and each chunk converted to what
the user sees, so memory stays bounded whatever the tensor's size. Other layouts are densified first."""
from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from .decode import iter_decoded, present, storage_dtype
from .decode_rules import CHUNK, refuse_unsupported
from .dense import to_dense
from .dtypes import PACKED_NIBBLES
from .errors import DecodeError
from .model import Tensor, TensorFile


class Writable(Protocol):
    def write(self, data: bytes | memoryview, /) -> Any: ...


def _header(out: Writable, dtype: np.dtype, shape: tuple[int, ...]) -> None:
    header = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": shape}
    try:
        np.lib.format.write_array_header_1_0(out, header)
    except ValueError:  # a header past 64 KiB (a very long shape) needs format 2.0, as np.save chooses
        np.lib.format.write_array_header_2_0(out, header)


def _streamable(tensor: Tensor) -> bool:
    return tensor.layout == "dense" and "data" in tensor.components and tensor.dtype not in PACKED_NIBBLES


def write_npy(tf: TensorFile, tensor: Tensor, out: Writable, *, raw_bits: bool = False) -> np.dtype:
    """Write ``tensor`` to ``out`` in the ``.npy`` format, as ``np.save`` of :func:`.dense.to_dense` would;
    the array's dtype."""
    if not _streamable(tensor):
        array = to_dense(tf, tensor, raw_bits=raw_bits)
        np.lib.format.write_array(out, array, allow_pickle=False)  # not ascontiguousarray: it makes a scalar 1-D
        return array.dtype
    component = tensor.components["data"]
    refuse_unsupported(tensor, component)
    stored = storage_dtype(tensor, component, tensor.dtype)
    shown = present(np.empty(0, stored), tensor.dtype, raw_bits).dtype
    _header(out, shown, tuple(int(d) for d in tensor.shape))
    count = 0
    for chunk in iter_decoded(tf, tensor, component, align=stored.itemsize, chunk=CHUNK):
        values = present(np.frombuffer(chunk, stored), tensor.dtype, raw_bits)
        count += values.size
        if count > tensor.numel:
            break
        out.write(np.ascontiguousarray(values).data)
    if count != tensor.numel:
        raise DecodeError(f"{count} elements stored, shape {list(tensor.shape)} needs {tensor.numel}",
                          rule="length = product(shape) × dtype size", tensor=tensor.name,
                          component=component.role, offset=component.offset)
    return shown
