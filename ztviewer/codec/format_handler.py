"""What the registry knows of each format: how to recognise its files and how to read them.

:mod:`.registry` defines the built-in formats' handlers (each sniffs with :mod:`.formats.magic` and imports its
format module on its first read); format modules never import the registry (the two would import each other).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from .model import TensorFile
from .source import Source

HEAD_BYTES = 64


class Reader(Protocol):
    def __call__(self, source: Source) -> TensorFile: ...


@dataclass(frozen=True)
class FormatHandler:
    name: str                      # "zt", "safetensors", "blz", "zt-v2"
    description: str
    extensions: tuple[str, ...]
    sniff: Callable[[bytes, int], bool]   # (first HEAD_BYTES bytes, file size) → is it mine?
    read: Reader
    write: Callable[..., Any] | None = None
    # (last HEAD_BYTES bytes, file size) → is it mine? Asked only when no head matches: a file whose
    # first bytes are damaged but whose trailer names the format (zTensor v2's footer magic).
    sniff_tail: Callable[[bytes, int], bool] | None = None
