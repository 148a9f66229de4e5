"""The byte layout of a whole file for the file map, the hex view's tints and the properties panel.

Plain Python over the codec model (no Qt), so it can run on the worker that opens the file. Every byte of
the file belongs to exactly one :class:`Segment`: a structural region (magic, header, manifest, footer), a
component blob, an overlap of several owners, or an unowned range that is zero padding or a gap (as
:func:`ztviewer.codec.layout_check.find_gaps` classifies them).

A 10,000-tensor file has some 20,000 segments, so :class:`FileLayout` keeps them as numpy columns and makes
:class:`Segment` objects only for the ones asked for.
"""
from __future__ import annotations

import bisect
import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from operator import add

import numpy as np

from ztviewer.codec import Tensor, TensorFile
from ztviewer.codec.span_columns import span_columns
from ztviewer.codec.tensor_table import TensorTable

from .layout_padding import UNOWNED_KINDS, Spans, unowned_columns
from .zt_v2_facts import seek_table_length, seekable_parts


@dataclass(frozen=True, slots=True)
class Owner:
    """Who claims a byte range: a structural region (``tensor_index is None``) or a tensor's component."""

    kind: str
    label: str
    tensor_index: int | None = None
    role: str | None = None


@dataclass(frozen=True, slots=True)
class Segment:
    kind: str            # magic | header | manifest | footer | <other region kind> | blob | shared | seek-table
    #                      | padding | gap | overlap
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
        if len(self.owners) > 1:
            what = "blob" if self.kind == "shared" else self.owners[0].label.split(" of ", 1)[0]
            return f"{what} shared by {', '.join(o.label.split(' of ', 1)[-1] for o in self.owners)}: {span}"
        if self.owner is not None:
            return f"{self.owner.label}: {span}"
        what = {"padding": "zero padding", "unparsed": "bytes the reader could not parse"}.get(
            self.kind, "gap (bytes no entry claims)")
        return f"{what}: {span}"


class Owners:
    """The owners of segments by number: ``0 … len(blobs) - 1`` are component blobs, whose :class:`Owner`
    is made from the tensor when first asked for; higher numbers are given owner tuples (regions, overlaps)."""

    def __init__(self, blob_tensors: Sequence[Tensor], blob_roles: list[str], given: list[tuple[Owner, ...]]) -> None:
        self._tensors = blob_tensors
        self._roles = blob_roles
        self._given = given

    def add(self, owners: tuple[Owner, ...]) -> int:
        self._given.append(owners)
        return len(self._tensors) + len(self._given) - 1

    def tensor_index(self, number: int) -> int | None:
        """The tensor index of owner ``number`` (of its first owner; ``None`` for a structural region), without
        building the tensor of a blob listed in a table."""
        tensors = self._tensors
        if 0 <= number < len(tensors):
            return tensors.index_at(number) if isinstance(tensors, TensorTable) else tensors[number].index
        owners = self[number]
        return owners[0].tensor_index if owners else None

    def __getitem__(self, number: int) -> tuple[Owner, ...]:
        if number < 0:
            return ()
        if number >= len(self._tensors):
            return self._given[number - len(self._tensors)]
        tensor, role = self._tensors[number], self._roles[number]
        label = tensor.name if role == "data" and tensor.component_count == 1 else f"{tensor.name} · {role}"
        return (Owner("blob", label, tensor.index, role),)


