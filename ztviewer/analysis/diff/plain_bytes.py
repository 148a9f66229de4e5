"""The stored bytes of many small plain pairs compared a run at a time.

A pair of one-part raw dense tensors described alike, with no attributes and no problems, is identical
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
#: a run's spans fall within this many bytes per side (plus the last span's length)
WINDOW = 1 << 20

CancelCheck = Callable[[], bool]


def _plain_part(tensor: Tensor) -> tuple[int, int, str] | None:
    """``(offset, length, digest kind)`` of a dense tensor stored in one raw little-endian ``data`` part in its own
    file, with no attributes or problems; else ``None``. A deferred part is not built."""
    if tensor._problems or tensor._attributes or tensor.layout != "dense":
        return None
    components = tensor._components
    if components is None:
        data = tensor._data
        if data is None or data[2] != "raw":
            return None
        offset, length, digest = data[0], data[1], data[3]
    else:
        part = components.get("data")
        if (len(components) != 1 or part is None or part.encoding != "raw" or part.byte_order != "little"
                or part.shard is not None):
            return None
        offset, length, digest = part.offset, part.length, part.digest
    return offset, length, digest.partition(":")[0] if digest else "none"


def _span(tf_a: TensorFile, a: Tensor, tf_b: TensorFile, b: Tensor) -> tuple[Source, Source, int, int, int] | None:
    """``(source A, source B, offset A, offset B, length)`` of a pair this module compares, else ``None``."""
    part_a, part_b = _plain_part(a), _plain_part(b)
    if part_a is None or part_b is None or part_a[1:] != part_b[1:] or part_a[1] > SMALL:
        return None
    if a.dtype != b.dtype or tuple(a.shape) != tuple(b.shape) or a.extra_value("packed") != b.extra_value("packed"):
        return None
    source_a, source_b = a.source or tf_a.source, b.source or tf_b.source
    (offset_a, length, _), offset_b = part_a, part_b[0]
    if (source_a is None or source_b is None or offset_a < 0 or offset_b < 0 or offset_a + length > source_a.size
            or offset_b + length > source_b.size):
        return None   # compare_pair says what is wrong
    return source_a, source_b, offset_a, offset_b, length


def _run_starts(sources: list[tuple[int, int]], offsets_a: np.ndarray, offsets_b: np.ndarray,
                lengths: np.ndarray) -> np.ndarray:
    """Where each run begins among the spans (in pair order): a span joins the run before it when it has the same
    sources and starts, on both sides, at or after the previous span's end and at most :data:`SMALL` bytes after
    it, and when the run stays within a :data:`WINDOW` (so no byte is read twice and gaps stay small)."""
    new = np.ones(len(lengths), dtype=bool)
    if len(lengths) > 1:
        same_sources = np.fromiter(map(tuple.__eq__, sources[1:], sources[:-1]), dtype=bool, count=len(lengths) - 1)
        gap_a = offsets_a[1:] - (offsets_a[:-1] + lengths[:-1])
        gap_b = offsets_b[1:] - (offsets_b[:-1] + lengths[:-1])
        new[1:] = ~same_sources | (gap_a < 0) | (gap_a > SMALL) | (gap_b < 0) | (gap_b > SMALL)
    segment = np.cumsum(new) - 1
    firsts = np.flatnonzero(new)
    for offsets in (offsets_a, offsets_b):
        window = (offsets + lengths - offsets[firsts][segment]) // WINDOW
        new[1:] |= window[1:] != window[:-1]
    return np.flatnonzero(new)


class PlainBytes:
    """Which of ``pairs`` hold the same stored bytes, for the small plain pairs described alike (see the module).

    :meth:`identical` reads a pair's run the first time one of its pairs is asked for; ``cancelled`` is polled
    before each read.
    """

    def __init__(self, tf_a: TensorFile, tf_b: TensorFile, pairs: Sequence[TensorPair],
                 cancelled: CancelCheck | None = None) -> None:
        self.cancelled = cancelled
        spans = [(position, span) for position, (a, b, _) in enumerate(pairs)
                 if a is not None and b is not None and (span := _span(tf_a, a, tf_b, b)) is not None]
        self._sources = [span[:2] for _, span in spans]
        self._positions = np.array([position for position, _ in spans], dtype=np.int64)
        self._offsets_a, self._offsets_b, self._lengths = (
            np.array([span[k] for _, span in spans], dtype=np.int64) for k in (2, 3, 4))
        self._starts = _run_starts([(id(a), id(b)) for a, b in self._sources], self._offsets_a, self._offsets_b,
                                   self._lengths)
        bounds = np.append(self._starts, len(spans))
        run_of = np.repeat(np.arange(len(self._starts)), np.diff(bounds))
        self._run_of: dict[int, int] = dict(zip(self._positions.tolist(), run_of.tolist()))
        self._identical: dict[int, set[int]] = {}

    def identical(self, position: int) -> bool:
        """Whether the pair at ``position`` is a small plain pair whose stored bytes are the same; ``False`` also
        when it is not such a pair (then ask :func:`~.engine.compare_pair`)."""
        run = self._run_of.get(position)
        if run is None:
            return False
        found = self._identical.get(run)
        if found is None:
            if self.cancelled is not None and self.cancelled():
                raise Cancelled()
            found = self._identical[run] = self._compare(run)
        return position in found

    def _compare(self, run: int) -> set[int]:
        """The positions of the run's pairs whose stored bytes are the same (none when a side cannot be read)."""
        first = int(self._starts[run])
        stop = int(self._starts[run + 1]) if run + 1 < len(self._starts) else len(self._positions)
        positions, lengths = self._positions[first:stop], self._lengths[first:stop]
        offsets_a, offsets_b = self._offsets_a[first:stop], self._offsets_b[first:stop]
        source_a, source_b = self._sources[first]
        low_a, low_b = int(offsets_a[0]), int(offsets_b[0])
        size_a, size_b = int(offsets_a[-1] + lengths[-1]) - low_a, int(offsets_b[-1] + lengths[-1]) - low_b
        try:
            block_a = source_a.read(low_a, size_a, "component")
            same_range = source_b is source_a and (low_b, size_b) == (low_a, size_a)
            block_b = block_a if same_range else source_b.read(low_b, size_b, "component")
        except CodecError:
            return set()   # compare_pair reads each pair on its own and says which part is out of reach
        starts_a, starts_b = offsets_a - low_a, offsets_b - low_b
        if size_a == size_b and np.array_equal(starts_a, starts_b):
            if block_a == block_b:
                return set(positions.tolist())
            differing = np.frombuffer(block_a, np.uint8) != np.frombuffer(block_b, np.uint8)
            before = np.concatenate(([0], np.cumsum(differing, dtype=np.int64)))   # differing bytes before each
            return set(positions[before[starts_a + lengths] == before[starts_a]].tolist())
        return {position for position, start_a, start_b, length in zip(positions.tolist(), starts_a.tolist(),
                                                                      starts_b.tolist(), lengths.tolist())
                if block_a[start_a:start_a + length] == block_b[start_b:start_b + length]}
