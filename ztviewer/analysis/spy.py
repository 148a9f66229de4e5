"""Spy plots of sparse tensors: non-zeros binned into screen pixels, markers when zoomed in, axis selection.

Pixel ``(i, j)`` of a spy image over ``region = (r0, r1, c0, c1)`` counts the stored entries with row in
``row_edges[i]:row_edges[i+1]`` and column in ``col_edges[j]:col_edges[j+1]`` (edges from
:func:`~ztviewer.analysis._common.block_edges`, so an offset ``x`` goes to bin ``x * bins // extent``).
Entries outside the region are not counted. Coordinates are any integer arrays (uint64 from files is
fine) with values inside ``shape``, as :mod:`ztviewer.codec.sparse` validates them.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ztviewer.codec.mapped_pages import release, scan

from ._common import CancelCheck, Progress, Region, block_edges, check_out_shape, check_region, checkpoint, report

_SUB = 1 << 16  # coordinates converted at once (stays in cache)
_TALLY = 1 << 17  # coordinates binned and counted at once (two 1 MiB uint64 buffers, about the L2 size)
_TALLY32 = 2**31 - 1  # most entries an int32 tally can count without overflowing


@dataclass(frozen=True, slots=True)
class SpyImage:
    """Counts of stored entries per pixel; ``row_edges`` / ``col_edges`` as in ``reduce.Image``."""

    counts: np.ndarray
    row_edges: np.ndarray
    col_edges: np.ndarray

    @property
    def density(self) -> np.ndarray:
        """Fraction of each pixel's block that is stored (counts / block area), float64."""
        area = np.diff(self.row_edges)[:, None] * np.diff(self.col_edges)[None, :]
        return self.counts / np.maximum(area, 1)


def _index(values: np.ndarray) -> np.ndarray:
    """Coordinates as int64 without a copy where possible (uint64 below 2**63 is reinterpreted)."""
    values = np.asarray(values)
    if values.dtype == np.int64 or values.dtype == np.dtype("<i8"):
        return values
    if values.dtype.kind == "u" and values.dtype.itemsize == 8 and values.dtype.isnative:
        return values.view(np.int64)
    return values.astype(np.int64)


def _fits32(hi: int, bins: int) -> bool:
    """Whether binning coordinates below ``hi`` into ``bins`` can run in int32 (half the memory traffic)."""
    return (hi + 2) * (bins + 2) < 2**31


def _bin(x: np.ndarray, lo: int, hi: int, bins: int, clip: bool, out: np.ndarray) -> np.ndarray:
    """Bin of each coordinate into ``out``: ``0..bins-1``, or with ``clip`` ``1..bins`` plus 0 / ``bins+1``
    for coordinates below / above ``[lo, hi)``. ``out`` may be int32 when :func:`_fits32` allows it."""
    n = hi - lo
    if (n + 1) * bins >= 2**63:  # x * bins would overflow int64: search the exact block edges instead
        found = np.searchsorted(block_edges(lo, hi, bins), x, side="right")
        np.copyto(out, found if clip else found - 1, casting="unsafe")
        return out
    if clip:
        np.clip(x, lo - 1, hi, out=out, casting="unsafe")
    else:
        np.copyto(out, x, casting="unsafe")  # a plain cast, then same-type arithmetic (faster than mixed)
    if lo:
        out -= lo
    out *= bins
    out //= n
    if clip:
        out += 1
    return out


@dataclass(frozen=True, slots=True)
class _Axis:
    """How coordinates along one axis become the bins :func:`_bin` defines: by the multiply-shift of
    :func:`_axis`, or by :func:`_bin` itself when ``multiplier`` is 0 (that shift would not be exact)."""

    lo: int
    hi: int
    bins: int
    clip: bool
    multiplier: np.uint64
    addend: np.uint64
    shift: np.uint64

    @property
    def span(self) -> int:
        """Number of bins, counting the two outside ones when clipping."""
        return self.bins + 2 if self.clip else self.bins


