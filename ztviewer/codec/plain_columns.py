"""The one check every plain (column-by-column) reader path makes on the dense entries it lists.

The plain paths of the safetensors, zTensor 1.x and v2 readers and of multi-file sets gather a manifest's
shapes, byte positions and element widths into columns and prove them sound with a fixed number of C-level
passes (``map``, ``set``, numpy), never with Python code per entry. Whatever they cannot prove here goes to the
reader's checked path, which says what is wrong; so these limits only choose the path, they never decide a
verdict.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from itertools import chain
from operator import mul
from typing import Any

import numpy as np

U64_MAX = (1 << 64) - 1
#: Longer shapes take the checked path (bounds the work of the size product).
MAX_RANK = 64
_LIST, _INT = {list}, {int}

#: ``(shapes, offsets, lengths)``: one shared tuple per distinct shape, byte positions as ``uint64`` arrays.
Columns = tuple[list[tuple[int, ...]], np.ndarray, np.ndarray]


def plain_columns(shapes: list[Any], widths: Iterable[int], numbers: list[Any], *, pairs: bool = False,
                  spans: bool = False) -> Columns | None:
    """The shapes, offsets and byte lengths of dense entries when all of them are plain, else ``None``.

    ``numbers`` holds two numbers per entry: every entry's first, then every entry's second, or with ``pairs``
    entry by entry (``[first, second, first, second, …]``, as flattened ``[offset, length]`` pairs). The firsts are
    the offsets; the seconds are the lengths, or with ``spans`` (``[begin, end]``) the ends, not below the begins.
    Plain: every shape is a list of at most :data:`MAX_RANK` dimensions; every dimension and every number is an
    ``int`` (not a bool) in ``0..U64_MAX``; and each entry's element count times its width (bytes per element) is
    its length. ``shapes`` must not be empty. Range, rank and element count are worked out once per distinct
    shape (a manifest repeats a few).
    """
    if set(map(type, shapes)) != _LIST or not set(map(type, chain.from_iterable(shapes))) <= _INT:
        return None
    if set(map(type, numbers)) != _INT or len(numbers) != 2 * len(shapes):
        return None
    try:
        positions = np.array(numbers, dtype=np.uint64)
    except OverflowError:  # negative, or past U64_MAX
        return None
    if pairs:
        offsets, lengths = positions[0::2].copy(), positions[1::2].copy()
    else:
        offsets, lengths = positions[:len(shapes)], positions[len(shapes):]
    if spans:
        if (lengths < offsets).any():
            return None
        lengths = lengths - offsets
    tuples = list(map(tuple, shapes))
    shape_of = dict(zip(tuples, tuples))  # every dimension is an int: equal tuples are the same shape
    count_of = {}
    for shape in shape_of:
        if len(shape) > MAX_RANK or (shape and (min(shape) < 0 or max(shape) > U64_MAX)):
            return None
        count_of[shape] = math.prod(shape)
    try:
        sizes = np.array(list(map(mul, map(count_of.__getitem__, tuples), widths)), dtype=np.uint64)
    except OverflowError:  # a size past U64_MAX: no length can match it
        return None
    if not np.array_equal(sizes, lengths):
        return None
    return list(map(shape_of.__getitem__, tuples)), offsets, lengths
