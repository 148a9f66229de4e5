"""Many well-formed safetensors headers at once, for sets of hundreds of shards.

The single-file reader (:mod:`ztviewer.codec.formats.safetensors`) costs some microseconds per call beyond the JSON
itself; over 1,000 small shards that is most of the opening time. Here the headers of a whole set are checked
together, with C-level ``map``/``set`` passes over all their entries, and each shard's tensors are listed as a lazy
:class:`~ztviewer.codec.tensor_table.TensorTable` with their shard already named. The path is conservative: it
accepts only headers the single-file reader's fast path accepts with no problem at all (no padding other than
spaces, no duplicate keys, string-only ``__metadata__``, valid dtypes and shapes, contiguous offsets exactly
covering the buffer), and answers ``None`` for a shard otherwise, which the caller then reads with the single-file
reader, so every problem is still reported by one implementation.
"""
from __future__ import annotations

from itertools import accumulate, chain
from operator import itemgetter
from typing import Any

import numpy as np

from ..dtypes import SAFETENSORS_TO_CANONICAL
from ..formats.safetensors import split_plain_header
from ..formats.safetensors_columns import ITEMSIZE
from ..plain_columns import plain_columns
from ..tensor_table import TensorTable

_dtype, _shape, _offsets = itemgetter("dtype"), itemgetter("shape"), itemgetter("data_offsets")
_flatten = chain.from_iterable


def parse_header(head: bytes, size: int) -> tuple[int, dict[str, str], dict[str, Any]] | None:
    """``(header length, metadata, tensor entries)`` of a plain header held in ``head``, else ``None``.

    Decoded and checked by the single-file reader's :func:`~ztviewer.codec.formats.safetensors.split_plain_header`.
    """
    n = int.from_bytes(head[:8], "little")
    if n == 0 or 8 + n > len(head) or 8 + n > size:
        return None
    text = head[8:8 + n].rstrip(b" ")
    if text[:1] != b"{" or text[-1:] != b"}":
        return None
    split = split_plain_header(text)
    return None if split is None else (n, *split)


def read_batch(heads: list[bytes], sizes: list[int], shards: list[str], sources: list[Any], first_index: int
               ) -> list[tuple[int, dict[str, str], TensorTable, int]] | None:
    """Read several plain headers at once: per shard ``(header length, metadata, tensors, data bytes)``.

    Each shard's tensors are a :class:`~ztviewer.codec.tensor_table.TensorTable` (built when used), numbered
    from ``first_index`` across the batch and carrying ``shard``, ``source`` and ``index_in_shard``. ``None``
    when any header is not plain.
    """
    parsed = [parse_header(head, size) for head, size in zip(heads, sizes)]
    if None in parsed:
        return None
    groups = [p[2] for p in parsed]  # type: ignore[index]
    counts = list(map(len, groups))
    buffer_lens = [size - 8 - p[0] for p, size in zip(parsed, sizes)]  # type: ignore[index]
    flat = check_entries(groups, counts, buffer_lens)
    if flat is None:
        return None
    names, dtypes, shapes, begins, lengths = flat
    result, start = [], 0
    for (n, metadata, _), entries, shard, source in zip(parsed, counts, shards, sources):  # type: ignore[misc]
        stop = start + entries
        table = TensorTable(names[start:stop], dtypes[start:stop], shapes[start:stop], begins[start:stop],
                            lengths[start:stop], 8 + n, first_index + start, (shard, source))
        result.append((n, metadata, table, int(lengths[start:stop].sum())))
        start = stop
    return result


def check_entries(groups: list[dict[str, Any]], counts: list[int], buffer_lens: list[int]
                  ) -> tuple[list[str], list[str], list[tuple[int, ...]], np.ndarray, np.ndarray] | None:
    """Validate the entries of several headers together.

    Returns flat ``(names, canonical dtypes, shapes, begins, lengths)`` in order, or ``None`` when any entry
    of any group is unusual (:func:`~ztviewer.codec.plain_columns.plain_columns`) or a group's offsets do not
    exactly tile its buffer. Tiling is checked once for all groups: each group's offsets are shifted to its
    place in the concatenation of all buffers; when every tensor stays inside its own buffer, the shifted spans
    tile the concatenation exactly when each group tiles its own buffer.
    """
    names = list(_flatten(groups))
    infos = list(_flatten(map(dict.values, groups)))
    if not infos:
        empty = np.zeros(0, dtype=np.uint64)
        return ([], [], [], empty, empty) if not any(buffer_lens) else None
    if set(map(type, infos)) != {dict} or set(map(len, infos)) != {3}:
        return None
    try:
        dtypes, shapes, offsets = list(map(_dtype, infos)), list(map(_shape, infos)), list(map(_offsets, infos))
    except KeyError:
        return None
    if set(map(type, dtypes)) != {str} or not set(dtypes) <= ITEMSIZE.keys():
        return None
    if set(map(type, offsets)) != {list} or set(map(len, offsets)) != {2}:
        return None
    bounds = list(_flatten(offsets))
    columns = plain_columns(shapes, map(ITEMSIZE.__getitem__, dtypes), bounds, pairs=True, spans=True)
    if columns is None:
        return None
    tuples, begins, lengths = columns
    ends = begins + lengths
    if (ends > np.repeat(np.array(buffer_lens, dtype=np.uint64), counts)).any():
        return None
    shifts = np.repeat(np.array(list(accumulate(buffer_lens, initial=0))[:-1], dtype=np.uint64), counts)
    if not _tiles(begins + shifts, ends + shifts, sum(buffer_lens)):
        return None
    return names, list(map(SAFETENSORS_TO_CANONICAL.__getitem__, dtypes)), tuples, begins, lengths


def _tiles(begins: np.ndarray, ends: np.ndarray, buffer_len: int) -> bool:
    if (begins[1:] < begins[:-1]).any():
        order = np.lexsort((ends, begins))  # by begin, then end
        begins, ends = begins[order], ends[order]
    return int(begins[0]) == 0 and int(ends[-1]) == buffer_len and bool((begins[1:] == ends[:-1]).all())
