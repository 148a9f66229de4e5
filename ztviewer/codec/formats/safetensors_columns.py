"""The plain path of the safetensors readers: a header proven sound column by column, piece by piece.

A header as the reference writer writes it (every entry ``{dtype, shape, data_offsets}``, known dtypes, sizes
that match, offsets tiling the byte buffer in order) is checked with a fixed number of C-level passes over
the entries (``map``, ``set``, numpy, :func:`~ztviewer.codec.plain_columns.plain_columns`), never with Python
code per entry, and listed as a :class:`~ztviewer.codec.tensor_table.TensorTable`. Any entry
that is unusual in any way makes it answer ``None``: the checked path (:mod:`.safetensors_tensors`) then walks
every entry and says what is wrong, so the plain path only ever accepts what that path reads without a problem
(tests hold the two together).

A large header is decoded in pieces of about :data:`PIECE_BYTES`, cut after a ``},`` (the end of an entry as
the reference writer writes it): each piece ``{…}`` is decoded, checked and kept as compact columns (names,
shared dtype names, shared shape tuples, ``uint64`` offsets and lengths) before the next is decoded, so no
decoded dict of the whole header ever exists (a 1,000,000-entry header would need some 600 MB for it) and
the passes run over data that stays in the CPU's caches. Cutting never changes what is read: pieces that
all decode are member lists whose concatenation, joined by the commas cut out, is the header itself; a cut
inside a string or a nested value leaves a piece that does not decode, and the header takes the checked path.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import chain, islice
from operator import itemgetter, lt
from typing import Any

import numpy as np

from ..dtypes import DTYPES, SAFETENSORS_TO_CANONICAL
from ..plain_columns import plain_columns
from ..tensor_table import TensorTable

METADATA_KEY = "__metadata__"
PIECE_BYTES = 1 << 16  # some 1,000 entries of the reference writer
ITEMSIZE = {st: DTYPES[canonical].itemsize for st, canonical in SAFETENSORS_TO_CANONICAL.items()}
_dtype, _shape, _offsets = itemgetter("dtype"), itemgetter("shape"), itemgetter("data_offsets")
_flatten = chain.from_iterable
_DICT, _TWO, _STR = {dict}, {2}, {str}
_KEY_END = b'":'  # ends every key of a header with no whitespace before a colon
_SPACE_COLON = (b" :", b"\t:", b"\n:", b"\r:")
_ABSENT = object()

#: Decodes JSON bytes (orjson's ``loads``, or the standard library's).
Loads = Callable[[bytes], Any]
#: ``(names, canonical dtypes, shapes, begins, lengths)`` of some entries (byte positions as ``uint64`` arrays).
EntryColumns = tuple[list[str], list[str], list[tuple[int, ...]], np.ndarray, np.ndarray]


def entry_columns(entries: dict[str, Any]) -> EntryColumns | None:
    """The columns of some (at least one) plain entries, contiguous in order, or ``None``."""
    values = list(entries.values())
    if set(map(type, values)) != _DICT or set(map(len, values)) != {3}:
        return None
    try:
        raw_dtypes = list(map(_dtype, values))
        shapes = list(map(_shape, values))
        spans = list(map(_offsets, values))
        itemsizes = list(map(ITEMSIZE.__getitem__, raw_dtypes))  # KeyError: unknown; TypeError: unhashable
        if set(map(len, spans)) != _TWO:  # TypeError: a number; a text or map of two yields no ints below
            return None
    except (KeyError, TypeError):
        return None
    columns = plain_columns(shapes, itemsizes, list(_flatten(spans)), pairs=True, spans=True)
    if columns is None:
        return None
    tuples, begins, lengths = columns
    if (begins[1:] != begins[:-1] + lengths[:-1]).any():
        return None
    return list(entries), list(map(SAFETENSORS_TO_CANONICAL.__getitem__, raw_dtypes)), tuples, begins, lengths


def plain_header(raw: bytes, loads: Loads, base: int, buffer_len: int) -> tuple[dict[str, str], TensorTable] | None:
    """``(metadata, tensors)`` of a whole header text (``{`` … ``}``, spaces may follow) when it is plain, else
    ``None``: decoded piece by piece (see the module's description), no key repeated, ``__metadata__`` (if any)
    a map of strings to strings, every entry plain, the entries tiling the ``buffer_len`` bytes at ``base``."""
    metadata: Any = _ABSENT
    keys = covered = 0
    names: list[str] = []
    dtypes: list[str] = []
    shapes: list[tuple[int, ...]] = []
    begins: list[np.ndarray] = []
    lengths: list[np.ndarray] = []
    for piece in _pieces(raw):
        try:
            entries = loads(piece)
        except (ValueError, RecursionError):  # not JSON
            return None
        found = entries.pop(METADATA_KEY, _ABSENT)
        if found is not _ABSENT:
            if metadata is not _ABSENT or not plain_metadata(found):
                return None
            metadata = found
            keys += 1 + len(found)
        if not entries:
            continue
        columns = entry_columns(entries)
        if columns is None or columns[3][0] != covered:
            return None
        keys += 4 * len(entries)  # each name and its entry's three keys
        names += columns[0]
        dtypes += columns[1]
        shapes += columns[2]
        begins.append(columns[3])
        lengths.append(columns[4])
        covered = int(columns[3][-1] + columns[4][-1])
    if covered != buffer_len or not no_key_dropped(raw, keys) or not _distinct(names):
        return None
    empty = np.zeros(0, dtype=np.uint64)
    table = TensorTable(names, dtypes, shapes, np.concatenate(begins) if begins else empty,
                        np.concatenate(lengths) if lengths else empty, base)
    return ({} if metadata is _ABSENT else metadata), table


def _distinct(names: list[str]) -> bool:
    """Whether no name repeats (a name repeated within a piece is caught by the key count, across pieces here):
    in increasing order, as writers usually list them, no set is needed."""
    return all(map(lt, names, islice(names, 1, None))) or len(set(names)) == len(names)


def _pieces(raw: bytes) -> Iterator[bytes]:
    """The header as JSON objects of whole members, each cut after a ``},`` some :data:`PIECE_BYTES` on."""
    cut = raw.find(b"},", PIECE_BYTES)
    if cut < 0:
        yield raw
        return
    yield raw[:cut + 1] + b"}"
    start = cut + 2
    while (cut := raw.find(b"},", start + PIECE_BYTES)) >= 0:
        yield b"{" + raw[start:cut + 1] + b"}"
        start = cut + 2
    yield b"{" + raw[start:]


def plain_metadata(value: Any) -> bool:
    """Whether a decoded ``__metadata__`` value is what the plain path keeps as is: a map of strings to strings."""
    return type(value) is dict and set(map(type, value.values())) <= _STR


def no_key_dropped(raw: bytes, keys: int) -> bool:
    """Whether a JSON text whose decoding holds ``keys`` keys in all wrote no more (none was dropped as a
    duplicate): ``False`` also when a colon sits where the count cannot tell (the checked path then sees
    every key). Every key written is followed by its own ``:``, so the number of ``:`` bytes is at least the
    number of keys written, which is at least the number of keys decoded, with equality only when no key was
    dropped. Colons inside strings (dates in metadata) break the equality; then ``":`` is counted instead,
    which is exact when no whitespace byte precedes a ``:`` (a ``":`` inside a string is an escaped quote
    and only adds to the count)."""
    return raw.count(b":") == keys or (raw.count(_KEY_END) == keys and not any(pair in raw for pair in _SPACE_COLON))