def _axis(lo: int, hi: int, bins: int, clip: bool) -> _Axis:
    """Binning of ``[lo, hi)`` into ``bins`` as ``(x * M + A) >> S`` in wrapping uint64, when that is exact.

    With ``y = x - lo`` (``x - lo + 1`` after clipping ``x`` to ``[lo - 1, hi]``) in ``[0, top]``, :func:`_bin`
    gives ``(y * bins + slack) // n``, ``slack = n - bins`` when clipping, else 0. ``M = ceil(bins * 2**S / n)``
    and ``ceil(slack * 2**S / n)`` overshoot that quotient by less than ``(top + 1) / 2**S <= 1 / n``, too
    little to carry its fraction (at most ``(n - 1) / n``) past the next integer. ``A`` also holds
    ``-(x - y) * M`` so that ``x`` needs no subtraction: that wraps modulo 2**64 harmlessly, as the true
    ``y * M + A`` stays below 2**64 (else this returns ``multiplier`` 0).
    """
    n = hi - lo
    top, slack, base = (n + 1, n - bins, lo - 1) if clip else (n - 1, 0, lo)
    shift = (n * (top + 1) - 1).bit_length()
    multiplier = -(-(bins << shift) // n)
    addend = -(-(slack << shift) // n)
    if top * multiplier + addend >= 2**64:
        multiplier = addend = shift = 0
    wrapped = (addend - base * multiplier) % 2**64
    return _Axis(lo, hi, bins, clip, np.uint64(multiplier), np.uint64(wrapped), np.uint64(shift))


def _bin_into(x: np.ndarray, axis: _Axis, out: np.ndarray) -> np.ndarray:
    """:func:`_bin` of int64 coordinates ``x`` along ``axis`` into the uint64 array ``out``."""
    if not axis.multiplier:
        _bin(x, axis.lo, axis.hi, axis.bins, axis.clip, out.view(np.int64))
        return out
    if axis.clip:
        np.clip(x, axis.lo - 1, axis.hi, out=out.view(np.int64))
        np.multiply(out, axis.multiplier, out=out)
    else:
        np.multiply(x.view(np.uint64), axis.multiplier, out=out)
    if axis.addend:
        np.add(out, axis.addend, out=out)
    return np.right_shift(out, axis.shift, out=out)


def _tally(rows: np.ndarray, cols: np.ndarray, row_axis: _Axis, col_axis: _Axis,
           cancelled: CancelCheck | None, progress: Progress | None) -> np.ndarray:
    """Entries per pixel ``row_bin * col_axis.span + col_bin``, flat; int32 unless there are more entries.

    Pixel ids are made a cache-sized chunk at a time and counted into one table by ``np.add.at``: cheaper
    than ``np.bincount``, which needs all ids in one array or a fresh table per call. An int32 table is half
    the cache footprint of an int64 one.
    """
    nnz, width = rows.size, np.uint64(col_axis.span)
    counts = np.zeros(row_axis.span * col_axis.span, np.int32 if nnz <= _TALLY32 else np.int64)
    one = counts.dtype.type(1)  # a Python 1 sends ufunc.at down a casting path many times slower
    pixels = np.empty(min(_TALLY, max(1, nnz)), np.uint64)
    col_bins = np.empty_like(pixels)
    for s in range(0, nnz, _TALLY):
        checkpoint(cancelled)
        e = min(nnz, s + _TALLY)
        pix = _bin_into(rows[s:e], row_axis, pixels[:e - s])
        pix *= width
        pix += _bin_into(cols[s:e], col_axis, col_bins[:e - s])
        np.add.at(counts, pix.view(np.int64), one)
        release(rows[s:e])  # pages of a file map read so far leave the resident set
        release(cols[s:e])
        report(progress, e, nnz)
    return counts


def _crop(flat: np.ndarray, hh: int, ww: int, clip: bool) -> np.ndarray:
    if not clip:
        return flat.reshape(hh, ww).astype(np.int64, copy=False)
    return flat.reshape(hh + 2, ww + 2)[1:-1, 1:-1].astype(np.int64)


def spy_density(rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int], region: Region | None = None,
                out_shape: tuple[int, int] = (1024, 1024), *, cancelled: CancelCheck | None = None,
                progress: Progress | None = None) -> SpyImage:
    """Count the entries ``(rows[k], cols[k])`` per pixel of an ``out_shape`` image of ``region``.

    Row-sorted coordinates (CSR order, sorted COO) take a faster path that bins each band of rows on its
    own; any order gives the same counts. ``progress(done, nnz)`` and ``cancelled()`` run per chunk.
    """
    rows, cols = _index(rows), _index(cols)
    if rows.shape != cols.shape or rows.ndim != 1:
        raise ValueError(f"rows and cols must be 1-D of one length, got {rows.shape} and {cols.shape}")
    nrows, ncols = shape
    r0, r1, c0, c1 = check_region((nrows, ncols), region)
    if _is_sorted(rows):
        starts = np.searchsorted(rows, block_edges(r0, r1, check_out_shape(out_shape)[0]))
        return _banded(starts, cols, (r0, r1, c0, c1), shape[1], out_shape, cancelled, progress)
    h, w = check_out_shape(out_shape)
    re, ce = block_edges(r0, r1, h), block_edges(c0, c1, w)
    hh, ww = len(re) - 1, len(ce) - 1
    if r1 == r0 or c1 == c0:
        return SpyImage(np.zeros((hh if r1 > r0 else 0, ww if c1 > c0 else 0), np.int64), re, ce)
    clip = (r0, r1, c0, c1) != (0, shape[0], 0, shape[1])
    row_axis, col_axis = _axis(r0, r1, hh, clip), _axis(c0, c1, ww, clip)
    counts = _tally(rows, cols, row_axis, col_axis, cancelled, progress)
    return SpyImage(_crop(counts, hh, ww, clip), re, ce)


def spy_density_csr(indptr: np.ndarray, indices: np.ndarray, shape: tuple[int, int],
                    region: Region | None = None, out_shape: tuple[int, int] = (1024, 1024), *,
                    cancelled: CancelCheck | None = None, progress: Progress | None = None) -> SpyImage:
    """:func:`spy_density` of a CSR matrix (``indptr`` of ``rows + 1`` entries, column ``indices``)."""
    nrows, ncols = shape
    r0, r1, c0, c1 = check_region((nrows, ncols), region)
    h, _ = check_out_shape(out_shape)
    starts = _index(indptr)[block_edges(r0, r1, h)]
    return _banded(starts, _index(indices), (r0, r1, c0, c1), shape[1], out_shape, cancelled, progress)


def _banded(starts: np.ndarray, cols: np.ndarray, region: Region, ncols: int, out_shape: tuple[int, int],
            cancelled: CancelCheck | None, progress: Progress | None) -> SpyImage:
    """Spy counts when the entries of row band ``i`` are ``cols[starts[i]:starts[i+1]]``."""
    r0, r1, c0, c1 = region
    h, w = check_out_shape(out_shape)
    re, ce = block_edges(r0, r1, h), block_edges(c0, c1, w)
    hh, ww = len(re) - 1, len(ce) - 1
    counts = np.zeros((hh, ww), np.int64)
    if r1 == r0 or c1 == c0 or hh == 0:
        return SpyImage(counts[:hh if r1 > r0 else 0, :ww if c1 > c0 else 0], re, ce)
    clip = (c0, c1) != (0, ncols)
    width = ww + 2 if clip else ww
    total = int(starts[-1] - starts[0])
    tmp = np.empty(min(_SUB, max(1, total)), np.int32 if _fits32(c1, ww) else np.int64)
    i = 0
    while i < hh:
        checkpoint(cancelled)
        j = i + 1  # grow the group of bands while it stays small
        while j < hh and starts[j + 1] - starts[i] <= _SUB and (j + 1 - i) * width <= _SUB:
            j += 1
        a, b = int(starts[i]), int(starts[j])
        group = np.zeros((j - i) * width, np.int64)
        for s in range(a, b, _SUB):
            e = min(b, s + _SUB)
            pix = _bin(cols[s:e], c0, c1, ww, clip, tmp[:e - s])
            if j - i > 1:  # a multi-band group holds at most _SUB entries: one pass
                pix += np.repeat(np.arange(j - i, dtype=pix.dtype) * width, np.diff(starts[i:j + 1]))
            group += np.bincount(pix, minlength=(j - i) * width)
        counts[i:j] = group.reshape(j - i, width)[:, 1:-1] if clip else group.reshape(j - i, width)
        report(progress, b - int(starts[0]), total)
        i = j
    return SpyImage(counts, re, ce)


def _is_sorted(x: np.ndarray) -> bool:
    """Whether ``x`` never decreases (checked chunk by chunk, stopping at the first descent)."""
    for s in range(0, x.size - 1, _SUB):
        part = x[s:s + _SUB + 1]
        if np.any(part[1:] < part[:-1]):
            return False
        release(part)
    return True


def markers(rows: np.ndarray, cols: np.ndarray, values: np.ndarray | None, region: Region,
            threshold: int = 4096) -> tuple[np.ndarray, np.ndarray, np.ndarray | None] | None:
    """The exact entries ``(rows, cols, values)`` inside ``region``, or ``None`` when there are more than
    ``threshold`` (too many to draw one marker each)."""
    rows, cols = _index(rows), _index(cols)
    r0, r1, c0, c1 = region
    keep, count, start = [], 0, 0
    for row_part, col_part in zip(scan(rows), scan(cols), strict=True):
        found = np.flatnonzero((row_part >= r0) & (row_part < r1) & (col_part >= c0) & (col_part < c1))
        count += found.size
        if count > threshold:
            return None
        keep.append(found + start)
        start += row_part.size
    at = np.concatenate(keep) if keep else np.zeros(0, np.int64)
    return rows[at], cols[at], None if values is None else np.asarray(values)[at]


def markers_csr(indptr: np.ndarray, indices: np.ndarray, values: np.ndarray | None, region: Region,
                threshold: int = 4096) -> tuple[np.ndarray, np.ndarray, np.ndarray | None] | None:
    """:func:`markers` of a CSR matrix, looking only at the entries of the region's rows."""
    indptr = _index(indptr)
    r0, r1, c0, c1 = region
    a, b = int(indptr[r0]), int(indptr[r1])
    rows = np.repeat(np.arange(r0, r1, dtype=np.int64), np.diff(indptr[r0:r1 + 1]))
    part = None if values is None else np.asarray(values)[a:b]
    return markers(rows, _index(indices)[a:b], part, (r0, r1, c0, c1), threshold)


@dataclass(frozen=True, slots=True)
class SparsePlane:
    """Entries of an N-D COO tensor on one 2-D plane: ``selected`` indexes the tensor's values, ``None`` when
    every entry is on the plane (then ``rows`` and ``cols`` are views of the coordinates, not copies)."""

    rows: np.ndarray
    cols: np.ndarray
    selected: np.ndarray | None
    shape: tuple[int, int]

    @property
    def positions(self) -> np.ndarray:
        """Positions of the plane's entries among the tensor's values."""
        return np.arange(self.rows.size, dtype=np.int64) if self.selected is None else self.selected

    def values_of(self, values: np.ndarray) -> np.ndarray:
        """The plane's entries of the tensor's ``values`` (the array itself when every entry is on the plane)."""
        return values if self.selected is None else values[self.selected]


def select_axes(coords: np.ndarray, shape: tuple[int, ...], axes: tuple[int, int] = (0, 1),
                fixed: Mapping[int, int] | None = None, project: bool = False) -> SparsePlane:
    """Entries of a COO tensor (``coords`` of shape ``(ndim, nnz)``) on the plane ``axes`` with the other
    axes at ``fixed`` indices. Axes not in ``fixed`` are at index 0, or with ``project=True`` any index
    (all entries along them are shown, summed in the spy counts)."""
    ndim = len(shape)
    if coords.ndim != 2 or coords.shape[0] != ndim:
        raise ValueError(f"coords must be (ndim={ndim}, nnz), got {coords.shape}")
    row, col = (int(a) % ndim if -ndim <= int(a) < ndim else -1 for a in axes)
    if row < 0 or col < 0 or row == col:
        raise ValueError(f"axes {tuple(axes)} must be two distinct axes of a {ndim}-D tensor")
    wanted = {} if project else {k: 0 for k in range(ndim) if k not in (row, col)}
    for key, value in (fixed or {}).items():
        k = int(key) % ndim if -ndim <= int(key) < ndim else -1
        if k < 0 or k in (row, col):
            raise ValueError(f"cannot fix axis {key} of a {ndim}-D tensor shown on axes {(row, col)}")
        if not -shape[k] <= int(value) < shape[k]:
            raise IndexError(f"index {value} is out of range for axis {k} of extent {shape[k]}")
        wanted[k] = int(value) % shape[k]
    plane_shape = (int(shape[row]), int(shape[col]))
    if not wanted:
        return SparsePlane(_index(coords[row]), _index(coords[col]), None, plane_shape)
    keep = np.ones(coords.shape[1], dtype=bool)
    for k, value in wanted.items():
        keep &= _index(coords[k]) == value
    positions = np.flatnonzero(keep)
    return SparsePlane(_index(coords[row])[positions], _index(coords[col])[positions], positions, plane_shape)
