"""The tensor tree's columns and what each sorts tensors by (Qt-free: the session sorts, the views render)."""
from __future__ import annotations

import math
from collections.abc import Sequence
from enum import IntEnum
from typing import Any

from ztviewer.codec import Tensor
from ztviewer.codec.digest_state import DigestState
from ztviewer.codec.tensor_queries import plain_columns, tensor_names
from ztviewer.codec.tensor_table import PlainColumns

from .digest_states import PRIORITY, DigestStates
from .formatting import natural_key


class Column(IntEnum):
    NAME = 0
    DTYPE = 1
    SHAPE = 2
    LAYOUT = 3
    STORED = 4
    ENCODING = 5
    OFFSET = 6
    DIGEST = 7


COLUMN_COUNT = len(Column)
HEADERS = {Column.NAME: "Name", Column.DTYPE: "DType", Column.SHAPE: "Shape", Column.LAYOUT: "Layout",
           Column.STORED: "Stored size", Column.ENCODING: "Encoding", Column.OFFSET: "Offset",
           Column.DIGEST: "Digest"}

def tensor_encoding(tensor: Tensor) -> str:
    """The encodings of a tensor's parts, each once, in part order: ``zstd`` or ``raw, zstd``."""
    return ", ".join(dict.fromkeys(tensor.component_encodings()))


def sort_key(tensor: Tensor, column: Column, digests: DigestStates, name: str | None = None) -> Any:
    """What ``tensor`` sorts by in ``column`` (keys of one column compare with each other); by name, ``name`` when
    given (the name the tree shows, a pending rename applied), in natural order."""
    if column == Column.NAME:
        return natural_key(tensor.name if name is None else name)
    if column == Column.DTYPE:
        return tensor.dtype or ""
    if column == Column.SHAPE:
        return (tensor.numel if all(d >= 0 for d in tensor.shape) else -1, tuple(tensor.shape))
    if column == Column.LAYOUT:
        return tensor.layout or ""
    if column == Column.STORED:
        return tensor.stored_nbytes
    if column == Column.ENCODING:
        return tensor_encoding(tensor)
    if column == Column.OFFSET:
        span = tensor.byte_span()
        return span[0] if span else -1
    return PRIORITY[digests.of_tensor(tensor)]


def natural_order(names: Sequence[str]) -> list[int]:
    """Positions of ``names`` sorted by :func:`natural_key` (``layers.2`` before ``layers.10``), stable."""
    keys = list(map(natural_key, names))
    return sorted(range(len(keys)), key=keys.__getitem__)


def sort_keys(tensors: Sequence[Tensor], column: Column, digests: DigestStates,
              names: Sequence[str] | None = None) -> list[Any]:
    """:func:`sort_key` of every tensor, by position; by name, of ``names`` when given (the names shown, pending
    renames applied). A lazy table's entries not built yet are read from its columns (sorting 100,000 tensors
    builds none of them); those built answer for themselves."""
    if column == Column.NAME:
        return list(map(natural_key, tensor_names(tensors) if names is None else names))
    columns = plain_columns(tensors)
    if columns is None:
        return [sort_key(t, column, digests) for t in tensors]
    keys = _column_keys(columns, column)
    for position, tensor in columns.built.items():
        keys[position] = sort_key(tensor, column, digests)
    return keys


def _column_keys(c: PlainColumns, column: Column) -> list[Any]:
    """:func:`sort_key` of each entry as its table's columns describe it (a dense tensor in one raw part), for every
    column but the name (:func:`sort_keys` reads the names of a table and of a list alike)."""
    if column == Column.DTYPE:
        return [dtype or "" for dtype in c.dtypes]
    if column == Column.SHAPE:
        return [(math.prod(shape) if all(d >= 0 for d in shape) else -1, tuple(shape)) for shape in c.shapes]
    if column == Column.LAYOUT:
        return ["dense"] * len(c.names)
    if column == Column.STORED:
        return list(c.lengths)
    if column == Column.ENCODING:
        return ["raw"] * len(c.names)
    if column == Column.OFFSET:
        return list(c.offsets)
    none, unchecked = PRIORITY[DigestState.NONE], PRIORITY[DigestState.UNCHECKED]   # nobody verified them
    if c.digests is None:
        return [none] * len(c.names)
    return [none if digest is None else unchecked for digest in c.digests]
