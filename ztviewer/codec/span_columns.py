"""The spans of untouched plain tensors as whole columns, and the span arithmetic of the layout checks on them: which
spans meet another span or one of a few fixed ranges, worked out without building a tensor."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from operator import attrgetter, itemgetter

import numpy as np

from .model import Tensor
from .tensor_table import TensorTable

_data_of = attrgetter("_data")
_components_of = attrgetter("_components")
_first, _second = itemgetter(0), itemgetter(1)


def plain_spans(tensors: Sequence[Tensor]) -> tuple[list[int], list[int]] | None:
    """``(offsets, lengths)`` of the ``data`` components when every tensor is a :func:`~.model.dense_tensor` whose
    component was never touched (so nothing can have changed it), else ``None``. A :class:`TensorTable` answers
    from its columns."""
    if isinstance(tensors, TensorTable):
        spans = tensors.plain_spans()
        return None if spans is None else (spans[0].tolist(), spans[1].tolist())
    data = list(map(_data_of, tensors))
    if None in data or list(map(_components_of, tensors)).count(None) != len(tensors):
        return None
    return list(map(_first, data)), list(map(_second, data))


def span_columns(tensors: Sequence[Tensor]) -> tuple[np.ndarray, np.ndarray] | None:
    """``(offsets, lengths)`` as ``uint64`` columns of untouched plain tensors (:func:`plain_spans`), else
    ``None`` (also for a value outside 0 .. 2**64 - 1: the general pass says what is wrong with it)."""
    if isinstance(tensors, TensorTable):
        return tensors.plain_spans()
    spans = plain_spans(tensors)
    if spans is None:
        return None
    try:
        return np.asarray(spans[0], dtype=np.uint64), np.asarray(spans[1], dtype=np.uint64)
    except OverflowError:
        return None


def in_file_order(at: np.ndarray, offsets: np.ndarray, ends: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(at, starts, stops)`` of the spans at positions ``at``, sorted by start (stable; already sorted as
    writers lay files out, unless a manifest lists its tensors by name)."""
    starts, stops = offsets[at], ends[at]
    if len(starts) > 1 and (starts[1:] < starts[:-1]).any():
        order = np.argsort(starts, kind="stable")
        at, starts, stops = at[order], starts[order], stops[order]
    return at, starts, stops


def meeting(starts: np.ndarray, stops: np.ndarray, ranges: Iterable[tuple[int, int]]) -> np.ndarray:
    """For spans sorted by start: which meet another of them or one of the ``(start, end)`` ``ranges``."""
    meets = np.zeros(len(starts), dtype=bool)
    if len(starts) > 1:
        meets[1:] = np.maximum.accumulate(stops)[:-1] > starts[1:]    # reached by a span that starts before
        meets[:-1] |= starts[1:] < stops[:-1]                          # reaching the next start
    for low, high in ranges:
        meets |= (starts < np.uint64(high)) & (stops > np.uint64(low))
    return meets
