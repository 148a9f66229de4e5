"""Text for people: every name, key and value a file holds, made safe to print and short enough to read.

A file can hold names with terminal escape sequences (``\\x1b]0;title\\x07`` sets a window title, ``\\x1b[2J``
clears the screen), lone surrogates that no encoder accepts, NUL bytes, and integers of thousands of digits
that Python refuses to turn into decimal text (``sys.get_int_max_str_digits``) and that would be quadratic
to convert anyway. Everything shown to a person goes through :func:`printable` (strings) or
:func:`value_text` (any decoded value); machine-readable JSON goes through :func:`json_safe`.
"""
from __future__ import annotations

import re
from typing import Any

#: Integers up to this many bits are written in decimal (about 300 digits); longer ones by their size.
DECIMAL_BITS = 1000
_CONTAINER_ITEMS = 8

# C0 controls, DEL, C1 controls, lone surrogates, and the invisible format characters that reorder or hide
# text (bidi overrides and isolates, zero-width joiners, BOM, line / paragraph separators).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")
_JSON_UNSAFE = re.compile("[\x7f-\x9f\ud800-\udfff\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    short = _SHORT.get(char)
    if short is not None:
        return short
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with control characters, lone surrogates and invisible format characters written as
    ``\\xNN`` / ``\\uNNNN`` escapes (newline and tab as ``\\n`` / ``\\t``); everything else unchanged."""
    if text.isprintable():
        return text
    return _UNSAFE.sub(_escape, text)


def int_text(value: int) -> str:
    """Decimal text of an integer, or ``<N-bit integer>`` past :data:`DECIMAL_BITS` bits."""
    if -(1 << DECIMAL_BITS) < value < 1 << DECIMAL_BITS:
        return str(int(value))
    sign = "-" if value < 0 else ""
    return f"<{sign}{abs(value).bit_length():,}-bit integer>"


def is_huge_int(value: Any) -> bool:
    """An ``int`` (not a bool) too long to write in decimal (see :func:`int_text`)."""
    return type(value) is int and not -(1 << DECIMAL_BITS) < value < 1 << DECIMAL_BITS


def value_text(value: Any, limit: int = 200) -> str:
    """A one-line, printable rendering of any decoded manifest or attribute value, at most ``limit``
    characters: strings quoted as ``repr`` does, huge integers by their size, bytes as hex, containers
    shortened. Never raises, whatever the value (self-containing lists included)."""
    text = _render(value, limit, 0)
    return text if len(text) <= limit else text[:max(0, limit - 1)] + "…"


def _render(value: Any, budget: int, depth: int) -> str:
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        return int_text(value)
    if isinstance(value, str):
        return printable(repr(value[:budget + 2]) if len(value) > budget + 2 else repr(value))
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value[:32])
        return f"<{len(value)} bytes> {data.hex(' ')}" + (" …" if len(value) > 32 else "")
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dict):
        if depth > 3:
            return "{…}"
        items = [f"{_render(k, budget, depth + 1)}: {_render(v, budget, depth + 1)}"
                 for k, v in _first_items(value.items(), budget)]
        return "{" + ", ".join(items) + (", …" if len(value) > len(items) else "") + "}"
    if isinstance(value, (list, tuple)):
        if depth > 3:
            return "[…]"
        items = [_render(v, budget, depth + 1) for v in _first_items(value, budget)]
        return "[" + ", ".join(items) + (", …" if len(value) > len(items) else "") + "]"
    try:
        text = repr(value)
    except (ValueError, RecursionError, TypeError):  # a foreign object with a huge int or a cycle inside
        text = f"<{type(value).__name__}>"
    return printable(text[:budget + 2])


def _first_items(items: Any, budget: int) -> list[Any]:
    first: list[Any] = []
    for item in items:
        if len(first) >= min(_CONTAINER_ITEMS, max(1, budget // 4)):
            break
        first.append(item)
    return first


def json_safe(text: str) -> str:
    """JSON text (as ``json.dumps(..., ensure_ascii=False)`` writes it) with lone surrogates, DEL, C1
    controls and bidi / line-separator characters written as ``\\uNNNN`` escapes: still the same JSON,
    now encodable as UTF-8 and harmless on a terminal. (Those characters only occur inside strings.)"""
    return _JSON_UNSAFE.sub(_json_escape, text)


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"
