"""Text for sizes, shapes and offsets, shared by every view."""
from __future__ import annotations

import math
import re
from typing import Any

from ztviewer.codec.text import int_text, is_huge_int, printable, value_text

_UNITS = ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB")
_DIGITS = re.compile(r"(\d+)")


def human_bytes(n: int | None) -> str:
    if n is None:
        return "?"
    if n < 1024:
        return f"{n} B" if n != 1 else "1 B"
    if n.bit_length() > 1000:  # past what a float holds
        return f"{int_text(n)} B"
    value = float(n)
    for unit in _UNITS[1:]:
        value /= 1024
        if value < 1024:
            return f"{value:.1f} {unit}"
    return f"{value:.1f} {_UNITS[-1]}"


def exact_bytes(n: int) -> str:
    return f"{count_text(n)} bytes" + (f" ({human_bytes(n)})" if n >= 1024 else "")


def count_text(n: int) -> str:
    """``1,234,567``; an integer too long for decimal text by its size (shapes of hundreds of huge axes)."""
    return int_text(n) if is_huge_int(n) else f"{n:,}"


def shape_text(shape: tuple[int, ...] | list[int] | None) -> str:
    if shape is None:
        return ""
    if len(shape) == 0:
        return "scalar"
    return " × ".join(str(d) for d in shape)


def hex_offset(offset: int | None, width: int = 0) -> str:
    if offset is None:
        return ""
    return f"0x{offset:0{width}X}"


def byte_range(offset: int, length: int) -> str:
    return f"[0x{offset:X}, 0x{offset + length:X})"


def natural_key(text: str) -> tuple[int | str, ...]:
    """Sort key that puts ``layers.2`` before ``layers.10``."""
    return tuple(int(part) if part.isdigit() else part.lower() for part in _DIGITS.split(text))


def alignment_of(offset: int, cap: int = 1 << 20) -> int:
    """Largest power of two dividing ``offset`` (``cap`` for offset 0)."""
    if offset == 0:
        return cap
    return min(offset & -offset, cap)


def short_value(value: Any, limit: int = 200) -> str:
    """A one-line rendering of a manifest/attribute value for tables: strings as they are (control characters
    and lone surrogates escaped), anything else by :func:`ztviewer.codec.text.value_text` (huge integers by
    their size, bytes as hex, containers shortened)."""
    if not isinstance(value, str):
        return value_text(value, limit)
    text = printable(value.replace("\n", " "))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``1 entry``, ``2 entries``, ``1,000 digests``: the count and the noun in the number it takes."""
    return f"{count:,} {noun if count == 1 else (nouns or noun + 's')}"


def part_of(part: int, whole: int, noun: str, nouns: str | None = None) -> str:
    """``3 of 12 tensors``, ``0 of 1 tensor``: a count among a counted whole, the noun in the whole's number."""
    return f"{part:,} of {plural(whole, noun, nouns)}"


def number_text(value: float | None, digits: int = 4, *, missing: str = "", minus: str = "−",
                grouped: bool = True) -> str:
    """A statistic for a table or report: ``missing`` for None, ``nan``, ``inf`` / ``<minus>inf``, a whole number
    below 1e15 in full with thousands separators when ``grouped``, else ``digits`` significant digits."""
    if value is None:
        return missing
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else f"{minus}inf"
    if grouped and value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:.{digits}g}"


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``11th``, ``22nd``, ``32nd``."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def si_count(value: float, step: float) -> str:
    """A tick label for an index or count: ``1.5M``, ``250k``, ``12``; as many decimals as ``step`` (the spacing
    between neighbouring labels) needs to tell them apart."""
    magnitude = abs(value)
    factor, suffix = next(((f, s) for f, s in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")) if magnitude >= f),
                          (1.0, ""))
    decimals = 0
    while decimals < 3 and abs(round(step / factor, decimals) - step / factor) > 1e-9 * max(1.0, step / factor):
        decimals += 1
    text = f"{value / factor:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return ("0" if text in ("-0", "") else text) + (suffix if text not in ("0", "-0") else "")