class FileLayout:
    """Every byte of a file as segments in file order: ``offsets``, ``ends``, ``kind_codes`` (into
    ``kind_names``) and ``owner_numbers`` (into :class:`Owners`) are numpy columns, one row per segment."""

    def __init__(self, size: int, offsets: np.ndarray, ends: np.ndarray, kind_codes: np.ndarray,
                 kind_names: list[str], owner_numbers: np.ndarray, owners: Owners) -> None:
        self.size = size
        self.offsets, self.ends = offsets, ends
        self.kind_codes, self.kind_names = kind_codes, kind_names
        self.owner_numbers = owner_numbers
        self.owners = owners
        self._starts: list[int] = offsets.tolist()
        self._ends: list[int] = ends.tolist()
        self._segments: list[Segment] | None = None

    def __len__(self) -> int:
        return len(self._starts)

    def segment(self, i: int) -> Segment:
        return Segment(self.kind_names[self.kind_codes[i]], self._starts[i], self._ends[i] - self._starts[i],
                       self.owners[int(self.owner_numbers[i])])

    def kind_and_tensor(self, i: int) -> tuple[str, int | None]:
        """Segment ``i``'s kind and its owner's tensor index (what colours it in the file map), without making the
        segment and its owners."""
        return self.kind_names[self.kind_codes[i]], self.owners.tensor_index(int(self.owner_numbers[i]))

    @property
    def segments(self) -> list[Segment]:
        if self._segments is None:
            self._segments = [self.segment(i) for i in range(len(self))]
        return self._segments

    def segment_at(self, offset: int) -> Segment | None:
        i = bisect.bisect_right(self._starts, offset) - 1
        if 0 <= i < len(self) and offset < self._ends[i]:
            return self.segment(i)
        return None

    def segments_in(self, offset: int, end: int) -> list[Segment]:
        """Segments meeting ``[offset, end)``, in file order."""
        i = max(0, bisect.bisect_right(self._starts, offset) - 1)
        j = bisect.bisect_left(self._starts, end)
        return [self.segment(k) for k in range(i, j) if self._ends[k] > offset]

    def padding_after(self, end: int) -> int:
        """Unowned bytes (padding or gap) that directly follow ``end``."""
        segment = self.segment_at(end)
        if segment is None or segment.kind not in UNOWNED_KINDS:
            return 0
        return segment.end - end

    def kinds(self) -> set[str]:
        present = np.bincount(self.kind_codes, minlength=len(self.kind_names))
        return {name for name, count in zip(self.kind_names, present.tolist(), strict=True) if count}

    def totals(self, kind: str) -> tuple[int, int]:
        """(number of segments, bytes) of one kind."""
        if kind not in self.kind_names:
            return 0, 0
        mask = self.kind_codes == self.kind_names.index(kind)
        return int(mask.sum()), int((self.ends[mask] - self.offsets[mask]).sum())

    def count(self, kind: str) -> int:
        return self.totals(kind)[0]


def stored_here(tf: TensorFile, tensor: Tensor) -> bool:
    """Whether a tensor's bytes are in this file (not in another shard of a multi-file set)."""
    source = tensor.source
    return source is None or source is tf.source


def build_layout(tf: TensorFile) -> FileLayout:
    """Split the file into segments from its regions and components (clipped to the file size)."""
    size = tf.size
    kind_names = ["blob", *UNOWNED_KINDS, "overlap"]
    spans = span_columns(tf.tensors)   # once: asking a table walks every tensor built so far
    starts, ends, kinds, numbers, owners = _owned_ranges(tf, kind_names, spans)
    keep = ends > starts
    starts, ends, kinds, numbers = starts[keep], ends[keep], kinds[keep], numbers[keep]
    order = np.lexsort((ends, starts))
    starts, ends, kinds, numbers = starts[order], ends[order], kinds[order], numbers[order]
    if np.any(ends[:-1] > starts[1:]):
        starts, ends, kinds, numbers = _split_overlaps(starts, ends, kinds, numbers, owners, kind_names)
    if tf.source is not None:
        gaps = unowned_columns(tf, starts, ends, kind_names, spans)
        starts, ends, kinds, numbers = (np.concatenate(pair) for pair in zip((starts, ends, kinds, numbers), gaps))
        order = np.argsort(starts, kind="stable")
        starts, ends, kinds, numbers = starts[order], ends[order], kinds[order], numbers[order]
    return FileLayout(size, starts, ends, kinds, kind_names, numbers, owners)


def _owned_ranges(tf: TensorFile, kind_names: list[str], spans: Spans | None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Owners]:
    """Columns of the regions (first), the ranges inside parts (seek tables) and the component blobs,
    unclipped and unsorted, with their owners (``spans``: :func:`span_columns` of every tensor)."""
    blob_tensors, blob_roles, blob_starts, blob_ends = _blobs(tf, spans)
    owners = Owners(blob_tensors, blob_roles, [])
    inner = _inner_ranges(tf, blob_tensors, blob_roles, blob_ends, owners)
    region_numbers = [owners.add((Owner(r.kind, r.label or r.kind),)) for r in tf.regions] + [n for *_, n in inner]
    region_kinds = [_code(kind_names, r.kind) for r in tf.regions] + [_code(kind_names, k) for _, _, k, _ in inner]
    size = tf.size
    starts = _clipped_column([r.offset for r in tf.regions] + [s for s, *_ in inner] + blob_starts, size)
    ends = _clipped_column([r.end for r in tf.regions] + [e for _, e, *_ in inner] + blob_ends, size)
    kinds = np.concatenate([np.array(region_kinds, np.int16), np.zeros(len(blob_starts), np.int16)])
    numbers = np.concatenate([np.array(region_numbers, np.int64), np.arange(len(blob_starts), dtype=np.int64)])
    return starts, ends, kinds, numbers, owners


