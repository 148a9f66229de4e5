"""Gathering a strided view of a file map with positional reads instead of page faults.

A strided preview of a huge plane touches a few elements on each of thousands of rows. Through the map, a cold
file is then read page fault by page fault, each a small synchronous read (2.8 s for a 16384² float32 plane).
:func:`gather` instead reads each needed row's run of bytes with one positional read into a reused buffer, after
asking the system to start reading the next rows in the background (``POSIX_FADV_WILLNEED``, so the disk works on
many rows at once), and picks the elements out with numpy. Nothing is mapped, so nothing stays resident.
"""
from __future__ import annotations

import mmap
import os
import threading
from typing import NamedTuple

import numpy as np

from ztviewer.codec import portable
from ztviewer.codec.errors import SourceChanged
from ztviewer.codec.mapped_pages import map_of
from ztviewer.codec.source import source_of_map

#: bytes of rows asked for in the background ahead of the one being read.
AHEAD_BYTES = 32 << 20
#: rows whose residency decides between the map (all in the page cache) and positional reads
SAMPLES = 32


class _Rows(NamedTuple):
    """Where the rows of a strided view lie in its map: one run of ``run`` bytes at each of ``offsets``."""

    mapped: mmap.mmap
    outer: int            # the axis whose index picks the row
    offsets: np.ndarray   # byte offset in the map of each row's run
    run: int
    step: int             # bytes between neighbouring elements of a row (negative when reversed)


def _rows(view: np.ndarray) -> _Rows | None:
    """The runs of the 2-D ``view`` of a file map, ``None`` when it is no such view or elements of one row lie more
    than a page apart (reading whole rows would read pages the map never touches)."""
    mapped = map_of(view)
    if mapped is None or view.ndim != 2 or view.size == 0:
        return None
    outer = int(np.argmax(np.abs(view.strides)))
    inner = 1 - outer
    step = view.strides[inner]
    if abs(step) > mmap.PAGESIZE or abs(step) < view.itemsize:
        return None
    count = view.shape[inner]
    run = (count - 1) * abs(step) + view.itemsize
    base = np.frombuffer(mapped, np.uint8).ctypes.data
    first = view.ctypes.data - base + min(0, (count - 1) * step)
    offsets = first + np.arange(view.shape[outer], dtype=np.int64) * view.strides[outer]
    return _Rows(mapped, outer, offsets, run, step)


def gather(view: np.ndarray) -> np.ndarray | None:
    """A C-contiguous copy of the 2-D ``view`` of a file map, read with positional reads; ``None`` when the map
    should serve it: not a view of an open source's map, elements of one row more than a page apart (reading whole
    rows would read pages the map never touches), or the range already in the page cache (``mincore``)."""
    rows = _rows(view)
    source = source_of_map(rows.mapped) if rows is not None else None
    if rows is None or source is None:
        return None
    if _cached(rows.mapped, rows.offsets, rows.run):  # the map serves it without I/O and without a copy
        return None
    fd = source.reader_fd()
    if fd is None:
        return None
    try:
        return _read_rows(fd, view, rows.outer, rows.offsets, rows.run, rows.step)
    finally:
        os.close(fd)


def cached_bytes(view: np.ndarray) -> int | None:
    """The bytes of map the rows of the 2-D ``view`` of a file map span (what reading it through the map
    touches) when they are in the page cache (sampled as :func:`gather` does), else ``None``: not such a view,
    rows not cached, or no ``mincore`` on this system. Reading a cached view through the map costs no I/O."""
    rows = _rows(view)
    if rows is None or not _cached(rows.mapped, rows.offsets, rows.run):
        return None
    return len(rows.offsets) * rows.run


def _cached(mapped: mmap.mmap, offsets: np.ndarray, run: int) -> bool:
    """Whether the needed rows are in the page cache, judged from up to :data:`SAMPLES` of them spread evenly
    (one ``mincore`` call each: asking about the whole range costs more than reading the rows)."""
    picks = offsets[np.linspace(0, len(offsets) - 1, min(SAMPLES, len(offsets))).astype(np.int64)]
    return portable.all_resident(memoryview(mapped), picks.tolist(), run) is True


def _read_rows(fd: int, view: np.ndarray, outer: int, offsets: np.ndarray, run: int, step: int) -> np.ndarray:
    out = np.empty(view.shape, view.dtype)
    buffer = bytearray(run)
    count = view.shape[1 - outer]
    elements = np.ndarray((count,), view.dtype, buffer=buffer, strides=(abs(step),))
    if step < 0:
        elements = elements[::-1]
    lock = threading.Lock()
    window = max(1, AHEAD_BYTES // run)
    advised = 0
    for i, offset in enumerate(offsets.tolist()):
        if i >= advised - window // 2:  # keep about a window of rows requested ahead
            for ahead in offsets[advised:advised + window].tolist():
                portable.advise(fd, ahead, run, "WILLNEED")
            advised += window
        if portable.pread_into(fd, memoryview(buffer), offset, lock) < run:
            raise SourceChanged(f"the file ended inside a row being read (byte {offset + run:,}); it changed on "
                                "disk since it was opened: reload it", offset=offset,
                                rule="an open file must not change under the reader")
        if outer == 0:
            out[i] = elements
        else:
            out[:, i] = elements
    return out
