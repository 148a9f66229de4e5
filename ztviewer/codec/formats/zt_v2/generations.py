"""Append generations (spec §2.5): the footer at EOF defines the file; earlier footers remain inside it.

An appending writer starts after the old EOF and places its first blob (or its manifest) at the next
aligned offset, so an earlier generation's footer is the last non-zero bytes before the first item the
next generation appended. Every item start (blob offsets and manifest offsets of the generations found so
far) is therefore a candidate: skip the zero padding backwards from it, and if the 40 bytes ending there
are a footer whose magic, version, bounds and manifest hash all check out, that is a generation. Its own
items become candidates in turn, which finds a whole chain. The bytes examined, padding and candidate
manifests alike (each hashed in chunks, never held whole before its hash matches), are capped
(:data:`SEARCH_BUDGET`), so opening a file with many blobs, or one with a footer forged inside padding that
claims a 1 GiB manifest, stays cheap; :func:`search_generations` says when the cap stopped the search (older
generations may then be missing). ``budget=None`` searches exhaustively.
"""
from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ...io.base import CHUNK
from ...io.protocol import CancelCheck, Progress
from ...model import TensorFile
from ...source import PREAD_LIMIT, Source
from ..magic import ZT_V2_MAGIC as MAGIC
from .blobs import local_spans
from .cbor_check import decode_strict, loads_fast
from .container import ALIGNMENT, FOOTER_SIZE, Footer, footer_candidate_at, manifest_hash_matches

SEARCH_BUDGET = 4 << 20
_MAX_PADDING = 1 << 20
_FIRST_WINDOW = 512   # the bytes before a blob that starts no generation are rarely zero for long
_WINDOW = 64 << 10


@dataclass(frozen=True, slots=True)
class Generation:
    """An earlier state of the file: what it was when its footer was at EOF."""

    footer_offset: int
    end: int               # the file's size in that generation
    manifest_offset: int
    manifest_length: int
    objects: int | None    # object count of its manifest (None when it does not decode)
    blobs: tuple[tuple[int, int], ...] = ()  # (offset, length) of the local blobs its manifest references


@dataclass(frozen=True, slots=True)
class GenerationSearch:
    """Earlier generations found, newest first, and whether the budget stopped the search before every
    candidate was examined (then older generations than those listed may exist)."""

    generations: list[Generation]
    stopped: bool


def find_generations(tf: TensorFile, budget: int | None = SEARCH_BUDGET) -> list[Generation]:
    """Earlier generations of a v2 file, newest first (those :func:`search_generations` finds)."""
    return search_generations(tf, budget).generations


def search_generations(tf: TensorFile, budget: int | None = SEARCH_BUDGET) -> GenerationSearch:
    """Earlier generations of a v2 file, reading at most ``budget`` bytes (padding, footers and candidate
    manifests); ``budget=None`` searches exhaustively."""
    source = tf.source
    footer: Footer | None = tf.extra.get("_footer")
    if source is None or footer is None or footer.is_data_shard:
        return GenerationSearch([], False)
    ranges = [(0, len(MAGIC)), (footer.manifest_offset, footer.manifest_length)]
    size = source.size
    ranges += [span for span in local_spans(tf.tensors)
               if span[0] + span[1] <= size]  # out-of-bounds parts are errors already
    ends = sorted(offset + length for offset, length in ranges)
    starts = _with_room({offset for offset, length in ranges[1:] if length}, ends)
    found: dict[int, Generation] = {}
    pending = sorted(starts)
    spent = 0
    seen: set[int] = set()
    stopped = False
    while pending:
        start = pending.pop()
        if start in seen or start <= len(MAGIC) + FOOTER_SIZE:
            continue
        seen.add(start)
        if not _room_before(start, ends):
            continue
        end, cost = _last_nonzero_end(source, start, None if budget is None else budget - spent)
        spent += cost
        if budget is not None and spent >= budget:
            stopped = True
            break
        if end is None or end in found:
            continue
        old = footer_candidate_at(source, end)
        if old is None:
            continue
        spent += FOOTER_SIZE + old.manifest_length
        if budget is not None and spent > budget:  # its manifest is not even read
            stopped = True
            break
        if not manifest_hash_matches(source, old):
            continue
        generation, items = _describe(source, old)
        found[end] = generation
        new = [s for s in items if s not in seen]
        pending = sorted(set(pending).union(new))
    return GenerationSearch(sorted(found.values(), key=lambda g: g.end, reverse=True), stopped)


def _with_room(starts: set[int], ends: list[int]) -> list[int]:
    """The starts with room before them for an earlier manifest and footer (:func:`_room_before`), vectorised."""
    if not starts:
        return []
    candidates = np.array(sorted(starts), dtype=np.uint64)
    sorted_ends = np.array(ends, dtype=np.uint64)
    at = np.searchsorted(sorted_ends, candidates, side="right")
    below = np.where(at > 0, sorted_ends[np.maximum(at, 1) - 1], 0).astype(np.uint64)
    room = (below + np.uint64(ALIGNMENT - 1)) // np.uint64(ALIGNMENT) * np.uint64(ALIGNMENT)
    keep = room + np.uint64(FOOTER_SIZE + 1) <= candidates
    return [int(v) for v in candidates[keep]]


