"""Many well-formed safetensors headers at once, for sets of hundreds of shards.

The single-file reader (:mod:`ztviewer.codec.formats.safetensors`) costs some microseconds per call beyond the JSON
itself; over 1,000 small shards that is most of the opening time. Here the headers of a whole set are checked
together, with C-level ``map``/``set`` passes over all their entries, and their tensors are listed as one lazy
:class:`~.set_table.SetTable` with each one's shard already named. The path is conservative: it
accepts only headers the single-file reader's fast path accepts with no problem at all (no padding other than
spaces, no duplicate keys, string-only ``__metadata__``, valid dtypes and shapes, contiguous offsets exactly
covering the buffer), and answers ``None`` for a shard otherwise, which the caller then reads with the single-file
reader, so every problem is still reported by one implementation.
"""
from __future__ import annotations

from itertools import accumulate, chain, repeat
from operator import itemgetter
from typing import Any

import numpy as np

from ..dtypes import SAFETENSORS_TO_CANONICAL
from ..formats.safetensors import parse_json
from ..formats.safetensors_columns import ITEMSIZE, METADATA_KEY, no_key_dropped, plain_metadata
from ..plain_columns import plain_columns
from .set_table import SetTable
from .shard_view import ShardView

_dtype, _shape, _offsets = itemgetter("dtype"), itemgetter("shape"), itemgetter("data_offsets")
_flatten = chain.from_iterable
#: ``(names, canonical dtypes, shapes, begins, lengths)`` of entries in order (byte positions as ``uint64`` arrays).
EntryColumns = tuple[list[str], list[str], list[tuple[int, ...]], np.ndarray, np.ndarray]
_ABSENT = object()


def decode_headers(heads: list[bytes], sizes: list[int]
                   ) -> tuple[list[int], list[dict[str, str]], list[dict[str, Any]], bytes, int] | None:
    """``(header lengths, metadata, tensor entries, texts, keys)`` of plain headers held in ``heads`` (each the first
    bytes of a file of ``sizes``), else ``None``: each a JSON object, ``{`` … ``}`` with nothing after but spaces,
    whose ``__metadata__`` (if any) maps strings to strings. Headers with the same text (the shards of a dataset)
    are decoded once and share their decoded maps (read them, never change them). ``texts`` joins each distinct
    text once; ``keys`` is how many keys they hold in all when every entry holds three: fewer than the texts write
    means one was dropped as a duplicate (:func:`~ztviewer.codec.formats.safetensors_columns.no_key_dropped`:
    each text writes at least as many keys as it decodes to, so the sums are equal only when every text's are)."""
    lengths = [int.from_bytes(head[:8], "little") for head in heads]
    if 0 in lengths or any(8 + n > min(len(head), size) for n, head, size in zip(lengths, heads, sizes)):
        return None
    texts = [head[8:8 + n] for head, n in zip(heads, lengths)]
    distinct = list(dict.fromkeys(texts))
    if not all(map(bytes.startswith, distinct, repeat(b"{"))):
        return None
    if not all(map(bytes.endswith, map(bytes.rstrip, distinct, repeat(b" ")), repeat(b"}"))):  # spaces may follow
        return None
    try:
        groups: list[dict[str, Any]] = list(map(parse_json, distinct))
    except (ValueError, RecursionError):  # not JSON
        return None
    found = list(map(dict.pop, groups, repeat(METADATA_KEY), repeat(_ABSENT)))
    written = [value for value in found if value is not _ABSENT]
    if not all(map(plain_metadata, written)):
        return None
    metadata = found if len(written) == len(found) else [{} if value is _ABSENT else value for value in found]
    keys = len(written) + sum(map(len, written)) + 4 * sum(map(len, groups))  # a name and three keys per entry
    if len(distinct) < len(texts):
        position = dict(zip(distinct, range(len(distinct))))
        order = list(map(position.__getitem__, texts))
        groups, metadata = list(map(groups.__getitem__, order)), list(map(metadata.__getitem__, order))
    return lengths, metadata, groups, b"".join(distinct), keys


