"""Shortest-form CBOR tokens as bytes, for the plain paths that read a common manifest straight from its bytes.

A plain path matches whole manifests of one usual shape with a regular expression built from these pieces, then
reads the captured tokens with C-level passes (no decoder, no Python code per entry). Only shortest heads and
definite lengths are spelled here: anything else does not match, and the manifest goes through cbor2.
"""
from __future__ import annotations

import re
from itertools import repeat
from operator import sub

from .plain_columns import MAX_RANK

#: an unsigned integer (major type 0) in its shortest form, head included
INT = (rb"(?:[\x00-\x17]|\x18[\x18-\xff]|\x19[\x01-\xff].|\x1a(?:[\x01-\xff].|\x00[\x01-\xff])..|"
       rb"\x1b(?:[\x01-\xff]...|\x00[\x01-\xff]..|\x00\x00[\x01-\xff].|\x00\x00\x00[\x01-\xff]).{4})")
#: an array of at most MAX_RANK unsigned integers (a shape), shortest heads (its item count is checked on decoding)
SHAPE = rb"(?:[\x80-\x97]|\x98[\x18-" + re.escape(bytes([MAX_RANK])) + rb"])(?:" + INT + rb")*"
#: the shortest head of a text string shorter than 65,536 bytes (its length is checked on the captured text)
TEXT_HEAD = rb"[\x60-\x77]|\x78[\x18-\xff]|\x79[\x01-\xff]."
#: the amount the leading head byte adds to a whole integer token read as one big-endian number
_HEAD_WEIGHT = {1: 0, 2: 0x18 << 8, 3: 0x19 << 16, 5: 0x1A << 32, 9: 0x1B << 64}


def text_head(length: int) -> bytes:
    """The shortest head of a text string of ``length`` (< 256) bytes."""
    assert length < 256
    return bytes([0x60 + length]) if length < 24 else bytes([0x78, length])


def text(value: str) -> bytes:
    """``value`` as a text string token."""
    raw = value.encode()
    return text_head(len(raw)) + raw


def alternatives(values: list[str]) -> bytes:
    """A regular expression matching any one of ``values`` as a text string token."""
    return b"|".join(re.escape(text(v)) for v in values)


def text_length(head: bytes) -> int:
    """The length a :data:`TEXT_HEAD` announces."""
    return head[0] - 0x60 if len(head) == 1 else int.from_bytes(head[1:], "big")


def map_head(data: bytes, at: int) -> tuple[int, int]:
    """``(entries, where they start)`` of a shortest definite map head at ``at``; ``(0, at)`` for anything else."""
    head = data[at:at + 1]
    if not head or not 0xA0 <= head[0] <= 0xBA:
        return 0, at
    info = head[0] - 0xA0
    if info < 24:
        return info, at + 1
    width = 1 << (info - 24)
    count = int.from_bytes(data[at + 1:at + 1 + width], "big")
    return (count, at + 1 + width) if count >= (24 if width == 1 else 1 << (4 * width)) else (0, at)


def integers(tokens: tuple[bytes, ...]) -> list[int]:
    """The values of :data:`INT` tokens."""
    whole = map(int.from_bytes, tokens, repeat("big"))  # type: ignore[arg-type]  # byteorder: "big"
    return list(map(sub, whole, map(_HEAD_WEIGHT.__getitem__, map(len, tokens))))