def _room_before(start: int, ends: list[int]) -> bool:
    """Whether an earlier manifest (4 KiB-aligned, after every referenced byte below ``start``) and its
    footer fit before ``start``: a generation ends with its manifest and footer (§2.5)."""
    at = bisect_right(ends, start)
    below = ends[at - 1] if at else 0
    return -(-below // ALIGNMENT) * ALIGNMENT + FOOTER_SIZE + 1 <= start


def _last_nonzero_end(source: Source, start: int, budget: int | None) -> tuple[int | None, int]:
    """The offset just past the last non-zero byte before ``start`` (looking back at most a bounded
    padding run), and how many bytes were read: :data:`_FIRST_WINDOW` first, then up to the 4 KiB boundary
    before ``start`` (the padding before an aligned item), then doubling what was read, at most :data:`_WINDOW`
    at a time."""
    position = start
    limit = max(0, start - _MAX_PADDING)
    read = 0
    while position > limit:
        size = min(max(read, ALIGNMENT - read) if read else _FIRST_WINDOW, _WINDOW, position - limit)
        if budget is not None:
            size = min(size, budget - read)
            if size <= 0:
                return None, read
        chunk = source.window(position - size, size)
        read += size
        stripped = chunk.rstrip(b"\0")
        if stripped:
            return position - size + len(stripped), read
        position -= size
    return None, read


def _describe(source: Source, footer: Footer) -> tuple[Generation, list[int]]:
    data = source.read(footer.manifest_offset, footer.manifest_length, "manifest")
    blobs: list[tuple[int, int]] = []
    objects: int | None = None
    try:
        root = loads_fast(data)
        if root is None:
            root = decode_strict(data, footer.manifest_offset)
        entries = root.get("objects") if type(root) is dict else None
        if type(entries) is dict:
            objects = len(entries)
            for entry in entries.values():
                parts = entry.get("parts") if type(entry) is dict else None
                for part in (parts.values() if type(parts) is dict else ()):
                    blob = part.get("blob") if type(part) is dict else None
                    if (type(blob) is list and len(blob) == 2 and all(type(v) is int and v >= 0 for v in blob)
                            and "shard" not in part and blob[1]):
                        blobs.append((blob[0], blob[1]))
    except ValueError:
        pass
    generation = Generation(footer.offset, footer.end, footer.manifest_offset, footer.manifest_length, objects,
                            tuple(sorted(set(blobs))))
    return generation, [footer.manifest_offset] + [offset for offset, _ in blobs]


class PrefixSource(Source):
    """The first ``size`` bytes of an open source, read through it (its file, map or reads). Closing it closes the
    parent only when it ``owns_parent``; such a parent is read for this prefix alone, so the views of its map too
    are told changed only when the prefix is (an append after it changes nothing)."""

    def __init__(self, parent: Source, size: int, owns_parent: bool = False) -> None:
        self.path = parent.path
        self.size = min(size, parent.size)
        self.capabilities = parent.capabilities
        self._parent = parent
        self._owns_parent = owns_parent
        if owns_parent:     # its maps are handed out for this prefix only: an append after it leaves them sound
            parent.read_prefix_only(self.size)

    @property
    def stamp(self) -> tuple[int, int, int]:
        _, modified, number = self._parent.stamp
        return self.size, modified, number

    def bytes_changed(self, within: int | None = None) -> str | None:
        """The parent's file checked for what matters to a prefix: the same file, still at least as long (an
        append after it changes nothing here)."""
        return self._parent.bytes_changed(self.size if within is None else min(within, self.size))

    def path_changed(self) -> str | None:
        return self._parent.path_changed()

    def view(self, offset: int, length: int, what: str = "range", **where: str | None) -> memoryview:
        return self.view_within(self.size, offset, length, what, **where)

    def view_within(self, within: int | None, offset: int, length: int, what: str = "range",
                    **where: str | None) -> memoryview:
        self.check_range(offset, length, what, **where)
        return self._parent.view_within(self.size if within is None else min(within, self.size), offset, length,
                                        what, **where)

    def read(self, offset: int, length: int, what: str = "range", **where: str | None) -> bytes:
        self.check_range(offset, length, what, **where)
        if length > PREAD_LIMIT and self.capabilities.views:  # the parent's map serves it, checked as a prefix
            return bytes(self.view(offset, length, what, **where))
        return self._parent.read(offset, length, what, **where)

    def read_chunks(self, offset: int, length: int, chunk: int = CHUNK, what: str = "range", *,
                    reuse: bool = False, progress: Progress | None = None, cancelled: CancelCheck | None = None,
                    **where: str | None) -> Iterator[bytes | memoryview]:
        self.check_range(offset, length, what, **where)
        return self._parent.read_chunks(offset, length, chunk, what, reuse=reuse, progress=progress,
                                        cancelled=cancelled, **where)

    def window(self, offset: int, length: int) -> bytes:
        offset = max(0, min(offset, self.size))
        return self._parent.window(offset, min(self.size, offset + max(0, length)) - offset)

    def fileno(self) -> int | None:
        return self._parent.fileno()

    def reader_fd(self) -> int | None:
        return self._parent.reader_fd()

    def drop_pages(self, offset: int, length: int) -> None:
        self._parent.drop_pages(offset, min(length, self.size - offset))

    def close(self) -> None:
        if self._owns_parent:
            self._parent.close()

