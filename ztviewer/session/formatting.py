"""Text for sizes, shapes and offsets, shared by every view."""
from __future__ import annotations

import re
from typing import Any

_UNITS = ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB")
_DIGITS = re.compile(r"(\d+)")


def human_bytes(n: int | None) -> str:
    if n is None:
        return "?"
    if n < 1024:
        return f"{n} B" if n != 1 else "1 B"
    value = float(n)
    for unit in _UNITS[1:]:
        value /= 1024
        if value < 1024:
            return f"{value:.1f} {unit}"
    return f"{value:.1f} {_UNITS[-1]}"


def exact_bytes(n: int) -> str:
    return f"{n:,} bytes" + (f" ({human_bytes(n)})" if n >= 1024 else "")


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


def natural_key(text: str) -> tuple:
    """Sort key that puts ``layers.2`` before ``layers.10``."""
    return tuple(int(part) if part.isdigit() else part.lower() for part in _DIGITS.split(text))


def alignment_of(offset: int, cap: int = 1 << 20) -> int:
    """Largest power of two dividing ``offset`` (``cap`` for offset 0)."""
    if offset == 0:
        return cap
    return min(offset & -offset, cap)


def short_value(value: Any, limit: int = 200) -> str:
    """A one-line rendering of a manifest/attribute value for tables."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        text = data[:32].hex(" ") + (" …" if len(data) > 32 else "")
        return f"<{len(data)} bytes> {text}"
    text = value if isinstance(value, str) else repr(value)
    text = text.replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"
