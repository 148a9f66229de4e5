"""The common v2 manifest read straight from its bytes: a map of plain dense objects, canonical by construction.

A manifest ``{"objects": {...}}`` (optionally followed by file ``attributes``) whose every object is what
:mod:`.columns` takes is matched by one regular expression per object, run over the whole map by
``re.findall`` in C. The expression only matches deterministic CBOR: shortest heads for every integer,
definite lengths, no tags, the fixed keys in their canonical order, a registered dtype, a digest in its exact
syntax. What it cannot count is checked on the captured columns with C-level passes: each name is exactly as
long as its head says and valid UTF-8, names strictly increase in deterministic order (so none repeats), the
part map holds as many entries as it shows, each shape array as many dimensions as its head says, and the
matches tile the map with no byte in between (each match starts where the last ended; a non-plain object ends
the matching with one scan of the rest). Sizes, ranks and name rules are those of :mod:`.columns`.
Anything else answers ``None`` and the manifest goes through cbor2 and the schema (:func:`.reader.parse_manifest`),
which says what is wrong; so this path only accepts manifests that path reads without a problem, into the
same tensors (tests hold them together).
"""
from __future__ import annotations

import math
import re
from operator import itemgetter, lt, mul
from typing import Any

from ...cbor_tokens import INT, SHAPE, alternatives, integers, map_head, text, text_head, text_length
from ...tensor_table import TensorTable
from .cbor_check import CborError, decode_strict
from .fast import KINDS
from .vocab import DIGEST_HEX_DIGITS, LOGICAL

MAX_NAME_BYTES = 1024


def _digest_token(algorithm: str, digits: int) -> bytes:
    """A well-formed digest of ``algorithm`` as a text string token (:data:`.vocab.DIGEST_HEX_DIGITS`)."""
    prefix = f"{algorithm}:".encode()
    return re.escape(text_head(len(prefix) + digits) + prefix) + b"[0-9a-f]{%d}" % digits


_DTYPES = sorted({dtype for dtype, _ in KINDS})
_TYPES = sorted(name for name, spec in LOGICAL.items() if not spec.packed)
_OBJECT = re.compile(
    rb"([\x61-\x77]|\x78[\x18-\xff]|\x79[\x01-\xff].)(.*?)"      # name head (not empty), name (length checked later)
    rb"\xa3\x65parts\xa1\x64data([\xa2-\xa4])\x64blob\x82"       # object, parts, the data part's map head
    + b"(" + INT + b")(" + INT + b")"                             # blob offset, length
    + rb"(?:\x64type(" + alternatives(_TYPES) + b"))?"
    + rb"\x65dtype(" + alternatives(_DTYPES) + b")"
    + rb"(?:\x66digest(" + b"|".join(_digest_token(*item) for item in DIGEST_HEX_DIGITS.items()) + b"))?"
    + rb"\x65shape(" + SHAPE + b")"
    + rb"\x66layout\x65dense"
    rb"|(.+)", re.DOTALL)  # anything else: the rest of the map, so that every match starts where the last ended
#: bytes of an object outside its captured groups (with the optional "type" and "digest" keys left out)
_FIXED = len(b"\xa3\x65parts\xa1\x64data\x64blob\x82\x65dtype\x65shape\x66layout\x65dense")
_TYPE_KEY, _DIGEST_KEY = len(b"\x64type"), len(b"\x66digest")
#: (part map head, has type, has digest) that agree
_PART_HEADS = {(bytes([0xA2 + t + d]), t, d) for t in (False, True) for d in (False, True)}
#: (type token, dtype token) → (tensor dtype, component dtype, bytes per element, the component's extra)
_KIND_OF_TOKENS = {(b"" if t is None else text(t), text(d)): kind for (d, t), kind in KINDS.items()}
_width, _canonical, _stored = itemgetter(2), itemgetter(0), itemgetter(1, 3)
_ROOT_OBJECTS = b"\x67objects"
_ATTRIBUTES = b"\x6aattributes"


