"""The plain path of the safetensors readers: a decoded header proven sound column by column.

A header as the reference writer writes it (every entry ``{dtype, shape, data_offsets}``, known dtypes, sizes
that match, offsets tiling the byte buffer in order) is checked with a fixed number of C-level passes over
all entries (``map``, ``set``, ``min``/``max``, list comparisons), never with Python code per entry, and
listed as a :class:`~ztviewer.codec.tensor_table.TensorTable`. Any entry that is unusual in any way makes it
answer ``None``: the checked path (:mod:`.safetensors_tensors`) then walks every entry and says what is wrong,
so the plain path only ever accepts what that path reads without a problem (tests hold the two together).
"""
from __future__ import annotations

import math
from itertools import chain
from operator import itemgetter, mul, sub
from typing import Any

from ..dtypes import DTYPES, SAFETENSORS_TO_CANONICAL
from ..tensor_table import Shard, TensorTable

U64_MAX = (1 << 64) - 1
MAX_NDIM = 64  # longer shapes take the checked path
ITEMSIZE = {st: DTYPES[canonical].itemsize for st, canonical in SAFETENSORS_TO_CANONICAL.items()}
_dtype, _shape, _offsets = itemgetter("dtype"), itemgetter("shape"), itemgetter("data_offsets")
_flatten = chain.from_iterable
_DICT, _LIST, _INT = {dict}, {list}, {int}


def plain_table(header: dict[str, Any], base: int, buffer_len: int, first_index: int = 0,
                shard: Shard | None = None) -> TensorTable | None:
    """The tensors of a header decoded into plain dicts (``__metadata__`` removed, no key repeated), or ``None``.

    ``base`` is the file offset of the byte buffer (8 + header length), ``buffer_len`` its length. The keys of
    an entry may come in any order. Tensors are numbered from ``first_index``; a ``shard`` ``(name, source)``
    names the shard of a multi-file set they belong to.
    """
    values = list(header.values())
    count = len(values)
    if not count:
        return TensorTable([], [], [], [], [], base, first_index, shard) if buffer_len == 0 else None
    if set(map(type, values)) != _DICT or set(map(len, values)) != {3}:
        return None
    try:
        raw_dtypes = list(map(_dtype, values))
        shapes = list(map(_shape, values))
        spans = list(map(_offsets, values))
        itemsizes = list(map(ITEMSIZE.__getitem__, raw_dtypes))  # KeyError: unknown; TypeError: unhashable
    except (KeyError, TypeError):
        return None
    if set(map(type, shapes)) != _LIST or set(map(type, spans)) != _LIST or set(map(len, spans)) != {2}:
        return None
    if max(map(len, shapes)) > MAX_NDIM:
        return None
    numbers = list(_flatten(spans))
    begins, ends = numbers[0::2], numbers[1::2]
    numbers += _flatten(shapes)
    if set(map(type, numbers)) != _INT or min(numbers) < 0 or max(numbers) > U64_MAX:
        return None
    lengths = list(map(sub, ends, begins))
    # in order and contiguous from 0 to the end of the buffer, each exactly as long as its shape needs
    if (begins[0] != 0 or ends[-1] != buffer_len or begins[1:] != ends[:-1]
            or list(map(mul, map(math.prod, shapes), itemsizes)) != lengths):
        return None
    dtypes = list(map(SAFETENSORS_TO_CANONICAL.__getitem__, raw_dtypes))
    return TensorTable(list(header), dtypes, shapes, begins, lengths, base, first_index, shard)