def read_set(heads: list[bytes], sizes: list[int], shards: list[str], sources: list[Any], first_index: int = 0
             ) -> tuple[SetTable, list[tuple[int, dict[str, str], int]]] | None:
    """Read several plain headers at once: one :class:`~.set_table.SetTable` of all their
    tensors in order (numbered from ``first_index``, carrying ``shard``, ``source`` and ``index_in_shard``), and
    per shard ``(header length, metadata, number of tensors)``; ``None`` when any header is not plain. A plain
    shard's tensors tile its byte buffer, so its data bytes are its size less the header."""
    decoded = decode_headers(heads, sizes)
    if decoded is None:
        return None
    lengths, metadata, groups, texts, keys = decoded
    counts = list(map(len, groups))
    buffer_lens = [size - 8 - n for n, size in zip(lengths, sizes)]
    flat = check_entries(groups, counts, buffer_lens)  # every entry holds three keys, or None
    if flat is None or not no_key_dropped(texts, keys):
        return None
    names, dtypes, shapes, begins, spans = flat
    offsets = begins + np.repeat(np.array(lengths, dtype=np.uint64) + np.uint64(8), counts)
    columns = (list(_flatten(map(repeat, shards, counts))), list(_flatten(map(repeat, sources, counts))),
               list(_flatten(map(range, counts))))
    table = SetTable(names, dtypes, shapes, offsets, spans, columns, first_index)
    return table, list(zip(lengths, metadata, counts))


def read_batch(heads: list[bytes], sizes: list[int], shards: list[str], sources: list[Any], first_index: int
               ) -> tuple[SetTable, list[tuple[int, dict[str, str], ShardView, int]]] | None:
    """:func:`read_set`'s table, and per shard ``(header length, metadata, tensors, data bytes)``, the tensors a
    :class:`~.shard_view.ShardView` of the table; ``None`` when any header is not plain."""
    found = read_set(heads, sizes, shards, sources, first_index)
    if found is None:
        return None
    table, headers = found
    result, start = [], 0
    for (n, metadata, count), size in zip(headers, sizes):
        result.append((n, metadata, ShardView(table, start, start + count), size - 8 - n))
        start += count
    return table, result


def check_entries(groups: list[dict[str, Any]], counts: list[int], buffer_lens: list[int]
                  ) -> tuple[list[str], list[str], list[tuple[int, ...]], np.ndarray, np.ndarray] | None:
    """Validate the entries of several headers together.

    Returns flat ``(names, canonical dtypes, shapes, begins, lengths)`` in order, or ``None`` when any entry
    of any group is unusual (:func:`~ztviewer.codec.plain_columns.plain_columns`) or a group's offsets do not
    exactly tile its buffer. Tiling is checked once for all groups: each group's offsets are shifted to its
    place in the concatenation of all buffers; when every tensor stays inside its own buffer, the shifted spans
    tile the concatenation exactly when each group tiles its own buffer.
    """
    cases = list(zip(map(id, groups), buffer_lens))
    if len(set(cases)) < len(cases):  # shards sharing a header and a size: check each such case once
        return _check_cases(groups, counts, buffer_lens, cases)
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


def _check_cases(groups: list[dict[str, Any]], counts: list[int], buffer_lens: list[int],
                 cases: list[tuple[int, int]]) -> EntryColumns | None:
    """:func:`check_entries` of groups that repeat (``cases``: each group's map and buffer length): each case is
    checked once, and its columns repeated for every group that is that case."""
    first: dict[tuple[int, int], int] = {}
    for i, case in enumerate(cases):
        first.setdefault(case, i)
    picked = list(first.values())
    flat = check_entries([groups[i] for i in picked], [counts[i] for i in picked], [buffer_lens[i] for i in picked])
    if flat is None:
        return None
    names, dtypes, shapes, begins, lengths = flat
    starts = list(accumulate((counts[i] for i in picked), initial=0))
    number = dict(zip(first, range(len(first))))
    order = np.fromiter(_flatten(range(starts[k], starts[k + 1]) for k in map(number.__getitem__, cases)),
                        dtype=np.intp, count=sum(counts))
    return (list(map(names.__getitem__, order)), list(map(dtypes.__getitem__, order)),
            list(map(shapes.__getitem__, order)), begins[order], lengths[order])


def _tiles(begins: np.ndarray, ends: np.ndarray, buffer_len: int) -> bool:
    if (begins[1:] < begins[:-1]).any():
        order = np.lexsort((ends, begins))  # by begin, then end
        begins, ends = begins[order], ends[order]
    return int(begins[0]) == 0 and int(ends[-1]) == buffer_len and bool((begins[1:] == ends[:-1]).all())