def read_plain(data: bytes) -> tuple[TensorTable, Any] | None:
    """``(tensors, the root's attributes value or None)`` of a manifest of plain objects, else ``None``."""
    if data[:1] not in (b"\xa1", b"\xa2") or data[1:9] != _ROOT_OBJECTS:
        return None
    count, start = map_head(data, 9)
    if not count:
        return None
    found = _OBJECT.findall(data, start)[:count]
    if len(found) != count:
        return None
    heads, names, part_heads, offsets, lengths, types, dtypes, digests, shapes, rests = zip(*found)
    if set(rests) != {b""}:
        return None
    captured = sum(sum(map(len, column)) for column in (heads, names, offsets, lengths, types, dtypes, digests, shapes))
    keys = _TYPE_KEY * (count - types.count(b"")) + _DIGEST_KEY * (count - digests.count(b""))
    end = start + captured + keys + count * (_FIXED + 1)  # + 1: the part map head
    attributes = _attributes(data, end) if data[0] == 0xA2 else (None if end == len(data) else ...)
    if attributes is ...:
        return None
    table = _table(heads, names, part_heads, offsets, lengths, types, dtypes, digests, shapes)
    return None if table is None else (table, attributes)


def _attributes(data: bytes, end: int) -> Any:
    """The value of the root's ``attributes`` entry that ends the manifest, or ``...`` when it is not that.
    Decoded strictly as the one entry of a map, so that nesting counts from the same depth as in the root."""
    if data[end:end + len(_ATTRIBUTES)] != _ATTRIBUTES:
        return ...
    try:
        return decode_strict(b"\xa1" + data[end:])["attributes"]
    except CborError:
        return ...


def _table(heads: tuple[bytes, ...], names: tuple[bytes, ...], part_heads: tuple[bytes, ...],
           offsets: tuple[bytes, ...], lengths: tuple[bytes, ...], types: tuple[bytes, ...],
           dtypes: tuple[bytes, ...], digests: tuple[bytes, ...], shapes: tuple[bytes, ...]) -> TensorTable | None:
    sizes = list(map(len, names))
    if list(map({h: text_length(h) for h in set(heads)}.__getitem__, heads)) != sizes:
        return None
    if max(sizes) > MAX_NAME_BYTES or not all(map(lt, zip(sizes, names), zip(sizes[1:], names[1:]))):
        return None
    if not set(zip(part_heads, map(bool, types), map(bool, digests))) <= _PART_HEADS:
        return None
    try:
        text = list(map(bytes.decode, names))
    except UnicodeDecodeError:
        return None
    if "\0" in "".join(text):
        return None
    try:
        shape_of = {token: tuple(decode_strict(token)) for token in set(shapes)}
        kinds = list(map(_KIND_OF_TOKENS.__getitem__, zip(types, dtypes)))
    except (CborError, KeyError):  # a dimension count that disagrees; a logical type on another storage dtype
        return None
    # tokens are u64 ints and shape arrays hold at most MAX_RANK of them by construction: what is left of
    # plain_columns' check is the size equation, worked out once per distinct shape
    shape_column = list(map(shape_of.__getitem__, shapes))
    counts = {shape: math.prod(shape) for shape in shape_of.values()}
    offset_column, length_column = integers(offsets), integers(lengths)
    if list(map(mul, map(counts.__getitem__, shape_column), map(_width, kinds))) != length_column:
        return None
    digest_column: list[str | None] | None = None
    if digests.count(b"") != len(digests):
        digest_column = [token[1 if token[0] < 0x78 else 2:].decode() if token else None for token in digests]
    return TensorTable(text, list(map(_canonical, kinds)), shape_column, offset_column, length_column,
                       spelling="dense", digests=digest_column,
                       stored=list(map(_stored, kinds)), decoded=True)
