"""Canonical dtypes (numpy-style long names) and every format's spelling of them.

``storage`` is the numpy dtype of the stored little-endian bits: bfloat16 and float8 are stored as their raw
bits (uint16 / uint8) and decoded to float32 by :func:`to_float32`, so numpy alone is enough.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np


@dataclass(frozen=True, slots=True)
class DTypeInfo:
    name: str
    itemsize: int
    storage: str
    kind: str  # "float", "int", "uint", "bool", "complex"

    @property
    def storage_dtype(self) -> np.dtype:
        return np.dtype(self.storage)

    @property
    def needs_conversion(self) -> bool:
        """True when the stored bits are not a native numpy type of the same meaning."""
        return self.name in _CONVERTED


_TABLE = [
    DTypeInfo("float64", 8, "<f8", "float"),
    DTypeInfo("float32", 4, "<f4", "float"),
    DTypeInfo("float16", 2, "<f2", "float"),
    DTypeInfo("bfloat16", 2, "<u2", "float"),
    DTypeInfo("float8_e4m3fn", 1, "u1", "float"),
    DTypeInfo("float8_e5m2", 1, "u1", "float"),
    DTypeInfo("float8_e4m3fnuz", 1, "u1", "float"),
    DTypeInfo("float8_e5m2fnuz", 1, "u1", "float"),
    DTypeInfo("float8_e8m0fnu", 1, "u1", "float"),
    # packed two per byte, low nibble first (zTensor v2 f4_e2m1): one stored byte holds two elements
    DTypeInfo("float4_e2m1fn", 1, "u1", "float"),
    DTypeInfo("int64", 8, "<i8", "int"),
    DTypeInfo("int32", 4, "<i4", "int"),
    DTypeInfo("int16", 2, "<i2", "int"),
    DTypeInfo("int8", 1, "i1", "int"),
    DTypeInfo("uint64", 8, "<u8", "uint"),
    DTypeInfo("uint32", 4, "<u4", "uint"),
    DTypeInfo("uint16", 2, "<u2", "uint"),
    DTypeInfo("uint8", 1, "u1", "uint"),
    DTypeInfo("bool", 1, "u1", "bool"),
    DTypeInfo("complex64", 8, "<c8", "complex"),
    DTypeInfo("complex128", 16, "<c16", "complex"),
]
DTYPES: dict[str, DTypeInfo] = {d.name: d for d in _TABLE}
_FLOAT8 = ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn")
_CONVERTED = frozenset(("bfloat16",) + _FLOAT8)
#: dtypes whose elements are packed two per stored byte
PACKED_NIBBLES = frozenset({"float4_e2m1fn"})

#: zTensor v0.1 / v1.0 spelling (long names). v1.0's list has no float8/complex; v0.1 the same.
ZT_LONG_NAMES = (
    "float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8",
    "uint64", "uint32", "uint16", "uint8", "bool",
)

#: zTensor v1.x "objects" layout: short names in each component.
ZT_SHORT_TO_CANONICAL = {
    "f64": "float64", "f32": "float32", "f16": "float16", "bf16": "bfloat16",
    "i64": "int64", "i32": "int32", "i16": "int16", "i8": "int8",
    "u64": "uint64", "u32": "uint32", "u16": "uint16", "u8": "uint8", "bool": "bool",
}
CANONICAL_TO_ZT_SHORT = {v: k for k, v in ZT_SHORT_TO_CANONICAL.items()}

#: v1.x logical ``type`` over a storage dtype: type → (canonical logical dtype, required storage dtype).
ZT_LOGICAL_TYPES = {
    "complex64": ("complex64", "float32"),
    "complex128": ("complex128", "float64"),
    "f8_e4m3fn": ("float8_e4m3fn", "uint8"),
    "f8_e5m2": ("float8_e5m2", "uint8"),
}

SAFETENSORS_TO_CANONICAL = {
    "F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16",
    "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2",
    "I64": "int64", "I32": "int32", "I16": "int16", "I8": "int8",
    "U64": "uint64", "U32": "uint32", "U16": "uint16", "U8": "uint8",
    "BOOL": "bool", "C64": "complex64",
}
CANONICAL_TO_SAFETENSORS = {v: k for k, v in SAFETENSORS_TO_CANONICAL.items()}


def dtype_info(name: str) -> DTypeInfo | None:
    return DTYPES.get(name)


@cache
def _float8_table(name: str) -> np.ndarray:
    """float32 value of each of the 256 bit patterns of a float8 format (16 for float4)."""
    if name == "float8_e8m0fnu":  # exponent only: 2^(e - 127), 0xFF is NaN
        values = np.exp2(np.arange(256, dtype=np.float64) - 127)
        values[255] = np.nan
        return values.astype(np.float32)
    exp_bits, man_bits, bias = _MINIFLOAT[name]
    total = 1 + exp_bits + man_bits
    bits = np.arange(1 << total, dtype=np.uint32)
    sign = np.where(bits & (1 << (total - 1)), -1.0, 1.0)
    exponent = (bits >> man_bits) & ((1 << exp_bits) - 1)
    mantissa = bits & ((1 << man_bits) - 1)
    normal = (1.0 + mantissa / (1 << man_bits)) * np.exp2(exponent.astype(np.float64) - bias)
    subnormal = (mantissa / (1 << man_bits)) * np.exp2(1.0 - bias)
    values = sign * np.where(exponent == 0, subnormal, normal)
    max_exp = (1 << exp_bits) - 1
    if name == "float8_e4m3fn":  # no infinities; only S.1111.111 is NaN
        values = np.where((exponent == max_exp) & (mantissa == 0b111), np.nan, values)
    elif name == "float8_e5m2":  # IEEE-like: exponent all ones → inf / NaN
        values = np.where(exponent == max_exp, np.where(mantissa == 0, sign * np.inf, np.nan), values)
    elif name in ("float8_e4m3fnuz", "float8_e5m2fnuz"):  # no infinities, no -0: 0x80 is the only NaN
        values = np.where(bits == 0x80, np.nan, values)
    return values.astype(np.float32)


#: (exponent bits, mantissa bits, bias) of the small float formats
_MINIFLOAT = {
    "float8_e4m3fn": (4, 3, 7), "float8_e5m2": (5, 2, 15), "float8_e4m3fnuz": (4, 3, 8),
    "float8_e5m2fnuz": (5, 2, 16), "float4_e2m1fn": (2, 1, 1),
}


def unpack_nibbles(packed: np.ndarray, count: int) -> np.ndarray:
    """``count`` 4-bit codes from bytes packed two per byte, low nibble first."""
    codes = np.empty(packed.size * 2, dtype=np.uint8)
    codes[0::2] = packed & 0x0F
    codes[1::2] = packed >> 4
    return codes[:count]


def to_float32(bits: np.ndarray, name: str) -> np.ndarray:
    """Decode bfloat16 (uint16 bits), float8 (uint8 bits) or float4 (one code per uint8) to float32."""
    if name == "bfloat16":
        return (bits.astype(np.uint32) << 16).view(np.float32)
    if name in _FLOAT8:
        return np.take(_float8_table(name), bits)
    raise ValueError(f"{name} needs no float32 conversion")


def decoded_numpy_dtype(name: str) -> np.dtype:
    """The numpy dtype a tensor of this canonical dtype is presented as."""
    info = DTYPES[name]
    if info.needs_conversion:
        return np.dtype(np.float32)
    if info.kind == "bool":
        return np.dtype(np.bool_)
    return info.storage_dtype.newbyteorder("=")
