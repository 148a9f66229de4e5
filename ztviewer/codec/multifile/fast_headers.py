"""Many well-formed safetensors headers at once, for sets of hundreds of shards.

The single-file reader (:mod:`ztviewer.codec.formats.safetensors`) costs some microseconds per call beyond
the JSON itself; over 1,000 small shards that is most of the opening time. Here the headers of a whole set
are checked together, with C-level ``map``/``set`` passes over all their entries, and the tensors are built
directly with their shard already named. The path is conservative: it accepts only headers the single-file
reader's fast path accepts with no problem at all (no padding other than spaces, no duplicate keys,
string-only ``__metadata__``, valid dtypes and shapes, contiguous offsets exactly covering the buffer), and
answers ``None`` for a shard otherwise, which the caller then reads with the single-file reader, so every
problem is still reported by one implementation.
"""
from __future__ import annotations

import math
from itertools import accumulate, chain, count, repeat
from operator import add, itemgetter, le, mul, sub
from typing import Any

from ..dtypes import DTYPES, SAFETENSORS_TO_CANONICAL
from ..formats.safetensors import split_plain_header
from ..model import Tensor, dense_tensor

U64_MAX = (1 << 64) - 1
MAX_NDIM = 64
_ITEMSIZE = {st: DTYPES[canonical].itemsize for st, canonical in SAFETENSORS_TO_CANONICAL.items()}
_first, _second = itemgetter(0), itemgetter(1)
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
               ) -> list[tuple[int, dict[str, str], list[Tensor], int]] | None:
    """Read several plain headers at once: per shard ``(header length, metadata, tensors, data bytes)``.

    Tensors are numbered from ``first_index`` across the batch and carry ``shard``, ``source`` and
    ``index_in_shard``. ``None`` when any header is not plain.
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
    offsets = list(map(add, begins, _per_entry([8 + p[0] for p in parsed], counts)))  # type: ignore[index]
    tensors = _build(names, dtypes, shapes, offsets, lengths, first_index, _per_entry(shards, counts),
                     _per_entry(sources, counts), list(chain.from_iterable(map(range, counts))))
    result, start = [], 0
    for (n, metadata, _), entries in zip(parsed, counts):  # type: ignore[misc]
        stop = start + entries
        result.append((n, metadata, tensors[start:stop], sum(lengths[start:stop])))
        start = stop
    return result


def _per_entry(values: list[Any], counts: list[int]) -> list[Any]:
    """Each shard's value repeated once per entry of that shard."""
    return list(chain.from_iterable(map(repeat, values, counts)))


def check_entries(groups: list[dict[str, Any]], counts: list[int], buffer_lens: list[int]
                  ) -> tuple[list[str], list[str], list[tuple[int, ...]], list[int], list[int]] | None:
    """Validate the entries of several headers together.

    Returns flat ``(names, canonical dtypes, shapes, begins, lengths)`` in order, or ``None`` when any entry
    of any group is unusual or a group's offsets do not exactly tile its buffer. Tiling is checked once for
    all groups: each group's offsets are shifted to its place in the concatenation of all buffers; when every
    tensor stays inside its own buffer, the shifted spans tile the concatenation exactly when each group
    tiles its own buffer.
    """
    names = list(_flatten(groups))
    infos = list(_flatten(map(dict.values, groups)))
    if not infos:
        return ([], [], [], [], []) if not any(buffer_lens) else None
    if set(map(type, infos)) != {dict} or set(map(len, infos)) != {3}:
        return None
    try:
        dtypes, shapes, offsets = list(map(_dtype, infos)), list(map(_shape, infos)), list(map(_offsets, infos))
    except KeyError:
        return None
    if set(map(type, dtypes)) != {str} or not set(dtypes) <= _ITEMSIZE.keys():
        return None
    if set(map(type, shapes)) != {list} or set(map(type, offsets)) != {list} or set(map(len, offsets)) != {2}:
        return None
    dims = list(chain.from_iterable(shapes))
    if dims and (set(map(type, dims)) != {int} or min(dims) < 0 or max(dims) > U64_MAX
                 or max(map(len, shapes)) > MAX_NDIM):
        return None
    bounds = list(_flatten(offsets))
    begins, ends = bounds[0::2], bounds[1::2]
    if set(map(type, begins)) | set(map(type, ends)) != {int} or min(begins) < 0:
        return None
    if not all(map(le, ends, _per_entry(buffer_lens, counts))):
        return None
    lengths = list(map(sub, ends, begins))
    if list(map(mul, map(math.prod, shapes), map(_ITEMSIZE.__getitem__, dtypes))) != lengths:
        return None
    shifts = _per_entry(list(accumulate(buffer_lens, initial=0)), counts)
    if not _tiles(list(map(add, begins, shifts)), list(map(add, ends, shifts)), sum(buffer_lens)):
        return None
    canonical = list(map(SAFETENSORS_TO_CANONICAL.__getitem__, dtypes))
    return names, canonical, list(map(tuple, shapes)), begins, lengths


def _tiles(begins: list[int], ends: list[int], buffer_len: int) -> bool:
    if not begins:
        return buffer_len == 0
    if begins != sorted(begins):
        spans = sorted(zip(begins, ends))
        begins, ends = list(map(_first, spans)), list(map(_second, spans))
    return begins[0] == 0 and ends[-1] == buffer_len and begins[1:] == ends[:-1]


def _build(names: list[str], dtypes: list[str], shapes: list[tuple[int, ...]], offsets: list[int],
           lengths: list[int], first_index: int, shards: list[str], sources: list[Any], in_shard: list[int]
           ) -> list[Tensor]:
    return [dense_tensor(name, dtype, shape, index, offset, length,
                         shard=shard, source=source, index_in_shard=i)
            for index, name, dtype, shape, offset, length, shard, source, i
            in zip(count(first_index), names, dtypes, shapes, offsets, lengths, shards, sources, in_shard)]
