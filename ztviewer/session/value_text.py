"""Attribute values as the user types them: a kind (text, integer, float, bool, list, map) plus text.

Lists and maps are written as JSON (``[1, 2.5, "a"]``, ``{"k": true}``); :func:`parse` validates as the user
types and says what is wrong.
"""
from __future__ import annotations

import json
from typing import Any

KINDS = ("text", "integer", "float", "bool", "list", "map")
STRING_ONLY = ("text",)


class InvalidValue(ValueError):
    """The text is not a value of the chosen kind (the message says why)."""


def kind_of(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, (list, tuple)):
        return "list"
    if isinstance(value, dict):
        return "map"
    return "text"


def to_text(value: Any) -> str:
    """The editable text of a value (strings as they are, everything else JSON-like)."""
    kind = kind_of(value)
    if kind == "text":
        return value if isinstance(value, str) else repr(value)
    if kind == "bool":
        return "true" if value else "false"
    if kind in ("integer", "float"):
        return repr(value)
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def parse(kind: str, text: str) -> Any:
    """The value of ``text`` read as ``kind``; raises :class:`InvalidValue` with a short reason."""
    if kind == "text":
        return text
    stripped = text.strip()
    if kind == "integer":
        try:
            return int(stripped.replace("_", ""), 0)
        except ValueError:
            raise InvalidValue(f"{text!r} is not an integer (e.g. 42, -7, 0x1F)") from None
    if kind == "float":
        try:
            return float(stripped)
        except ValueError:
            raise InvalidValue(f"{text!r} is not a number (e.g. 0.5, 1e-3, nan)") from None
    if kind == "bool":
        lowered = stripped.lower()
        if lowered in ("true", "1", "yes", "on"):
            return True
        if lowered in ("false", "0", "no", "off"):
            return False
        raise InvalidValue("a bool is true or false")
    if kind in ("list", "map"):
        try:
            value = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise InvalidValue(f"not valid JSON: {exc.msg} at column {exc.colno}") from None
        wanted = list if kind == "list" else dict
        if not isinstance(value, wanted):
            example = '[1, 2.5, "a"]' if kind == "list" else '{"key": "value"}'
            raise InvalidValue(f"a {kind} is written like {example}")
        return value
    raise InvalidValue(f"unknown kind {kind!r}")


def convert(value: Any, kind: str) -> Any:
    """``value`` turned into ``kind`` when the user changes the type column (text is kept when it parses)."""
    try:
        return parse(kind, to_text(value))
    except InvalidValue:
        return {"text": "", "integer": 0, "float": 0.0, "bool": False, "list": [], "map": {}}[kind]

