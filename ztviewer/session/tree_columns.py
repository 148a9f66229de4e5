"""The tensor tree's columns and what each sorts tensors by (Qt-free: the session sorts, the views render)."""
from __future__ import annotations

from enum import IntEnum
from typing import Any

from ztviewer.codec import Tensor

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


def sort_key(tensor: Tensor, column: Column, digests: DigestStates) -> Any:
    """What ``tensor`` sorts by in ``column`` (keys of one column compare with each other)."""
    if column == Column.NAME:
        return natural_key(tensor.name)
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
