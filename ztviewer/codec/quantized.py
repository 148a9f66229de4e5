"""ztensor 1.2.x ``quantized_group`` tensors (zTensor v1.x "objects" layout): integer codes packed into words
(``packed_weight``), one scale and one zero point per group of ``group_size`` codes along the last axis.

ztensor 1.2 writes the attributes ``bits``, ``group_size`` and ``packing`` (``"8_per_i32"``) and no rule for
reading them back; ztviewer reads them as zTensor v2's ``zt.quant_group/1`` does, the documented form of the
same scheme: codes lowest-index-first in each little-endian word (``lsb_first``), groups along the last axis,
``value = (code − zero) × scale``. :data:`RULE_TEXT` says so wherever the values are shown.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import DecodeError, UnsupportedLayout
from .model import Tensor, TensorFile

LAYOUT = "quantized_group"
RULE_TEXT = "dequantized as (code − zero) × scale, codes lowest-first in each word, groups along the last axis"
_PACKING = re.compile(r"^(\d+)_per_([iu])(8|16|32|64)$")


@dataclass(frozen=True, slots=True)
class QuantizedGroup:
    bits: int
    group_size: int
    per_word: int
    codes: int      # elements of the tensor
    groups: int     # codes / group_size


def quantized_group(tensor: Tensor) -> QuantizedGroup:
    """The tensor's quantization parameters, checked against its shape (DecodeError naming the rule if not)."""
    if tensor.layout != LAYOUT:
        raise UnsupportedLayout(f"layout {tensor.layout!r} is not {LAYOUT}", tensor=tensor.name)
    attributes = tensor.attributes or {}
    bits, group_size, packing = attributes.get("bits"), attributes.get("group_size"), attributes.get("packing")
    match = _PACKING.match(packing) if isinstance(packing, str) else None
    if not isinstance(bits, int) or isinstance(bits, bool) or not isinstance(group_size, int) \
            or isinstance(group_size, bool) or match is None:
        raise DecodeError(f"bits {bits!r}, group_size {group_size!r}, packing {packing!r}: expected integers and "
                          "a packing like '8_per_i32'", rule="quantized_group attributes", tensor=tensor.name)
    per_word, word_bits = int(match.group(1)), int(match.group(3))
    if not 1 <= bits <= 8 or per_word * bits != word_bits:
        raise DecodeError(f"{per_word} codes of {bits} bits do not fill a {word_bits}-bit word",
                          rule="per_word × bits = word bits", tensor=tensor.name)
    shape = tuple(tensor.shape or ())
    last = shape[-1] if shape else 1
    if group_size <= 0 or last % group_size:
        raise DecodeError(f"group_size {group_size} does not divide the last axis ({last})",
                          rule="group_size divides the last axis", tensor=tensor.name)
    codes = math.prod(shape)
    for role in ("packed_weight", "scales"):
        if role not in tensor.components:
            raise DecodeError(f"the component {role!r} is missing", rule="quantized_group components",
                              tensor=tensor.name)
    return QuantizedGroup(bits, group_size, per_word, codes, codes // group_size)


def unpack_codes(words: np.ndarray, bits: int, count: int) -> np.ndarray:
    """``count`` codes of ``bits`` bits, lowest first in each word (words in native order) → uint8."""
    unsigned = words.view(words.dtype.newbyteorder("=").str.replace("i", "u"))
    per_word = unsigned.dtype.itemsize * 8 // bits
    shifts = np.arange(per_word, dtype=unsigned.dtype) * bits
    codes: np.ndarray = (unsigned[:, None] >> shifts) & ((1 << bits) - 1)
    return codes.reshape(-1)[:count].astype(np.uint8)


def quantized_codes(tf: TensorFile, tensor: Tensor, **kw: Any) -> np.ndarray:
    """The codes (0 … 2^bits − 1) shaped like the tensor."""
    import ztviewer.codec.decode as decode  # here: the readers take LAYOUT and RULE_TEXT and decode nothing

    q = quantized_group(tensor)
    words = _native(decode.component_array(tf, tensor, "packed_weight", **kw))
    if words.size * q.per_word < q.codes or words.dtype.kind not in "iu":
        raise DecodeError(f"{words.size} {words.dtype} words hold {words.size * q.per_word} codes, the shape needs "
                          f"{q.codes}", rule="packed_weight holds every code", tensor=tensor.name,
                          component="packed_weight")
    return unpack_codes(words, q.bits, q.codes).reshape(tuple(tensor.shape or ()))


def dequantize(tf: TensorFile, tensor: Tensor, **kw: Any) -> np.ndarray:
    """float32 values ``(code − zero) × scale`` shaped like the tensor (zero 0 without a ``zeros`` component)."""
    q = quantized_group(tensor)
    codes = quantized_codes(tf, tensor, **kw).reshape(q.groups, q.group_size).astype(np.float32)
    scales = _per_group(tf, tensor, "scales", q, **kw)
    zeros = _per_group(tf, tensor, "zeros", q, **kw) if "zeros" in tensor.components else np.float32(0)
    values: np.ndarray = (codes - np.reshape(zeros, (-1, 1))) * scales.reshape(-1, 1)
    return values.astype(np.float32, copy=False).reshape(tuple(tensor.shape or ()))


def _per_group(tf: TensorFile, tensor: Tensor, role: str, q: QuantizedGroup, **kw: Any) -> np.ndarray:
    import ztviewer.codec.decode as decode

    component = tensor.components[role]
    bits = decode.component_array(tf, tensor, role, **kw)
    if bits.size == q.groups:                                   # one plain value per group
        return np.asarray(decode.present(bits, component.dtype or str(bits.dtype)), dtype=np.float32)
    if bits.dtype.kind in "iu" and bits.size * q.per_word >= q.groups and role == "zeros":   # packed like codes
        return unpack_codes(_native(bits), q.bits, q.groups).astype(np.float32)
    raise DecodeError(f"{bits.size} {role} for {q.groups} groups", rule=f"one {role[:-1]} per group",
                      tensor=tensor.name, component=role)


def _native(array: np.ndarray) -> np.ndarray:
    return array.byteswap().view(array.dtype.newbyteorder("=")) if array.dtype.byteorder == ">" else array
