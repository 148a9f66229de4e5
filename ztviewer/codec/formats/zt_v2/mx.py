"""``zt.mx/1`` decoding (OCP Microscaling): ``value(i) = 2^(scales[b] - 127) × element(data[i])`` with
``b = i // block_size`` in logical row-major order, blocks running along the last axis.

Elements decode by their registered type: ``f4_e2m1`` (packed two per byte, low nibble first),
``f8_e4m3fn``, ``f8_e5m2``, or plain ``i8`` for MXINT8, whose OCP element is a two's-complement integer with
an implicit scale of 2^-6. A scale byte of 0xFF is NaN and makes its whole block NaN.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...decode import component_bytes, shaped
from ...decode_rules import decode_limit
from ...dtypes import to_float32, unpack_nibbles
from ...errors import DecodeLimitExceeded, UnsupportedLayout
from ...model import Tensor, TensorFile

LAYOUT = "zt.mx/1"
_ELEMENT_DTYPES = {"f4_e2m1": "float4_e2m1fn", "f8_e4m3fn": "float8_e4m3fn", "f8_e5m2": "float8_e5m2"}


def mx_dense(tf: TensorFile, tensor: Tensor, **kw: Any) -> np.ndarray:
    """The object's values as float32, in its shape."""
    params = tensor.extra_value("mx")
    if params is None:
        raise UnsupportedLayout(f"{LAYOUT} object without valid metadata cannot be decoded", tensor=tensor.name)
    block, axis = params["block_size"], params["axis"]
    if axis != len(tensor.shape) - 1:
        raise UnsupportedLayout(f"{LAYOUT} blocks along axis {axis} (not the last): the profile gives the block "
                                "order only for the last axis; shown structurally", tensor=tensor.name)
    count = tensor.numel
    if count * 4 > decode_limit():
        raise DecodeLimitExceeded(f"{count:,} float32 values exceed the decode limit of {decode_limit():,} bytes "
                                  "(set ZTVIEWER_MAX_DECODED)", tensor=tensor.name, rule="decompression output cap")
    data = tensor.components["data"]
    raw = np.frombuffer(component_bytes(tf, tensor, data, **kw), dtype=np.uint8)
    logical = data.extra.get("type")
    if logical is None:  # MXINT8
        values = raw.view(np.int8).astype(np.float32) / np.float32(64)
    else:
        codes = unpack_nibbles(raw, count) if logical == "f4_e2m1" else raw
        values = to_float32(codes, _ELEMENT_DTYPES[logical])
    scale_bytes = np.frombuffer(component_bytes(tf, tensor, tensor.components["scales"], **kw), dtype=np.uint8)
    scales = to_float32(scale_bytes, "float8_e8m0fnu")
    return shaped((values.reshape(-1, block) * scales[:, None]).reshape(-1), tensor)
