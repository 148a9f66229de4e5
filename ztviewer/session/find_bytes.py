"""Find in the hex view: a byte pattern from hex, text or a typed value, searched a chunk at a time.

:func:`pattern_bytes` turns what the user typed into bytes (``"DE AD be ef"``, text as UTF-8, or a number as
u8…u64 / i8…i64 / f16 / bf16 / f32 / f64 in either byte order); :func:`find` scans any object with ``size`` and
``window(offset, length)`` (a :class:`~ztviewer.codec.source.Source`, decoded part bytes) forward or backward in
bounded chunks that overlap by ``len(pattern) - 1`` bytes, checking ``cancelled`` and reporting progress between
chunks. Nothing is read whole; no Qt.
"""
from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable
from typing import Any

import numpy as np

from ztviewer.session.byte_window import ByteWindow

HEX, TEXT = "hex", "text"
#: typed values: struct code and width (bf16 is float32's upper half)
TYPED = {"u8": ("B", 1), "u16": ("H", 2), "u32": ("I", 4), "u64": ("Q", 8),
         "i8": ("b", 1), "i16": ("h", 2), "i32": ("i", 4), "i64": ("q", 8),
         "f16": ("e", 2), "bf16": ("bf16", 2), "f32": ("f", 4), "f64": ("d", 8)}
KINDS = (HEX, TEXT, *TYPED)
CHUNK = 8 << 20
MAX_PATTERN = 4096


class BadPattern(ValueError):
    """What the user typed is not a pattern of the chosen kind (the message says why)."""


def _bf16(value: float, little: bool) -> bytes:
    bits = int(np.array([value], dtype=np.float32).view(np.uint32)[0])
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 if (bits & 0x7F800000) != 0x7F800000 else bits >> 16
    if math.isnan(value):                    # keep a quiet NaN, whatever rounding did
        rounded = (bits >> 16) | 0x0040
    return int(rounded & 0xFFFF).to_bytes(2, "little" if little else "big")


def pattern_bytes(kind: str, text: str, little: bool = True) -> bytes:
    """The bytes to look for; raises :class:`BadPattern` with a short reason."""
    if kind == HEX:
        cleaned = re.sub(r"(0x|\\x|[\s,:;-])", "", text, flags=re.IGNORECASE)
        if not cleaned:
            raise BadPattern("type hex bytes, e.g. DE AD BE EF")
        if len(cleaned) % 2 or re.search(r"[^0-9a-fA-F]", cleaned):
            raise BadPattern(f"{text!r} is not whole hex bytes (two digits each, e.g. 0A FF)")
        data = bytes.fromhex(cleaned)
    elif kind == TEXT:
        if not text:
            raise BadPattern("type the text to find")
        data = text.encode("utf-8")
    elif kind in TYPED:
        data = _typed(kind, text.strip(), little)
    else:
        raise BadPattern(f"unknown kind {kind!r}")
    if len(data) > MAX_PATTERN:
        raise BadPattern(f"the pattern is {len(data):,} bytes; at most {MAX_PATTERN:,}")
    return data


def _typed(kind: str, text: str, little: bool) -> bytes:
    code, width = TYPED[kind]
    order = "<" if little else ">"
    if kind.startswith(("u", "i")):
        try:
            value = int(text.replace("_", ""), 0)
        except ValueError:
            raise BadPattern(f"{text!r} is not an integer (e.g. 42, -7, 0x1F)") from None
        low, high = (0, (1 << 8 * width) - 1) if kind[0] == "u" else (-(1 << 8 * width - 1), (1 << 8 * width - 1) - 1)
        if not low <= value <= high:
            raise BadPattern(f"{value} does not fit {kind} ({low} … {high})")
        return struct.pack(order + code, value)
    try:
        number = float(text)
    except ValueError:
        raise BadPattern(f"{text!r} is not a number (e.g. 0.5, -1e-3, inf, nan)") from None
    if code == "bf16":
        return _bf16(number, little)
    try:
        return struct.pack(order + code, number)
    except (OverflowError, struct.error):
        raise BadPattern(f"{text} does not fit {kind}") from None


def find(data: ByteWindow, pattern: bytes, start: int, backward: bool = False, *, chunk: int = CHUNK,
         cancelled: Callable[[], bool] | None = None,
         progress: Callable[[int, int], None] | None = None) -> int | None:
    """Offset of the first match at or after ``start`` (forward), or the last match starting before ``start``
    (backward); ``None`` when there is none or the search was cancelled. Progress counts bytes scanned."""
    size, n = data.size, len(pattern)
    if not n or n > size:
        return None
    chunk = max(chunk, 2 * n)
    start = max(0, min(start, size))
    total = size - start if not backward else start
    scanned = 0
    if not backward:
        pos = start
        while pos + n <= size:
            if cancelled is not None and cancelled():
                return None
            length = min(chunk + n - 1, size - pos)
            found = data.window(pos, length).find(pattern)
            if found >= 0:
                return pos + found
            pos += chunk
            scanned = min(total, scanned + chunk)
            if progress is not None:
                progress(scanned, total)
        return None
    end = start + n - 1                # a match may start at start - 1 and run past it
    end = min(end, size)
    while end - n >= 0 and end > 0:
        if cancelled is not None and cancelled():
            return None
        begin = max(0, end - chunk - n + 1)
        found = data.window(begin, end - begin).rfind(pattern)
        if found >= 0 and begin + found < start:
            return begin + found
        end = begin + n - 1
        if begin == 0:
            return None
        scanned = min(total, scanned + chunk)
        if progress is not None:
            progress(scanned, total)
    return None


def find_wrapping(data: ByteWindow, pattern: bytes, start: int, backward: bool = False,
                  **kw: Any) -> tuple[int | None, bool]:
    """:func:`find`, continuing from the other end when nothing is found: (offset, wrapped)."""
    found = find(data, pattern, start, backward, **kw)
    if found is not None:
        return found, False
    cancelled = kw.get("cancelled")
    if cancelled is not None and cancelled():
        return None, False
    again = find(data, pattern, data.size if backward else 0, backward, **kw)
    return again, again is not None
