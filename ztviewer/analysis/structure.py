"""Structure facts of sparse matrices (and of dense planes viewed as sparse, exact zeros being structural).

``nnz`` counts stored entries (duplicates in a COO list count each time; stored zeros are entries, reported
apart as ``explicit_zeros`` when values are given). Bandwidths follow LAPACK: the lower bandwidth is
``max(i - j)`` over entries below the diagonal, the upper ``max(j - i)`` above it, 0 when there are none.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ztviewer.codec.mapped_pages import scan, scan_pairs

from ._common import CancelCheck, Progress, Region, block_edges, check_out_shape, check_region, checkpoint, report
from .reduce import STRIP_BYTES, _reduce_cols, _reduce_rows, _strips
from .spy import SpyImage, _index

_CHUNK = 1 << 20
#: above this many rows / columns, empty rows and columns are counted by sorting instead of a dense tally.
TALLY_LIMIT = 1 << 26


@dataclass(frozen=True, slots=True)
class SparseStructure:
    """Facts of a 2-D sparsity pattern (see the module docstring)."""

    shape: tuple[int, int]
    nnz: int
    lower_bandwidth: int
    upper_bandwidth: int
    empty_rows: int
    empty_cols: int
    explicit_zeros: int | None = None

    @property
    def density(self) -> float:
        """Stored entries over rows × columns (0.0 for an empty shape)."""
        size = self.shape[0] * self.shape[1]
        return self.nnz / size if size else 0.0

    @property
    def bandwidth(self) -> int:
        """``max |i - j|`` over the entries."""
        return max(self.lower_bandwidth, self.upper_bandwidth)


def _bandwidths(rows: np.ndarray, cols: np.ndarray) -> tuple[int, int]:
    lower = upper = 0
    for row_part, col_part in scan_pairs(rows, cols, _CHUNK):
        d = row_part - col_part
        if d.size:
            lower, upper = max(lower, int(d.max())), max(upper, int(-d.min()))
    return lower, upper


def _empty(index: np.ndarray, extent: int) -> int:
    if extent <= TALLY_LIMIT:
        seen = np.zeros(extent, bool)
        for part in scan(index, _CHUNK):
            seen[part] = True
        return extent - int(np.count_nonzero(seen))
    return extent - int(np.unique(index).size)


def structure_facts(rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int],
                    values: np.ndarray | None = None) -> SparseStructure:
    """Facts of the entries ``(rows[k], cols[k])`` of a ``shape`` matrix (``values`` for explicit zeros)."""
    rows, cols = _index(rows), _index(cols)
    lower, upper = _bandwidths(rows, cols)
    zeros = None if values is None else sum(int(np.count_nonzero(part == 0)) for part in scan(np.asarray(values)))
    return SparseStructure((int(shape[0]), int(shape[1])), int(rows.size), lower, upper,
                           _empty(rows, shape[0]), _empty(cols, shape[1]), zeros)


def structure_facts_csr(indptr: np.ndarray, indices: np.ndarray, shape: tuple[int, int],
                        values: np.ndarray | None = None) -> SparseStructure:
    """:func:`structure_facts` of a CSR matrix, using the row pointers for the row facts."""
    indptr, indices = _index(indptr), _index(indices)
    per_row = np.diff(indptr)
    nonempty = np.flatnonzero(per_row)
    lower = upper = 0
    if nonempty.size:
        first = np.minimum.reduceat(indices, indptr[nonempty])
        last = np.maximum.reduceat(indices, indptr[nonempty])
        lower = max(0, int((nonempty - first).max()))
        upper = max(0, int((last - nonempty).max()))
    zeros = None if values is None else int(np.count_nonzero(np.asarray(values) == 0))
    return SparseStructure((int(shape[0]), int(shape[1])), int(indices.size), lower, upper,
                           int(shape[0]) - int(nonempty.size), _empty(indices, shape[1]), zeros)


def nnz_per_line(index: np.ndarray, extent: int, bins: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Entries per row (pass the row indices) or per column (the column indices).

    With ``bins`` below ``extent`` the lines are grouped into ``bins`` bands (``block_edges``) and the
    counts summed per band, for a profile at screen resolution. Returns ``(counts, edges)``.
    """
    index = _index(index)
    edges = block_edges(0, extent, bins or extent)
    nb = len(edges) - 1
    if nb == extent and index.size <= _CHUNK:
        return np.bincount(index, minlength=extent), edges
    counts = np.zeros(nb, np.int64)
    for chunk in scan(index, _CHUNK):
        if nb == extent:
            np.add.at(counts, chunk, np.int64(1))
            continue
        part = chunk * nb
        part //= extent
        counts += np.bincount(part, minlength=nb)
    return counts, edges


