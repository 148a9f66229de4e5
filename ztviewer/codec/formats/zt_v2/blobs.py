"""Blob placement (spec §2.4, §3.6 items 3-4): alignment, bounds, identical-or-disjoint per file.

References are grouped by the file they point into (``None`` for this file, else the shard name) and
checked from the root manifest alone. Identical references are legal (weight tying): every owner of a
shared blob is recorded on each of its components as ``shared_with``.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

import numpy as np

import ztviewer.codec.formats.zt_v2.rules as rules

from ...model import MORE_OWNERS, Tensor, error
from ...plain_columns import U64_MAX
from ...span_columns import in_file_order, meeting, plain_spans, span_columns
from .container import ALIGNMENT, FOOTER_SIZE
from .schema import ShardEntry

Owner = tuple[Tensor, str] | None  # (tensor, part name); None: the manifest blob
SHOWN_OWNERS = 8                   # the other owners of a shared blob a part names; more are counted


def part_refs(tensors: Iterable[Tensor]) -> list[tuple[Tensor, str, int, int, str | None]]:
    """``(tensor, part, offset, length, shard)`` of every part, without building deferred components."""
    refs: list[tuple[Tensor, str, int, int, str | None]] = []
    for tensor in tensors:
        data = tensor._data if tensor._components is None else None
        if data is not None:
            refs.append((tensor, "data", data[0], data[1], None))
            continue
        for role, component in tensor.components.items():
            refs.append((tensor, role, component.offset, component.length, component.shard))
    return refs


def local_spans(tensors: Sequence[Tensor]) -> list[tuple[int, int]]:
    """``(offset, length)`` of every part stored in this file (not in a shard), from the columns of untouched
    plain tensors (:func:`~ztviewer.codec.span_columns.plain_spans`) without building them when possible."""
    spans = plain_spans(tensors)
    if spans is not None:
        return list(zip(*spans))
    return [(offset, length) for _, _, offset, length, shard in part_refs(tensors) if shard is None]


def check_blobs(tensors: Sequence[Tensor], manifest: tuple[int, int] | None, file_size: int,
                shards: dict[str, ShardEntry]) -> None:
    """Append alignment, bounds and overlap errors to the tensors whose parts break them, and record who shares
    a blob. Of untouched plain tensors, only those the columns show misplaced or meeting another blob or the
    manifest are built and looked at (:func:`_plain_suspects`)."""
    suspects = _plain_suspects(tensors, manifest, file_size)
    if suspects is not None and not suspects:
        return
    groups: dict[str | None, list[tuple[int, int, Owner]]] = defaultdict(list)
    if manifest is not None and manifest[1]:
        groups[None].append((manifest[0], manifest[0] + manifest[1], None))
    looked_at = tensors if suspects is None else map(tensors.__getitem__, suspects)
    for tensor, role, offset, length, shard in part_refs(looked_at):
        limit = (file_size if shard is None else shards[shard].size) - FOOTER_SIZE
        end = offset + length
        where = f" of shard {shard!r}" if shard is not None else ""
        if offset % ALIGNMENT or offset < ALIGNMENT:
            tensor.problems.append(error(f"blob offset {offset}{where} is not a multiple of 4096 (>= 4096)",
                                         tensor=tensor.name, component=role, offset=offset,
                                         rule=rules.BLOB_ALIGNMENT))
        elif end > limit:
            tensor.problems.append(error(f"blob [{offset}, {end}){where} runs past the data region, which ends "
                                         f"at byte {max(limit, 0)}", tensor=tensor.name, component=role,
                                         offset=offset, rule=rules.BLOB_BOUNDS))
        elif end > offset:
            groups[shard].append((offset, end, (tensor, role)))
    for shard, spans in groups.items():
        _sweep(spans, shard)


def _plain_suspects(tensors: Sequence[Tensor], manifest: tuple[int, int] | None, file_size: int
                    ) -> list[int] | None:
    """Positions (in order) of the untouched plain tensors (:func:`~ztviewer.codec.span_columns.plain_spans`: local,
    one part each) whose blob is misaligned or out of bounds, or meets another tensor's blob or the manifest:
    worked out over whole columns. Every other blob is in place and alone, and the sweep over the suspects
    alone reports what the sweep over all reports (an isolated span neither overlaps, nor shares, nor moves the
    reach of the spans after it). ``None``: the tensors are not plain, the general pass looks at them all."""
    spans = span_columns(tensors)
    if spans is None:
        return None
    offsets, lengths = spans
    if not len(offsets):
        return []
    ends = offsets + lengths                      # uint64: a sum past 2**64 wraps below its offset
    limit = file_size - FOOTER_SIZE
    misplaced = (offsets % np.uint64(ALIGNMENT) != 0) | (offsets < np.uint64(ALIGNMENT)) | (ends < offsets)
    misplaced |= ends > np.uint64(limit) if limit >= 0 else True
    placed, starts, stops = in_file_order(np.flatnonzero(~misplaced & (lengths > 0)), offsets, ends)
    ranges = [(manifest[0], min(manifest[0] + manifest[1], U64_MAX))] if manifest is not None and manifest[1] else []
    meets = meeting(starts, stops, ranges)
    suspects = np.union1d(np.flatnonzero(misplaced), placed[meets])
    return suspects.tolist()  # type: ignore[no-any-return]


def _sweep(spans: list[tuple[int, int, Owner]], shard: str | None) -> None:
    spans.sort(key=lambda s: (s[0], s[1]))
    reach_start, reach_end = -1, -1
    reach_owner: Owner = None
    shared: list[Owner] = []
    for start, end, owner in spans:
        if start == reach_start and end == reach_end:
            shared.append(owner)
            continue
        _record_sharing(shared)
        shared = [owner]
        if start < reach_end:
            _overlap(owner, (start, end), reach_owner, (reach_start, reach_end), shard)
        if end > reach_end:
            reach_start, reach_end, reach_owner = start, end, owner
    _record_sharing(shared)


def _label(owner: Owner) -> str:
    return "the manifest" if owner is None else f"{owner[0].name}/{owner[1]}"


def _record_sharing(owners: list[Owner]) -> None:
    """Note on each owner of one blob the others, at most :data:`SHOWN_OWNERS` of them by name and then how
    many more (every owner naming every other would take memory and time quadratic in their number: a
    writer that stores identical tensors once gives 100,000 all-zero biases one blob)."""
    if len(owners) < 2:
        return
    labels = [_label(o) for o in owners]
    few = len(labels) <= SHOWN_OWNERS + 1
    for owner, label in zip(owners, labels):
        if owner is None:
            continue
        if few:
            others = tuple(other for other in labels if other != label)
        else:
            named = [other for other in labels[:SHOWN_OWNERS + 1] if other != label][:SHOWN_OWNERS]
            others = (*named, MORE_OWNERS.format(len(labels) - 1 - len(named)))
        owner[0].components[owner[1]].shared_with = others


def _overlap(a: Owner, a_span: tuple[int, int], b: Owner, b_span: tuple[int, int], shard: str | None) -> None:
    where = f" in shard {shard!r}" if shard is not None else ""
    for owner, span, other, other_span in ((a, a_span, b, b_span), (b, b_span, a, a_span)):
        if owner is not None:
            tensor, role = owner
            tensor.problems.append(error(
                f"blob [{span[0]}, {span[1]}){where} partially overlaps {_label(other)} "
                f"[{other_span[0]}, {other_span[1]})", tensor=tensor.name, component=role,
                offset=span[0], rule=rules.BLOB_OVERLAP))
