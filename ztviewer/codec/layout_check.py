"""Format-independent checks of where a file's components lie, and the file map's gaps and padding.

Every reader calls :func:`check_layout` after building its tensors: components must lie inside the file
(without u64 overflow), must not overlap one another or the container's own regions (magic, header,
manifest, footer), and should start on the format's alignment. Zero-length components are exempt from the
overlap rule: v0.1 places a zero-size tensor at the next blob's offset.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from .model import Region, Tensor, TensorFile, error, warning
from .plain_columns import U64_MAX
from .source import Source
from .span_columns import in_file_order, meeting, span_columns

U64_LIMIT = 1 << 64


def check_layout(tf: TensorFile, file_size: int, *, alignment: int | None = None,
                 reserved: Iterable[Region] | None = None, aliases: bool = False) -> None:
    """Append bounds, overlap and alignment problems to the tensors that own the components.

    ``reserved`` defaults to ``tf.regions``. Alignment problems are warnings; the rest are errors. With
    ``aliases``, two tensors whose components cover exactly the same bytes share one blob (weight tying, as
    zTensor v2 allows "identical or disjoint" references): a warning on each, not an overlap. Of untouched plain
    tensors, only those the columns show out of bounds, misaligned or meeting another component or a region are
    built and looked at (:func:`_plain_suspects`).
    """
    regions = [r for r in (tf.regions if reserved is None else reserved) if r.length]
    suspects = _plain_suspects(tf.tensors, regions, file_size, alignment)
    if suspects is not None and not suspects:
        return
    tensors = tf.tensors if suspects is None else [tf.tensors[p] for p in suspects]
    # One pass checks bounds and alignment and notices whether the components come in file order without
    # touching one another (as every writer lays them out); then only the few container regions remain
    # to be compared with the components' hull. Anything else takes the general sort-and-sweep.
    start: int | None = None
    reach = -1
    in_order = True
    for tensor in tensors:
        for role, c in tensor.components.items():
            offset = c.offset
            end = offset + c.length
            if end > file_size:
                _out_of_bounds(tensor, role, offset, c.length, file_size)
            elif end != offset:
                if alignment and offset % alignment:
                    tensor.problems.append(warning(
                        f"starts at byte {offset}, which is not a multiple of {alignment}", tensor=tensor.name,
                        component=role, offset=offset, rule=f"components are {alignment}-byte aligned"))
                if offset < reach or end < offset:
                    in_order = False
                elif start is None:
                    start = offset
                reach = end
    if in_order and (start is None or all(r.offset < r.end and (r.end <= start or r.offset >= reach)
                                          for r in regions)):
        return
    _sweep(tensors, regions, file_size, aliases)


def _plain_suspects(tensors: Sequence[Tensor], regions: list[Region], file_size: int, alignment: int | None
                    ) -> list[int] | None:
    """Positions (in order) of the untouched plain tensors (:func:`~.span_columns.plain_spans`) whose component runs
    past the file, is misaligned, or meets another component or a container region: worked out over whole columns.
    Every other component is sound and alone, and checking the suspects alone reports what checking all
    reports (an isolated span neither overlaps nor moves the reach of the spans after it in the sweep).
    ``None``: the tensors are not plain (or a region is odd), the general pass looks at them all."""
    spans = span_columns(tensors)
    if spans is None or any(r.offset < 0 or r.end <= r.offset or r.end > U64_MAX for r in regions):
        return None
    offsets, lengths = spans
    if not len(offsets):
        return []
    ends = offsets + lengths                      # uint64: a sum past 2**64 wraps below its offset
    outside = (ends < offsets) | (ends > np.uint64(min(file_size, U64_MAX)))
    placed = ~outside & (lengths > 0)
    suspect = outside | (placed & (offsets % np.uint64(alignment) != 0)) if alignment else outside
    at = np.flatnonzero(placed) if not placed.all() else np.arange(len(offsets))
    at, starts, stops = in_file_order(at, offsets, ends)
    if len(at) == len(offsets) and not suspect.any() and (stops[:-1] <= starts[1:]).all():  # as writers lay out
        start, reach = int(starts[0]), int(stops[-1])
        if all(r.end <= start or r.offset >= reach for r in regions):
            return []
    meets = meeting(starts, stops, ((r.offset, r.end) for r in regions))
    return np.union1d(np.flatnonzero(suspect), at[meets]).tolist()  # type: ignore[no-any-return]


def _sweep(tensors: Sequence[Tensor], regions: list[Region], file_size: int, aliases: bool = False) -> None:
    """Report every overlap: the spans sorted by offset, each compared with the furthest end before it."""
    spans = [(r.offset, r.end, k) for k, r in enumerate(regions)]  # (offset, end, owner number)
    k = len(spans)
    for tensor in tensors:
        for c in tensor.components.values():
            offset = c.offset
            end = offset + c.length
            if end <= file_size and end != offset:
                spans.append((offset, end, k))
            k += 1
    spans.sort()
    owners: list[tuple[Tensor | None, str]] | None = None
    reach, reach_owner, reach_start = -1, 0, 0
    for offset, end, owner in spans:
        if offset < reach:
            if owners is None:  # built only when an overlap is found: owner number → (tensor, role)
                owners = [(None, r.label or r.kind) for r in regions]
                owners += [(t, role) for t in tensors for role in t.components]
            a, b = owners[owner], owners[reach_owner]
            identical = offset == reach_start and end == reach
            if identical and aliases and a[0] is not None and b[0] is not None and not _same_entry(a, b):
                _alias(a, b, (offset, end))
            elif not (identical and _same_entry(a, b)):
                _overlap(a, (offset, end), b, (reach_start, reach))
        if end > reach:
            reach, reach_owner, reach_start = end, owner, offset


def _same_entry(a: tuple[Tensor | None, str], b: tuple[Tensor | None, str]) -> bool:
    """A duplicated manifest entry (same name, role and range) is reported as a duplicate, not an overlap."""
    return a[0] is not None and b[0] is not None and a[0].name == b[0].name and a[1] == b[1]


def _out_of_bounds(tensor: Tensor, role: str, offset: int, length: int, file_size: int) -> None:
    if offset + length >= U64_LIMIT:
        message = f"offset {offset} + length {length} overflows an unsigned 64-bit integer"
        rule = "offset + length must not overflow"
    else:
        message = (f"byte range [{offset}, {offset + length}) runs past the end of the file "
                   f"({file_size} bytes)")
        rule = "offset + length <= file size"
    tensor.problems.append(error(message, tensor=tensor.name, component=role, offset=offset, rule=rule))


def _describe(owner: tuple[Tensor | None, str], span: tuple[int, int]) -> str:
    tensor, what = owner
    where = f"[{span[0]}, {span[1]})"
    if tensor is None:
        return f"the {what} {where}"
    return f"tensor {tensor.name!r} component {what!r} {where}"


def _overlap(a: tuple[Tensor | None, str], a_span: tuple[int, int],
             b: tuple[Tensor | None, str], b_span: tuple[int, int]) -> None:
    """Record that ``a`` overlaps ``b`` on each tensor involved (a container region has no tensor)."""
    for (tensor, role), span, other, other_span in ((a, a_span, b, b_span), (b, b_span, a, a_span)):
        if tensor is not None:
            tensor.problems.append(error(
                f"byte range [{span[0]}, {span[1]}) overlaps {_describe(other, other_span)}",
                tensor=tensor.name, component=role, offset=span[0], rule="components must not overlap"))


def _alias(a: tuple[Tensor | None, str], b: tuple[Tensor | None, str], span: tuple[int, int]) -> None:
    """Record on both tensors that they read the same bytes (both stay readable)."""
    for (tensor, role), other in ((a, b), (b, a)):
        if tensor is not None:
            tensor.problems.append(warning(
                f"byte range [{span[0]}, {span[1]}) is the same blob as {_describe(other, span)}; both tensors "
                "read it (aliased blob)", tensor=tensor.name, component=role, offset=span[0],
                rule="components are identical or disjoint (aliased blobs are shared, as zTensor v2 allows)"))


def find_gaps(tf: TensorFile, source: Source | None = None, alignment: int = 64) -> list[Region]:
    """Bytes no region or component accounts for, as ``Region(kind="padding" | "gap")`` in file order.

    Padding is all-zero bytes that run from the end of a known range up to (at most) the next
    ``alignment`` boundary; anything else unaccounted is a gap.
    """
    source = source if source is not None else tf.source
    size = source.size if source is not None else tf.size
    known = sorted((r.offset, r.end) for r in tf.regions if r.length)
    known += [(c.offset, c.end) for t in tf.tensors for c in t.components.values() if c.length]
    known.sort()
    result: list[Region] = []
    cursor = 0
    for start, end in known + [(size, size)]:
        start = min(start, size)
        if start > cursor:
            result.extend(_classify(source, cursor, start, alignment))
        cursor = max(cursor, min(end, size))
    return result


def _classify(source: Source | None, start: int, end: int, alignment: int) -> list[Region]:
    boundary = min(end, -(-start // alignment) * alignment)
    if start < boundary and source is not None and not any(source.window(start, boundary - start)):
        regions = [Region("padding", start, boundary - start, "zero padding")]
        if boundary < end:
            regions.append(Region("gap", boundary, end - boundary, "unreferenced bytes"))
        return regions
    return [Region("gap", start, end - start, "unreferenced bytes")]