def nnz_per_row(rows: np.ndarray, n_rows: int, bins: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Entries per row (or per band of rows with ``bins``) from COO row indices; see :func:`nnz_per_line`."""
    return nnz_per_line(rows, n_rows, bins)


def nnz_per_col(cols: np.ndarray, n_cols: int, bins: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Entries per column (or per band of columns with ``bins``); see :func:`nnz_per_line`."""
    return nnz_per_line(cols, n_cols, bins)


def nnz_per_row_csr(indptr: np.ndarray, bins: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Entries per row (or per band of rows) of a CSR matrix, from its row pointers alone."""
    indptr = _index(indptr)
    edges = block_edges(0, indptr.size - 1, bins or indptr.size - 1)
    return np.diff(indptr[edges]), edges


def count_histogram(counts: np.ndarray, bins: int = 32) -> tuple[np.ndarray, np.ndarray]:
    """Distribution of per-line entry counts (how many rows hold k entries), as ``np.histogram``."""
    return np.histogram(counts, bins=bins, range=(0, max(1, int(counts.max(initial=0)))))


def dense_structure(plane: np.ndarray, *, strip_bytes: int = STRIP_BYTES, cancelled: CancelCheck | None = None,
                    progress: Progress | None = None) -> tuple[SparseStructure, np.ndarray, np.ndarray]:
    """Facts of a dense 2-D plane seen as sparse (entries = elements ``!= 0``; NaN is an entry), read in row
    strips. Returns ``(facts, nnz_per_row, nnz_per_col)``."""
    rows, cols = plane.shape
    per_row = np.zeros(rows, np.int64)
    per_col = np.zeros(cols, np.int64)
    lower = upper = 0
    step = max(1, strip_bytes // max(1, 2 * cols))
    for a in range(0, rows, step):
        checkpoint(cancelled)
        mask = np.asarray(plane[a:a + step]) != 0
        per_row[a:a + len(mask)] = np.count_nonzero(mask, axis=1)
        per_col += np.count_nonzero(mask, axis=0)
        hit = np.flatnonzero(per_row[a:a + len(mask)])
        if hit.size:
            first = mask[hit].argmax(axis=1)
            last = cols - 1 - mask[hit, ::-1].argmax(axis=1)
            lower = max(lower, int((a + hit - first).max()))
            upper = max(upper, int((last - a - hit).max()))
        report(progress, min(rows, a + step), rows)
    facts = SparseStructure((rows, cols), int(per_row.sum()), lower, upper,
                            int(np.count_nonzero(per_row == 0)), int(np.count_nonzero(per_col == 0)))
    return facts, per_row, per_col


def dense_spy(plane: np.ndarray, region: Region | None = None, out_shape: tuple[int, int] = (1024, 1024), *,
              strip_bytes: int = STRIP_BYTES, cancelled: CancelCheck | None = None,
              progress: Progress | None = None) -> SpyImage:
    """Spy counts (elements ``!= 0`` per pixel block) of ``plane[r0:r1, c0:c1]``, in bounded row strips."""
    r0, r1, c0, c1 = check_region(plane.shape, region)
    h, w = check_out_shape(out_shape)
    re, ce = block_edges(r0, r1, h), block_edges(c0, c1, w)
    counts = np.zeros((len(re) - 1, len(ce) - 1), np.int64)
    if r1 == r0 or c1 == c0:
        return SpyImage(counts, re, ce)
    local = ce - c0
    max_rows = max(1, strip_bytes // max(1, 10 * (c1 - c0)))
    for a, b, i0, i1 in _strips(re, max_rows):
        checkpoint(cancelled)
        mask = (np.asarray(plane[a:b, c0:c1]) != 0).view(np.uint8)
        rows = _reduce_rows(mask, re[i0:i1 + 1].clip(a, b) - a, np.add, np.int64)
        counts[i0:i1] += _reduce_cols(rows, local[:-1], np.diff(local), np.add)
        report(progress, b - r0, r1 - r0)
    return SpyImage(counts, re, ce)


def dense_markers(plane: np.ndarray, region: Region, threshold: int = 4096
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Non-zero elements ``(rows, cols, values)`` of a dense plane inside ``region`` (at most ``threshold``
    elements are read), or ``None`` when the region is larger than ``threshold`` elements."""
    r0, r1, c0, c1 = check_region(plane.shape, region)
    if (r1 - r0) * (c1 - c0) > threshold:
        return None
    block = np.asarray(plane[r0:r1, c0:c1])
    i, j = np.nonzero(block)
    return i + r0, j + c0, block[i, j]