def _inner_ranges(tf: TensorFile, tensors: Sequence[Tensor], roles: list[str], ends: list[int],
                  owners: Owners) -> list[tuple[int, int, str, int]]:
    """The seek table at the end of each zstd-seekable part as its own range (start, end, kind, owner number);
    the part's blob is shortened to end where its table starts."""
    parts = seekable_parts(tf)
    if not parts:
        return []
    place = {(id(t), r): i for i, (t, r) in enumerate(zip(tensors, roles))}
    inner = []
    for tensor, component in parts:
        i = place.get((id(tensor), component.role))
        length = seek_table_length(tf, tensor, component) if i is not None else None
        if i is None or length is None:
            continue
        ends[i] = component.end - length
        label = f"seek table of {owners[i][0].label}"
        inner.append((ends[i], component.end, "seek-table",
                      owners.add((Owner("seek-table", label, tensor.index, component.role),))))
    return inner


def _blobs(tf: TensorFile, spans: Spans | None) -> tuple[Sequence[Tensor], list[str], list[int], list[int]]:
    """Tensor, role, start and end of every component stored in this file. Plain tensors whose ``data``
    component was never built are read as columns (``spans``, :func:`span_columns` of every tensor), without
    building it; a table of them all in this file is read without building a tensor."""
    every = tf.tensors
    if isinstance(every, TensorTable) and every.stored_in(tf.source):
        here: Sequence[Tensor] = every
    else:
        here = [t for t in every if stored_here(tf, t)]
        if len(here) != len(every):
            spans = span_columns(here)
    if spans is not None:
        offsets, lengths = spans[0].tolist(), spans[1].tolist()
        return here, ["data"] * len(offsets), offsets, list(map(add, offsets, lengths))
    tensors: list[Tensor] = []
    roles: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for tensor in here:
        for role, component in tensor.components.items():
            tensors.append(tensor)
            roles.append(role)
            starts.append(component.offset)
            ends.append(component.offset + component.length)
    return tensors, roles, starts, ends


def _clipped_column(positions: list[int], size: int) -> np.ndarray:
    """Byte positions clipped to ``[0, size]`` as int64 (a hostile manifest may name offsets past 2**63)."""
    try:
        return np.clip(np.array(positions, np.int64), 0, size)
    except OverflowError:
        return np.array([min(max(p, 0), size) for p in positions], np.int64)


def _code(kind_names: list[str], kind: str) -> int:
    if kind not in kind_names:
        kind_names.append(kind)
    return kind_names.index(kind)


def _split_overlaps(starts: np.ndarray, ends: np.ndarray, kinds: np.ndarray, numbers: np.ndarray, owners: Owners,
                    kind_names: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Sorted, possibly overlapping ranges → non-overlapping ones; where several owners meet, an overlap."""
    ranges = list(zip(starts.tolist(), ends.tolist(), kinds.tolist(), numbers.tolist(), strict=True))
    points = sorted({*starts.tolist(), *ends.tolist()})
    active: dict[int, tuple[int, int]] = {}
    ending: list[tuple[int, int]] = []
    out: list[tuple[int, int, int, int]] = []
    nxt = 0
    for p, q in pairwise(points):
        while ending and ending[0][0] <= p:
            active.pop(heapq.heappop(ending)[1], None)
        while nxt < len(ranges) and ranges[nxt][0] <= p:
            active[nxt] = ranges[nxt][2:]
            heapq.heappush(ending, (ranges[nxt][1], nxt))
            nxt += 1
        if len(active) == 1:
            kind, number = next(iter(active.values()))
            out.append((p, q, kind, number))
        elif active:
            together = tuple(owners[active[k][1]][0] for k in sorted(active))
            out.append((p, q, _shared_kind(ranges, active, kind_names), owners.add(together)))
    columns = np.array(out, np.int64).reshape(-1, 4).T
    return columns[0], columns[1], columns[2].astype(np.int16), columns[3]


def _shared_kind(ranges: list[tuple[int, int, int, int]], active: dict[int, tuple[int, int]],
                 kind_names: list[str]) -> int:
    """Several owners of one byte: ranges of one kind that are identical (a blob several parts reference, as
    weight tying does, or its seek table) are shared; anything else is an overlap."""
    spans = {ranges[k][:3] for k in active}
    if len(spans) != 1:
        return kind_names.index("overlap")
    kind = next(iter(spans))[2]
    return _code(kind_names, "shared") if kind_names[kind] == "blob" else kind
