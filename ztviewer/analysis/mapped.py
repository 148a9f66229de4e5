"""Reading a memory-mapped plane without keeping it resident.

A block reduction reads every element of a plane once. Through a memory map those pages would stay in the
process's resident set (they count in RSS / VmHWM although the page cache could drop them), so showing a
1 GiB tensor would look like 1 GiB of memory. :class:`ReleasingPlane` wraps a plane view of a read-only file
map: each block requested is checked against the file (a file truncated by another program is an error, not a
fatal fault), small blocks are copied out, and the pages read are given back to the kernel
(``madvise(MADV_DONTNEED)``: for a read-only shared file mapping the pages simply leave this process; the file's
data stays in the page cache and is faulted back in if read again; Linux only). A strided request spanning much
of the file is read with positional reads instead (:mod:`.positional`). For data not backed by a file map it is
a transparent pass-through.
"""
from __future__ import annotations

import numpy as np

from ztviewer.codec.mapped_pages import byte_bounds, map_of, release, release_addresses, require_unchanged

from . import positional

__all__ = ["SPAN", "ReleasingPlane", "done_with", "file_mapped", "release", "releasing"]

#: largest address range of the map one request may make resident at once.
SPAN = 32 << 20


def file_mapped(array: np.ndarray) -> bool:
    """Whether ``array``'s memory is a view of an ``mmap.mmap`` (never true for decoded buffers)."""
    return map_of(array) is not None


#: blocks up to this size are handed out as copies (what a view may keep: cells, a read-out, a zoomed image).
COPY_BYTES = 1 << 20


