"""The one check every plain (column-by-column) reader path makes on the dense entries it lists.

The plain paths of the safetensors, zTensor 1.x and v2 readers and of multi-file sets gather a manifest's
shapes, byte positions and element widths into columns and prove them sound with a fixed number of C-level
passes (``map``, ``set``, ``min``/``max``, list comparisons), never with Python code per entry. Whatever
they cannot prove here goes to the reader's checked path, which says what is wrong; so these limits only
choose the path, they never decide a verdict.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from itertools import chain
from operator import mul, sub
from typing import Any

U64_MAX = (1 << 64) - 1
#: Longer shapes take the checked path (bounds the work of the size product).
MAX_RANK = 64
_LIST, _INT = {list}, {int}


def plain_lengths(shapes: list[Any], widths: Iterable[int], firsts: list[Any], seconds: list[Any], *,
                  spans: bool = False) -> list[int] | None:
    """Byte lengths of dense entries when all of them are plain, else ``None``.

    Plain: every shape is a list of at most :data:`MAX_RANK` dimensions; every dimension and every value of
    ``firsts`` and ``seconds`` is an ``int`` (not a bool) in ``0..U64_MAX``; and each entry's element count
    times its width (bytes per element) is its length. The lengths are ``seconds`` (``firsts`` are offsets),
    or with ``spans`` ``second - first`` (``[begin, end]`` pairs). ``shapes`` must not be empty.
    """
    if set(map(type, shapes)) != _LIST or max(map(len, shapes)) > MAX_RANK:
        return None
    numbers = [*firsts, *seconds]
    numbers += chain.from_iterable(shapes)
    if set(map(type, numbers)) != _INT or min(numbers) < 0 or max(numbers) > U64_MAX:
        return None
    lengths = list(map(sub, seconds, firsts)) if spans else seconds
    return lengths if list(map(mul, map(math.prod, shapes), widths)) == lengths else None
