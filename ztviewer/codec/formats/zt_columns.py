"""The plain path of the zTensor 1.x readers: a manifest of plain dense entries proven sound column by column.

When every entry is a dense tensor with one ``data`` component holding only the required keys (v1.0: ``{dtype,
shape, format, components: {data: {offset, length}}}``; objects layout: ``{shape, format, components: {data: {dtype,
offset, length}}}``) and sizes that match, a fixed number of C-level passes over all entries
(:func:`~ztviewer.codec.plain_columns.plain_columns`) proves it and the tensors are listed as a
:class:`~ztviewer.codec.tensor_table.TensorTable`, with no Python code per entry. Otherwise it answers ``None`` and
the per-entry loops of :mod:`.zt_fast` read the manifest (they take optional component keys too, and send any
unusual entry to the layout's full reader).
"""
from __future__ import annotations

from operator import itemgetter
from typing import Any

from ..dtypes import DTYPES, ZT_LONG_NAMES, ZT_SHORT_TO_CANONICAL
from ..plain_columns import plain_columns
from ..tensor_table import TensorTable

_V10_ITEMSIZE = {name: DTYPES[name].itemsize for name in ZT_LONG_NAMES}
_SHORT_ITEMSIZE = {short: DTYPES[name].itemsize for short, name in ZT_SHORT_TO_CANONICAL.items()}
_dtype, _shape, _format = itemgetter("dtype"), itemgetter("shape"), itemgetter("format")
_components, _data = itemgetter("components"), itemgetter("data")
_offset, _length = itemgetter("offset"), itemgetter("length")
_DICT, _STR, _DENSE, _ONE = {dict}, {str}, {"dense"}, {1}


def v10_table(entries: dict[Any, Any], start: int) -> TensorTable | None:
    """The tensors of v1.0 ``tensors`` entries, numbered from ``start``, when all of them are plain."""
    return _table(entries, start, objects=False)


def objects_table(entries: dict[Any, Any], start: int) -> TensorTable | None:
    """The tensors of objects-layout ``objects`` entries, numbered from ``start``, when all of them are plain."""
    return _table(entries, start, objects=True)


def _table(entries: dict[Any, Any], start: int, objects: bool) -> TensorTable | None:
    values = list(entries.values())
    if not values or set(map(type, values)) != _DICT or set(map(len, values)) != ({3} if objects else {4}):
        return None
    try:
        if set(map(_format, values)) != _DENSE:
            return None
        components = list(map(_components, values))
        if set(map(type, components)) != _DICT or set(map(len, components)) != _ONE:
            return None
        data = list(map(_data, components))
        if set(map(type, data)) != _DICT or set(map(len, data)) != ({3} if objects else {2}):
            return None
        raw_dtypes = list(map(_dtype, data if objects else values))
        itemsizes = list(map((_SHORT_ITEMSIZE if objects else _V10_ITEMSIZE).__getitem__, raw_dtypes))
        shapes = list(map(_shape, values))
        offsets = list(map(_offset, data))
        lengths = list(map(_length, data))
    except (KeyError, TypeError):  # a key missing, a role other than data, an unknown or unhashable dtype
        return None
    names = list(entries)
    columns = None if set(map(type, names)) != _STR else plain_columns(shapes, itemsizes, offsets + lengths)
    if columns is None:
        return None
    dtypes = list(map(ZT_SHORT_TO_CANONICAL.__getitem__, raw_dtypes)) if objects else raw_dtypes
    return TensorTable(names, dtypes, *columns, 0, start, spelling="dense")
