"""Distance in units in the last place (ULP) between floats of the same binary format, from their bits.

Floats are sign-magnitude; mapping each bit pattern to ``magnitude`` (sign clear) or ``-magnitude`` (sign
set) gives integers in the order of the values, with +0 and -0 both 0. Two floats are then
``|key(a) - key(b)|`` representable values apart. Works for every width numpy can view as a signed
integer: float8 (int8), float16 / bfloat16 (int16), float32, float64.
"""
from __future__ import annotations

import numpy as np

_SIGNED = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}


def ordered_keys(bits: np.ndarray) -> np.ndarray:
    """Order-preserving signed integers of float bit patterns (any float or unsigned dtype of 1–8 bytes)."""
    signed = bits.view(_SIGNED[bits.dtype.itemsize])
    width = 8 * bits.dtype.itemsize
    sign = signed >> (width - 1)  # -1 where the sign bit is set, else 0
    magnitude_mask = signed.dtype.type((1 << (width - 1)) - 1)
    return (signed ^ (sign & magnitude_mask)) - sign


def max_ulp(bits_a: np.ndarray, bits_b: np.ndarray) -> int:
    """Largest ULP distance between corresponding elements of two same-format bit arrays (0 when empty).

    NaN bit patterns give meaningless distances: pass finite values only.
    """
    if bits_a.size == 0:
        return 0
    ka, kb = ordered_keys(bits_a), ordered_keys(bits_b)
    if ka.dtype.itemsize < 8:
        return int(np.abs(ka.astype(np.int64) - kb).max())
    # 64-bit keys: the difference can need 64 unsigned bits; take it in modular uint64 arithmetic
    ua, ub = ka.view(np.uint64), kb.view(np.uint64)
    return int(np.where(ka >= kb, ua - ub, ub - ua).max())


def float_bits(values: np.ndarray) -> np.ndarray:
    """The real float components of ``values`` (complex split into re, im) as a flat float array."""
    flat = np.ascontiguousarray(values).reshape(-1)
    if flat.dtype.kind == "c":
        return flat.view(flat.real.dtype)
    return flat
