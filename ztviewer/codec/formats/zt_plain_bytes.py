"""The common zTensor 1.x manifest read straight from its bytes: a map of plain dense entries as writers spell it.

The ztensor writers (Rust and Python) write the root map with ``tensors`` / ``objects`` last and every plain dense
entry in one fixed spelling: v1.0 ``{dtype, shape, format: "dense", components: {data: {offset, length}}}``,
objects layout ``{shape, format: "dense", components: {data: {dtype, offset, length}}}``, in that key order,
integers and heads in their shortest form. Such a map is matched by one regular expression per entry, run over
it by ``re.findall`` in C, instead of being decoded by cbor2 into dicts and then taken apart again. What the
expression cannot count is checked on the captured columns with C-level passes: each name is as long as its head
says and valid UTF-8, no name repeats, each shape array holds as many dimensions as its head says, the matches
tile the map to the manifest's end; sizes and ranks are those of every plain path
(:func:`~ztviewer.codec.plain_columns.plain_columns`). The root's other entries are decoded by cbor2 as the whole
manifest would be. Anything else answers ``None`` and the manifest is decoded whole
(:func:`~.zt_footer.decode_manifest`) and read by the layout's reader, which says what is wrong; so this path
only accepts manifests that path reads without a problem, into the same tensors (tests hold them together).
"""
from __future__ import annotations

import functools
import re
from typing import Any

import cbor2

from ..cbor_tokens import INT, SHAPE, TEXT_HEAD, alternatives, integers, map_head, text_length
from ..dtypes import DTYPES, ZT_LONG_NAMES, ZT_SHORT_TO_CANONICAL
from ..plain_columns import plain_columns
from ..tensor_table import TensorTable
from .zt_footer import decode_root_before

_NAME = b"(" + TEXT_HEAD + rb")(.*?)"  # the name's length is checked on the captured columns
_E = re.escape
#: anything else: the rest of the map, so that every match starts where the last one ended (a non-plain entry
#: costs one scan of the rest, never a search from every byte)
_REST = b"|(.+)"
#: the fixed bytes of a v1.0 entry, and of an objects-layout entry, between its captured tokens
_V10 = (b"\xa4\x65dtype", b"\x65shape", b"\x66format\x65dense\x6acomponents\xa1\x64data\xa2\x66offset", b"\x66length")
_OBJECTS = (b"\xa3\x65shape", b"\x66format\x65dense\x6acomponents\xa1\x64data\xa3\x65dtype", b"\x66offset",
            b"\x66length")
#: layout → (the map's key in the root, one entry's expression (see :func:`_entry`), bytes of an entry outside its
#: captured groups, dtype spelling → canonical dtype)
_LAYOUTS: dict[str, tuple[str, bytes, int, dict[str, str]]] = {
    "v1.0": ("tensors",
             _NAME + _E(_V10[0]) + b"(" + alternatives(sorted(ZT_LONG_NAMES)) + b")" + _E(_V10[1]) + b"("
             + SHAPE + b")" + _E(_V10[2]) + b"(" + INT + b")" + _E(_V10[3]) + b"(" + INT + b")" + _REST,
             len(b"".join(_V10)), {name: name for name in ZT_LONG_NAMES}),
    "v1.x-objects": ("objects",
                     _NAME + _E(_OBJECTS[0]) + b"(" + SHAPE + b")" + _E(_OBJECTS[1]) + b"("
                     + alternatives(sorted(ZT_SHORT_TO_CANONICAL)) + b")" + _E(_OBJECTS[2]) + b"(" + INT + b")"
                     + _E(_OBJECTS[3]) + b"(" + INT + b")" + _REST,
                     len(b"".join(_OBJECTS)), dict(ZT_SHORT_TO_CANONICAL)),
}


@functools.cache
def _entry(layout: str) -> re.Pattern[bytes]:
    """The layout's entry expression, compiled on first use: a file is of one layout, and each takes ~1 ms."""
    return re.compile(_LAYOUTS[layout][1], re.DOTALL)


def read_plain(data: bytes, layout: str) -> tuple[dict[Any, Any], TensorTable] | None:
    """``(the root map with an empty tensors / objects map, the tensors)`` of a manifest of plain entries of a
    1.x ``layout``, else ``None``."""
    key, _source, fixed, canonical = _LAYOUTS[layout]
    entry = _entry(layout)
    split = decode_root_before(data, key)
    if split is None:
        return None
    root, start = split
    count, start = map_head(data, start)
    if not count:
        return None
    found = entry.findall(data, start)[:count]
    if len(found) != count:
        return None
    if layout == "v1.0":
        heads, names, dtypes, shapes, offsets, lengths, rests = zip(*found)
    else:
        heads, names, shapes, dtypes, offsets, lengths, rests = zip(*found)
    captured = sum(sum(map(len, column)) for column in (heads, names, dtypes, shapes, offsets, lengths))
    if set(rests) != {b""} or start + captured + count * fixed != len(data):
        return None
    table = _table(heads, names, dtypes, shapes, offsets, lengths, canonical)
    if table is None:
        return None
    root[key] = {}
    return root, table


def _table(heads: tuple[bytes, ...], names: tuple[bytes, ...], dtypes: tuple[bytes, ...], shapes: tuple[bytes, ...],
           offsets: tuple[bytes, ...], lengths: tuple[bytes, ...], canonical: dict[str, str]) -> TensorTable | None:
    if list(map({h: text_length(h) for h in set(heads)}.__getitem__, heads)) != list(map(len, names)):
        return None
    try:
        text = list(map(bytes.decode, names))
        shape_of = {token: cbor2.loads(token) for token in set(shapes)}
    except (UnicodeDecodeError, cbor2.CBORError, ValueError):
        return None
    if len(set(text)) != len(text) or any(cbor2.dumps(shape) != token for token, shape in shape_of.items()):
        return None  # a repeated name; a shape whose head counts other dimensions than it holds
    dtype_of = {token: canonical[token[1:].decode()] for token in set(dtypes)}
    dtype_column = list(map(dtype_of.__getitem__, dtypes))
    widths = list(map({d: DTYPES[d].itemsize for d in set(dtype_column)}.__getitem__, dtype_column))
    columns = plain_columns(list(map(shape_of.__getitem__, shapes)), widths, integers(offsets + lengths))
    return None if columns is None else TensorTable(text, dtype_column, *columns, 0, 0, spelling="dense")
