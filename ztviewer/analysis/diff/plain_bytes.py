"""The stored bytes of many small plain pairs compared a run at a time.

A pair of untouched one-part raw dense tensors described alike, with no attributes and no problems, is identical
exactly when its stored bytes are: :func:`~.engine.compare_pair` would find nothing else to say. Such pairs are
gathered, in pair order, into runs of neighbouring spans; each run is read with one positional read per side and
compared at once, instead of two reads and a comparison object per pair (a file of 100,000 one-element tensors
against itself or a copy). A run is read only when the first of its pairs is asked for, so pairs still come one
at a time. Every pair not found identical here (different bytes, a run that cannot be read) is left to
``compare_pair``, which says what differs and where.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ztviewer.codec.errors import Cancelled, CodecError
from ztviewer.codec.model import Tensor, TensorFile
from ztviewer.codec.source import Source

from .pairing import TensorPair

#: parts stored in more bytes than this are compared pair by pair (their reads cost more than the pair's overhead)
SMALL = 64 << 10
#: at most this many bytes read per side and run
WINDOW = 1 << 20
#: a run may read up to this many bytes, or four times the bytes of its parts, whichever is more (gaps between parts)
SLACK = 64 << 10

CancelCheck = Callable[[], bool]
#: (position in the pairs, offset in A, offset in B, length)
_Span = tuple[int, int, int, int]


def _plain_part(tensor: Tensor) -> tuple[int, int, str] | None:
    """``(offset, length, digest kind)`` of an untouched :func:`~ztviewer.codec.model.dense_tensor` stored raw, with
    no attributes or problems; else ``None``."""
    data = tensor._data
    if (data is None or tensor._components is not None or tensor._problems or tensor._attributes
            or tensor.layout != "dense" or data[2] != "raw"):
        return None
    digest = data[3]
    return data[0], data[1], digest.partition(":")[0] if digest else "none"


def _span(tf_a: TensorFile, a: Tensor, tf_b: TensorFile, b: Tensor) -> tuple[Source, Source, int, int, int] | None:
    """``(source A, source B, offset A, offset B, length)`` of a pair this module compares, else ``None``."""
    part_a, part_b = _plain_part(a), _plain_part(b)
    if part_a is None or part_b is None or part_a[1:] != part_b[1:] or part_a[1] > SMALL:
        return None
    if a.dtype != b.dtype or tuple(a.shape) != tuple(b.shape) or a.extra_value("packed") != b.extra_value("packed"):
        return None
    source_a, source_b = a.source or tf_a.source, b.source or tf_b.source
    if source_a is None or source_b is None:
        return None
    return source_a, source_b, part_a[0], part_b[0], part_a[1]


class _Run:
    __slots__ = ("source_a", "source_b", "spans", "low_a", "high_a", "low_b", "high_b", "stored", "identical")

    def __init__(self, source_a: Source, source_b: Source) -> None:
        self.source_a, self.source_b = source_a, source_b
        self.spans: list[_Span] = []
        self.low_a = self.low_b = 1 << 64
        self.high_a = self.high_b = self.stored = 0
        self.identical: set[int] | None = None

    def takes(self, source_a: Source, source_b: Source, offset_a: int, offset_b: int, length: int) -> bool:
        """Whether a span can join this run (same sources, windows small enough)."""
        if source_a is not self.source_a or source_b is not self.source_b:
            return False
        limit = min(WINDOW, max(SLACK, 4 * (self.stored + length)))
        return (max(self.high_a, offset_a + length) - min(self.low_a, offset_a) <= limit
                and max(self.high_b, offset_b + length) - min(self.low_b, offset_b) <= limit)

    def add(self, position: int, offset_a: int, offset_b: int, length: int) -> None:
        self.spans.append((position, offset_a, offset_b, length))
        self.low_a, self.high_a = min(self.low_a, offset_a), max(self.high_a, offset_a + length)
        self.low_b, self.high_b = min(self.low_b, offset_b), max(self.high_b, offset_b + length)
        self.stored += length

    def compare(self) -> set[int]:
        """The positions of the pairs whose stored bytes are the same (none when a side cannot be read)."""
        try:
            block_a = self.source_a.read(self.low_a, self.high_a - self.low_a, "component")
            same_range = self.source_b is self.source_a and (self.low_b, self.high_b) == (self.low_a, self.high_a)
            block_b = block_a if same_range else self.source_b.read(self.low_b, self.high_b - self.low_b, "component")
        except CodecError:
            return set()   # compare_pair reads each pair on its own and says which part is out of reach
        positions, offsets_a, offsets_b, lengths = (np.array(column, dtype=np.int64) for column in zip(*self.spans))
        starts_a, starts_b = offsets_a - self.low_a, offsets_b - self.low_b
        if len(block_a) == len(block_b) and np.array_equal(starts_a, starts_b):
            if block_a == block_b:
                return set(positions.tolist())
            differing = np.frombuffer(block_a, np.uint8) != np.frombuffer(block_b, np.uint8)
            before = np.concatenate(([0], np.cumsum(differing, dtype=np.int64)))   # differing bytes before each
            same = before[starts_a + lengths] == before[starts_a]
            return set(positions[same].tolist())
        return {position for position, start_a, start_b, length in zip(positions.tolist(), starts_a.tolist(),
                                                                      starts_b.tolist(), lengths.tolist())
                if block_a[start_a:start_a + length] == block_b[start_b:start_b + length]}


class PlainBytes:
    """Which of ``pairs`` hold the same stored bytes, for the small plain pairs described alike (see the module).

    :meth:`identical` reads a pair's run the first time one of its pairs is asked for; ``cancelled`` is polled
    before each read.
    """

    def __init__(self, tf_a: TensorFile, tf_b: TensorFile, pairs: Sequence[TensorPair],
                 cancelled: CancelCheck | None = None) -> None:
        self.cancelled = cancelled
        self._run_of: dict[int, _Run] = {}
        run: _Run | None = None
        for position, (a, b, _renamed) in enumerate(pairs):
            if a is None or b is None:
                continue
            span = _span(tf_a, a, tf_b, b)
            if span is None:
                continue
            source_a, source_b, offset_a, offset_b, length = span
            if run is None or not run.takes(*span):
                run = _Run(source_a, source_b)
            run.add(position, offset_a, offset_b, length)
            self._run_of[position] = run

    def identical(self, position: int) -> bool:
        """Whether the pair at ``position`` is a small plain pair whose stored bytes are the same; ``False`` also
        when it is not such a pair (then ask :func:`~.engine.compare_pair`)."""
        run = self._run_of.get(position)
        if run is None:
            return False
        if run.identical is None:
            if self.cancelled is not None and self.cancelled():
                raise Cancelled()
            run.identical, run.spans = run.compare(), []
        return position in run.identical
