"""The byte layout of a whole file for the file map, the hex view's tints and the properties panel.

Plain Python over the codec model (no Qt), so it can run on the worker that opens the file. Every byte of
the file belongs to exactly one :class:`Segment`: a structural region (magic, header, manifest, footer), a
component blob, an overlap of several owners, or an unowned range that
:func:`ztviewer.codec.layout_check.find_gaps` classifies as zero padding or a gap.
"""
from __future__ import annotations

import bisect
import heapq
from dataclasses import dataclass, field

from ztviewer.codec import Region, Tensor, TensorFile
from ztviewer.codec.layout_check import find_gaps

UNOWNED_KINDS = ("padding", "gap", "unparsed")
MAX_ALIGNMENT = 1 << 16
FORMAT_ALIGNMENT = {"zt": 64}


@dataclass(frozen=True, slots=True)
class Owner:
    """Who claims a byte range: a structural region (``tensor_index is None``) or a tensor's component."""

    kind: str
    label: str
    tensor_index: int | None = None
    role: str | None = None


@dataclass(frozen=True, slots=True)
class Segment:
    kind: str            # magic | header | manifest | footer | <other region kind> | blob | padding | gap | overlap
    offset: int
    length: int
    owners: tuple[Owner, ...] = ()

    @property
    def end(self) -> int:
        return self.offset + self.length

    @property
    def owner(self) -> Owner | None:
        return self.owners[0] if self.owners else None

    def describe(self) -> str:
        span = f"[0x{self.offset:X}, 0x{self.end:X}) {self.length:,} bytes"
        if self.kind == "overlap":
            return f"overlap of {', '.join(o.label for o in self.owners)}: {span}"
        if self.owner is not None:
            return f"{self.owner.label}: {span}"
        what = {"padding": "zero padding", "unparsed": "bytes the reader could not parse"}.get(
            self.kind, "gap (bytes no entry claims)")
        return f"{what}: {span}"


@dataclass(slots=True)
class FileLayout:
    size: int
    segments: list[Segment] = field(default_factory=list)
    _starts: list[int] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        self._starts = [s.offset for s in self.segments]

    def segment_at(self, offset: int) -> Segment | None:
        i = bisect.bisect_right(self._starts, offset) - 1
        if 0 <= i < len(self.segments) and offset < self.segments[i].end:
            return self.segments[i]
        return None

    def segments_in(self, offset: int, end: int) -> list[Segment]:
        """Segments meeting ``[offset, end)``, in file order."""
        i = max(0, bisect.bisect_right(self._starts, offset) - 1)
        j = bisect.bisect_left(self._starts, end)
        return [s for s in self.segments[i:j] if s.end > offset]

    def padding_after(self, end: int) -> int:
        """Unowned bytes (padding or gap) that directly follow ``end``."""
        segment = self.segment_at(end)
        if segment is None or segment.kind not in UNOWNED_KINDS:
            return 0
        return segment.end - end

    def count(self, kind: str) -> int:
        return sum(1 for s in self.segments if s.kind == kind)


def stored_here(tf: TensorFile, tensor: Tensor) -> bool:
    """Whether a tensor's bytes are in this file (not in another shard of a multi-file set)."""
    source = tensor.extra.get("source")
    return source is None or source is tf.source


def padding_alignment(tf: TensorFile) -> int:
    """Alignment up to which zero bytes after a range count as padding: the largest power of two (up to
    64 KiB) dividing every non-zero component offset, and at least the format's own (64 for zTensor)."""
    alignment = MAX_ALIGNMENT
    for tensor in tf.tensors:
        for component in tensor.components.values():
            if component.offset > 0 and component.length:
                alignment = min(alignment, component.offset & -component.offset)
    return max(alignment, FORMAT_ALIGNMENT.get(tf.format, 1))


def build_layout(tf: TensorFile) -> FileLayout:
    """Split the file into segments from its regions and components (clipped to the file size)."""
    size = tf.size
    ranges: list[tuple[int, int, Owner]] = []
    for region in tf.regions:
        ranges.append((region.offset, region.end, Owner(region.kind, region.label or region.kind)))
    for tensor in tf.tensors:
        if not stored_here(tf, tensor):
            continue
        for role, component in tensor.components.items():
            label = tensor.name if role == "data" and len(tensor.components) == 1 else f"{tensor.name} · {role}"
            ranges.append((component.offset, component.end, Owner("blob", label, tensor.index, role)))
    ranges = [(max(0, a), min(b, size), o) for a, b, o in ranges if min(b, size) > max(0, a)]
    ranges.sort(key=lambda r: (r[0], r[1]))
    if all(a[1] <= b[0] for a, b in zip(ranges, ranges[1:], strict=False)):    # the usual case: nothing overlaps
        segments = [Segment(owner.kind, start, end - start, (owner,)) for start, end, owner in ranges]
    else:
        segments = list(_owned_segments(ranges, size))
    if tf.source is not None:
        owned = [(s.offset, s.end) for s in segments]
        gaps = find_gaps(_owned_only(tf, owned), tf.source, padding_alignment(tf))
        # In a file the reader could not parse, unclaimed bytes are simply not understood.
        segments += [Segment(g.kind if tf.readable else "unparsed", g.offset, g.length) for g in gaps]
    segments.sort(key=lambda s: s.offset)
    return FileLayout(size, segments)


def _owned_only(tf: TensorFile, owned: list[tuple[int, int]]) -> TensorFile:
    """A stand-in whose regions are exactly the owned ranges (so shards elsewhere do not count)."""
    return TensorFile(tf.path, tf.format, regions=[Region("owned", a, b - a) for a, b in owned], source=tf.source)


def _owned_segments(ranges: list[tuple[int, int, Owner]], size: int):
    points = sorted({0, size, *(a for a, _, _ in ranges), *(b for _, b, _ in ranges)})
    active: dict[int, Owner] = {}
    ends: list[tuple[int, int]] = []
    nxt = 0
    for p, q in zip(points, points[1:], strict=False):
        while ends and ends[0][0] <= p:
            active.pop(heapq.heappop(ends)[1], None)
        while nxt < len(ranges) and ranges[nxt][0] <= p:
            active[nxt] = ranges[nxt][2]
            heapq.heappush(ends, (ranges[nxt][1], nxt))
            nxt += 1
        if len(active) == 1:
            owner = next(iter(active.values()))
            yield Segment(owner.kind, p, q - p, (owner,))
        elif active:
            yield Segment("overlap", p, q - p, tuple(active[k] for k in sorted(active)))