class ReleasingPlane:
    """A 2-D plane of a file map read a block at a time, each block's pages given back once it is done with.

    Every request first checks the file (:func:`~ztviewer.codec.mapped_pages.require_unchanged`: a file another
    program truncated is :class:`~ztviewer.codec.errors.SourceChanged`, never a fatal fault). A small block (at
    most :data:`COPY_BYTES`: the cells of a grid, a read-out, the pixels of a zoomed image) is copied out, so
    nothing a view keeps is a view of the map. A larger one is a strip a reduction streams through: it is handed
    out as a view (no copy) and released when the next is requested; the reductions keep only the new arrays they
    compute. A request spanning more than :data:`SPAN` bytes of the map (a strided preview gathers every ``s``-th
    row of the whole plane) is gathered into a copy in pieces along its slowest axis, each piece released once
    copied: the kernel may map whole huge pages around every touched element, so reading even one row in 25
    could otherwise make the whole file resident.
    """

    def __init__(self, plane: np.ndarray) -> None:
        self.plane = plane
        self.shape, self.dtype, self.ndim = plane.shape, plane.dtype, 2
        self._last: np.ndarray | None = None

    def __getitem__(self, key) -> np.ndarray:
        self.release()
        require_unchanged(self.plane)
        view = np.asarray(self.plane[key])
        if view.ndim == 2 and view.size and _spans_more_than(view, SPAN):
            return _gather(view)
        if view.nbytes <= COPY_BYTES or view.ndim != 2:
            out = np.array(view)
            release(view)
            return out
        self._last = view
        return view

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        """The whole plane as an array of its own (``np.asarray(plane)``)."""
        whole = np.array(self[:, :])
        self.release()
        return whole if dtype is None else whole.astype(dtype, copy=False)

    def release(self) -> None:
        """Give back the pages of the last strip handed out as a view."""
        if self._last is not None:
            release(self._last)
            self._last = None

    def grid_and_picks(self, rows: slice, cols: slice, pick_rows: np.ndarray,
                       pick_cols: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """``plane[rows, cols]`` (a strided grid) and ``plane[pick_rows, pick_cols]`` (scattered elements on rows of
        the grid, ``pick_rows`` ascending: a level sample), both copies, read together through the map in bands of
        rows spanning at most :data:`SPAN` bytes, each band's pages given back once both are copied from it: the
        picks cost no page faults of their own. For rows in the page cache (nothing is read with positional reads);
        ``None`` unless the plane's rows are its slow axis (the caller then reads the two apart)."""
        if abs(self.plane.strides[0]) < abs(self.plane.strides[1]) or not rows.step or rows.step < 1 \
                or rows.start is None or rows.start < 0:
            return None
        self.release()
        require_unchanged(self.plane)
        grid = self.plane[rows, cols]
        out = np.empty(grid.shape, self.dtype)
        picked = np.empty(pick_rows.shape, self.dtype)
        band = max(1, SPAN // max(1, abs(grid.strides[0])))   # grid rows per band
        starts = list(range(0, grid.shape[0], band))
        first_rows = [rows.start + g * rows.step for g in starts] + [self.shape[0]]
        cuts = np.searchsorted(pick_rows, first_rows).tolist()
        pick = _element_picker(self.plane, pick_rows, pick_cols)
        row_low, row_high = byte_bounds(self.plane[:1])   # every row is the first moved by a multiple of its stride
        row_stride, in_map = self.plane.strides[0], map_of(self.plane) is not None
        for k, g in enumerate(starts):
            out[g:g + band] = grid[g:g + band]
            a, b = cuts[k], cuts[k + 1]
            if b > a:
                picked[a:b] = pick(a, b)
            moves = (first_rows[k] * row_stride, (first_rows[k + 1] - 1) * row_stride)
            if in_map:   # (on anonymous memory MADV_DONTNEED would discard the data)
                release_addresses(row_low + min(moves), row_high + max(moves))
        if cuts[0] > 0:   # picks on rows before the grid's first: read on their own
            picked[:cuts[0]] = self.pick(pick_rows[:cuts[0]], pick_cols[:cuts[0]])
        return out, picked

    def pick(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """``plane[rows, cols]`` for 1-D index arrays of scattered elements (a level sample; indices in range, never
        wrapped: a contiguous plane reads them as offsets), in groups whose addresses lie within :data:`SPAN` bytes,
        each group's pages given back before the next: the kernel may map whole large pages around every element,
        so reading them all at once could make much of the file resident."""
        self.release()
        require_unchanged(self.plane)
        out = np.empty(rows.shape, self.dtype)
        if rows.size == 0:
            return out
        addresses = rows * self.plane.strides[0] + cols * self.plane.strides[1]
        order = None
        if rows.size > 1 and bool((np.diff(addresses) < 0).any()):   # a sample's are ascending: no sort
            order = np.argsort(addresses, kind="stable")
            rows, cols, addresses = rows[order], cols[order], addresses[order]
        cuts = np.flatnonzero(np.diff((addresses - addresses[0]) // SPAN)) + 1
        pick = _element_picker(self.plane, rows, cols)
        for start, stop in zip([0, *cuts.tolist()], [*cuts.tolist(), rows.size]):
            r, c = rows[start:stop], cols[start:stop]
            out[start:stop] = pick(start, stop)
            release(self.plane[r.min():r.max() + 1, c.min():c.max() + 1])
        if order is not None:
            out[order] = out.copy()
        return out


def _element_picker(plane: np.ndarray, rows: np.ndarray, cols: np.ndarray):
    """``pick(a, b)`` = ``plane[rows[a:b], cols[a:b]]``: a 1-D ``take`` from a C-contiguous plane (several times
    faster than indexing with two arrays), else that indexing."""
    if plane.flags.c_contiguous:
        flat, offsets = plane.reshape(-1), rows * plane.shape[1] + cols
        return lambda a, b: flat.take(offsets[a:b])
    return lambda a, b: plane[rows[a:b], cols[a:b]]


def _spans_more_than(view: np.ndarray, span: int) -> bool:
    low, high = byte_bounds(view)
    return high - low > span


def _gather(view: np.ndarray) -> np.ndarray:
    """A copy of ``view``: read with positional reads where it can be (:func:`.positional.gather`: fast on a cold
    file, nothing left resident), else through the map in pieces of at most about :data:`SPAN` bytes of address
    range."""
    read = positional.gather(view)
    if read is not None:
        return read
    axis = int(np.argmax(np.abs(view.strides)))
    step = max(1, SPAN // max(1, abs(view.strides[axis])))
    out = np.empty(view.shape, view.dtype)
    index = [slice(None), slice(None)]
    for start in range(0, view.shape[axis], step):
        index[axis] = slice(start, start + step)
        part = view[tuple(index)]
        out[tuple(index)] = part
        release(part)
    return out


def releasing(plane):
    """``plane`` wrapped in :class:`ReleasingPlane` when it is a view of a file map, else ``plane`` itself."""
    if isinstance(plane, np.ndarray) and plane.ndim == 2 and file_mapped(plane):
        return ReleasingPlane(plane)
    return plane


def done_with(plane) -> None:
    if isinstance(plane, ReleasingPlane):
        plane.release()
