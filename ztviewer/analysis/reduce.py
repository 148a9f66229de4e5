"""Screen-sized images of large 2-D planes: strided previews and block reductions.

A heatmap of a huge tensor is painted in two steps. :func:`strided_preview` gathers every ``s``-th row and
column straight from the (memory-mapped) plane, touching only about ``max_rows × max_cols`` elements, so
the first paint is immediate. :func:`block_reduce` then computes each output pixel from its whole block of
source elements (max-abs, mean, max or min), so a spike hidden by the stride shows up. Zooming calls
:func:`block_reduce` again for the visible ``region`` only; once the region has no more rows and columns
than the output image, the exact values are returned.

NaN handling: reductions ignore NaN; a pixel is NaN only when its whole block is NaN. ``mean`` of a block
holding both +Inf and -Inf is NaN, of a block with only +Inf (and finite values) +Inf, as ``np.nanmean``.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ._common import (
    CancelCheck,
    Progress,
    Region,
    block_edges,
    check_out_shape,
    check_region,
    checkpoint,
    report,
)
from .slicing import ComplexMode, display_dtype, is_identity, presenter

Method = Literal["maxabs", "mean", "max", "min"]
METHODS: tuple[str, ...] = ("maxabs", "mean", "max", "min")
#: default bound on the temporaries of one strip of source rows.
STRIP_BYTES = 16 << 20
_SUM_ROWS = 64  # float32 sums run over at most this many rows before being carried in float64
_GATHER_LIMIT = 32  # column blocks up to this width are reduced by gathering, wider ones by reduceat


@dataclass(frozen=True, slots=True)
class Image:
    """A displayed image and where its pixels come from.

    Attributes
    ----------
    data:
        ``(h, w)`` C-contiguous float32 or float64 array.
    row_edges, col_edges:
        ``h + 1`` / ``w + 1`` int64 source indices: pixel ``(i, j)`` covers rows
        ``row_edges[i]:row_edges[i + 1]`` and columns ``col_edges[j]:col_edges[j + 1]`` of the plane. For a
        strided preview the pixel shows the element at ``(row_edges[i], col_edges[j])``.
    method:
        ``"strided"``, ``"exact"`` (one element per pixel) or the reduction (``"maxabs"``, …).
    """

    data: np.ndarray
    row_edges: np.ndarray
    col_edges: np.ndarray
    method: str

    @property
    def exact(self) -> bool:
        """True when every pixel is exactly one source element."""
        return bool(np.all(np.diff(self.row_edges) == 1) and np.all(np.diff(self.col_edges) == 1))


def strided_preview(plane: np.ndarray, max_rows: int, max_cols: int, *, region: Region | None = None,
                    dtype_name: str | None = None, complex_mode: ComplexMode = "magnitude") -> Image:
    """Every ``s0``-th row and ``s1``-th column of ``plane[r0:r1, c0:c1]``, in one strided gather.

    ``s0 = ceil((r1 - r0) / max_rows)`` and ``s1 = ceil((c1 - c0) / max_cols)``, so the result equals
    ``plane[r0:r1:s0, c0:c1:s1]`` (presented as floats, see :func:`~ztviewer.analysis.slicing.presenter`)
    and has at most ``max_rows × max_cols`` pixels. Only those elements are read from the map.
    """
    rows, cols = preview_grid(plane.shape, max_rows, max_cols, region)
    return preview_image(np.asarray(plane[rows, cols]), plane.dtype, rows, cols, dtype_name, complex_mode)


def preview_grid(shape: tuple[int, int], max_rows: int, max_cols: int,
                 region: Region | None = None) -> tuple[slice, slice]:
    """The strided slices :func:`strided_preview` reads: ``(slice(r0, r1, s0), slice(c0, c1, s1))``."""
    r0, r1, c0, c1 = check_region(shape, region)
    max_rows, max_cols = check_out_shape((max_rows, max_cols))
    return slice(r0, r1, max(1, -(-(r1 - r0) // max_rows))), slice(c0, c1, max(1, -(-(c1 - c0) // max_cols)))


def preview_image(view: np.ndarray, dtype: np.dtype, rows: slice, cols: slice, dtype_name: str | None = None,
                  complex_mode: ComplexMode = "magnitude") -> Image:
    """The :func:`strided_preview` image of ``view``, the elements at the :func:`preview_grid` ``rows, cols`` of a
    plane of ``dtype`` (a copy of its own: the image must outlive the file's map)."""
    if is_identity(dtype, dtype_name):
        gathered = view.base is None and view.flags.c_contiguous and view.flags.writeable  # already a copy
        data = view if gathered else np.array(view, order="C")
    else:
        data = presenter(dtype, dtype_name, complex_mode)(view)
        data = np.ascontiguousarray(data, dtype=display_dtype(dtype, dtype_name))
    row_edges = np.append(np.arange(rows.start, rows.stop, rows.step, dtype=np.int64), rows.stop)
    col_edges = np.append(np.arange(cols.start, cols.stop, cols.step, dtype=np.int64), cols.stop)
    return Image(data, row_edges, col_edges, "strided")


def block_reduce(plane: np.ndarray, region: Region | None = None, out_shape: tuple[int, int] = (1024, 1024),
                 method: Method = "maxabs", *, dtype_name: str | None = None,
                 complex_mode: ComplexMode = "magnitude", strip_bytes: int = STRIP_BYTES,
                 cancelled: CancelCheck | None = None, progress: Progress | None = None) -> Image:
    """Reduce ``plane[r0:r1, c0:c1]`` to at most ``out_shape`` pixels, each from its whole block.

    Parameters
    ----------
    plane:
        2-D array (a memory-mapped view, a :func:`~ztviewer.analysis.slicing.plane`, or any object with
        ``shape``, ``dtype`` and 2-D basic slicing, such as :class:`~ztviewer.analysis.tt_view.TTPlane`).
    region:
        ``(r0, r1, c0, c1)``, default the whole plane.
    out_shape:
        ``(h, w)`` wanted; a side with fewer source elements than pixels is not reduced (one element per
        pixel). When both sides fit, the exact (signed) values come back with ``method="exact"``, whatever
        the reduction asked for. Blocks follow
        :func:`~ztviewer.analysis._common.block_edges` (sizes differ by at most one).
    method:
        ``"maxabs"`` (max of ``|x|``), ``"mean"``, ``"max"`` or ``"min"``. NaN is ignored unless the whole
        block is NaN (see the module docstring).
    dtype_name, complex_mode:
        Presentation of the values (raw bfloat16 / float8 bits, complex part), applied strip by strip.
    strip_bytes:
        Bound on the temporaries of one strip; peak extra memory is about ``strip_bytes`` plus the output.
    cancelled, progress:
        ``cancelled()`` is checked before each strip (raising ``Cancelled``); ``progress(done_rows,
        total_rows)`` is called after each.

    Returns
    -------
    Image
        float32 data for float32 and smaller types, float64 for float64 / 32- and 64-bit integers; means
        of float32 data are summed in float32 over runs of at most 64 rows, in float64 beyond.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if getattr(plane, "ndim", len(plane.shape)) != 2:
        raise ValueError(f"block_reduce needs a 2-D plane, got shape {plane.shape}")
    r0, r1, c0, c1 = check_region(plane.shape, region)
    h, w = check_out_shape(out_shape)
    row_edges, col_edges = block_edges(r0, r1, h), block_edges(c0, c1, w)
    out_dtype = display_dtype(plane.dtype, dtype_name)
    present = presenter(plane.dtype, dtype_name, complex_mode)
    nr, nc = r1 - r0, c1 - c0
    if nr == 0 or nc == 0:
        return Image(np.zeros((len(row_edges) - 1, len(col_edges) - 1), out_dtype), row_edges, col_edges,
                     "exact")
    if len(row_edges) - 1 == nr and len(col_edges) - 1 == nc:
        checkpoint(cancelled)
        data = np.array(present(np.asarray(plane[r0:r1, c0:c1])), dtype=out_dtype, order="C")
        report(progress, nr, nr)
        return Image(data, row_edges, col_edges, "exact")
    reducer = _Reducer(method, out_dtype, len(row_edges) - 1, col_edges - c0)
    max_rows = max(1, strip_bytes // (3 * nc * max(out_dtype.itemsize, np.dtype(plane.dtype).itemsize)))
    if method == "mean" and out_dtype == np.float32:
        max_rows = min(max_rows, _SUM_ROWS)
    with np.errstate(invalid="ignore", over="ignore"):
        for a, b, i0, i1 in _strips(row_edges, max_rows):
            checkpoint(cancelled)
            raw = np.asarray(plane[a:b, c0:c1])
            values = present(raw)
            owned = values is not raw and not np.may_share_memory(values, raw)  # e.g. .real is a view
            reducer.add(values, owned, row_edges[i0:i1 + 1].clip(a, b) - a, i0)
            report(progress, b - r0, nr)
    return Image(reducer.result(np.diff(row_edges)), row_edges, col_edges, method)


def _strips(edges: np.ndarray, max_rows: int):
    """(a, b, i0, i1): source rows [a, b) holding whole blocks i0..i1-1, or a piece of block i0 (i1=i0+1)."""
    i, count = 0, len(edges) - 1
    while i < count:
        a = int(edges[i])
        j = int(np.searchsorted(edges, a + max_rows, side="right")) - 1
        if j > i:
            yield a, int(edges[j]), i, j
            i = j
        else:
            stop = int(edges[i + 1])
            for s in range(a, stop, max_rows):
                yield s, min(stop, s + max_rows), i, i + 1
            i += 1


def _reduce_rows(values: np.ndarray, local: np.ndarray, ufunc: np.ufunc, dtype=None) -> np.ndarray:
    """Reduce runs of rows ``local[k]:local[k+1]`` of ``values`` → ``(len(local) - 1, ncols)``."""
    sizes = np.diff(local)
    if sizes.min() == sizes.max():
        size = int(sizes[0])
        if size == 1:
            return values if dtype is None else values.astype(dtype)
        return ufunc.reduce(values.reshape(len(sizes), size, values.shape[1]), axis=1, dtype=dtype)
    out = np.empty((len(sizes), values.shape[1]), dtype=dtype or values.dtype)
    for k in range(len(sizes)):
        ufunc.reduce(values[local[k]:local[k + 1]], axis=0, out=out[k], dtype=dtype)
    return out


def _reduce_cols(values: np.ndarray, starts: np.ndarray, sizes: np.ndarray, ufunc: np.ufunc) -> np.ndarray:
    """Reduce column blocks (``starts``, ``sizes``) of ``values`` → ``(rows, len(starts))``."""
    smin, smax = int(sizes.min()), int(sizes.max())
    if smax == 1:
        return values
    if smin > _GATHER_LIMIT:
        return ufunc.reduceat(values, starts, axis=1)
    if smin == smax:  # equal widths: fold strided views, no gathering
        acc = values[:, 0::smin].copy()
        for q in range(1, smin):
            ufunc(acc, values[:, q::smin], out=acc)
        return acc
    acc = np.take(values, starts, axis=1)
    for q in range(1, smin):
        ufunc(acc, np.take(values, starts + q, axis=1), out=acc)
    for q in range(smin, smax):
        sel = np.flatnonzero(sizes > q)
        acc[:, sel] = ufunc(acc[:, sel], np.take(values, starts[sel] + q, axis=1))
    return acc


class _Reducer:
    """Accumulates strips into the output image of one block reduction."""

    def __init__(self, method: str, out_dtype: np.dtype, rows: int, col_local: np.ndarray) -> None:
        self.method = method
        self.out_dtype = out_dtype
        self.starts = col_local[:-1]
        self.sizes = np.diff(col_local)
        shape = (rows, len(self.starts))
        if method == "mean":
            self.sums = np.zeros(shape, np.float64)
            self.nans: np.ndarray | None = None  # NaN count per pixel, allocated at the first NaN
        else:
            self.acc = np.full(shape, np.nan, out_dtype)
            self.ufunc = np.fmin if method == "min" else np.fmax

    def add(self, values: np.ndarray, owned: bool, local: np.ndarray, i0: int) -> None:
        rows = slice(i0, i0 + len(local) - 1)
        if self.method == "mean":
            self._add_mean(values, local, rows)
            return
        if self.method == "maxabs":
            values = np.abs(values, out=values) if owned else np.abs(values)
        part = _reduce_cols(_reduce_rows(values, local, self.ufunc), self.starts, self.sizes, self.ufunc)
        self.ufunc(self.acc[rows], part, out=self.acc[rows])

    def _add_mean(self, values: np.ndarray, local: np.ndarray, rows: slice) -> None:
        sums = _reduce_rows(values, local, np.add)
        if np.isnan(sums).any():
            nan = np.isnan(values)
            sums = _reduce_rows(np.where(nan, 0, values), local, np.add)
            nans = _reduce_cols(_reduce_rows(nan, local, np.add, np.int64), self.starts, self.sizes, np.add)
            if self.nans is None:
                self.nans = np.zeros(self.sums.shape, np.float64)
            self.nans[rows] += nans
        self.sums[rows] += _reduce_cols(sums.astype(np.float64), self.starts, self.sizes, np.add)

    def result(self, row_sizes: np.ndarray) -> np.ndarray:
        if self.method != "mean":
            return self.acc
        sums = self.sums
        if self.nans is None:
            sums /= row_sizes[:, None]
            sums /= self.sizes[None, :]
        else:
            counts = np.multiply.outer(row_sizes, self.sizes).astype(np.float64)
            counts -= self.nans
            self.nans = None
            with np.errstate(invalid="ignore", divide="ignore"):
                sums /= counts
            sums[counts == 0] = np.nan
        return sums.astype(self.out_dtype, copy=False)


def display_levels(image: np.ndarray, clip_percent: float = 0.0) -> tuple[float, float]:
    """Colour levels (low, high) over the finite pixels of ``image``, optionally clipping outliers.

    ``clip_percent`` percent of the finite pixels are left out at each end (0 = full finite range).
    Returns ``(0.0, 1.0)`` when no pixel is finite.
    """
    finite = image[np.isfinite(image)]
    if finite.size == 0:
        return 0.0, 1.0
    if clip_percent > 0:
        low, high = np.percentile(finite, [clip_percent, 100.0 - clip_percent])
    else:
        low, high = finite.min(), finite.max()
    return float(low), float(high)


def level_sample(plane: np.ndarray, count: int = 1 << 16, *, region: Region | None = None,
                 dtype_name: str | None = None, complex_mode: ComplexMode = "magnitude",
                 row_step: int = 1) -> np.ndarray:
    """About ``count`` element values of ``plane[r0:r1, c0:c1]`` (presented as displayed), spread so that no
    row or column is over-represented: evenly spaced rows, each read at columns shifted by a different phase.

    Colour levels taken from percentiles of this sample describe the data; a reduced image's block extremes
    (or a strided grid that happens to hit an outlier column in every row) would not. Reads only these
    elements. With ``row_step`` the rows are taken among ``r0, r0 + row_step, …``: the rows a strided preview of
    that step has just read (on a cold file, other rows would each cost a disk read through the map)."""
    r0, r1, c0, c1 = check_region(plane.shape, region)
    index = sample_index(plane.shape, count, region, row_step)
    if index is None:
        values = np.asarray(plane[r0:r1, c0:c1]).reshape(-1)
    elif not isinstance(getattr(plane, "plane", plane), np.ndarray):   # computed planes (tensor trains): a grid
        side = max(1, int(np.sqrt(count)))
        return strided_preview(plane, side, side, region=region, dtype_name=dtype_name,
                               complex_mode=complex_mode).data.reshape(-1)
    else:
        pick = getattr(plane, "pick", None)   # a file map's plane reads scattered elements a few pages at a time
        values = pick(*index) if pick is not None else np.asarray(plane[index])
    return present_sample(values, plane.dtype, dtype_name, complex_mode)


def sample_index(shape: tuple[int, int], count: int, region: Region | None = None,
                 row_step: int = 1) -> tuple[np.ndarray, np.ndarray] | None:
    """The element indices :func:`level_sample` reads, ``(rows, cols)`` (1-D, rows ascending and within a row the
    columns ascending, read-only), or ``None`` when the region has at most ``count`` elements (all of them are
    read). The same for every plane of one shape: the slices of an N-D tensor, a plane shown again."""
    return _sample_index(tuple(shape), count, None if region is None else tuple(region), row_step)


@functools.lru_cache(maxsize=4)   # each about 1 MiB
def _sample_index(shape: tuple[int, int], count: int, region: Region | None,
                  row_step: int) -> tuple[np.ndarray, np.ndarray] | None:
    r0, r1, c0, c1 = check_region(shape, region)
    rows, cols = r1 - r0, c1 - c0
    if rows * cols <= count:
        return None
    row_stride = max(1, row_step)
    candidates = -(-rows // row_stride)
    n_rows = max(1, min(candidates, int(np.sqrt(count * rows / cols))))
    per_row = max(1, min(cols, count // n_rows))
    row_index = r0 + (np.arange(n_rows, dtype=np.int64) * candidates) // n_rows * row_stride
    step = cols / per_row
    phase = (np.arange(n_rows, dtype=np.float64) * 0.618034 % 1.0)[:, None]     # golden-ratio offsets
    col_index = c0 + np.minimum(((np.arange(per_row)[None, :] + phase) * step).astype(np.int64), cols - 1)
    index = np.repeat(row_index, per_row), col_index.reshape(-1)
    for array in index:
        array.flags.writeable = False   # shared by every caller asking for this shape
    return index


def present_sample(values: np.ndarray, dtype: np.dtype, dtype_name: str | None = None,
                   complex_mode: ComplexMode = "magnitude") -> np.ndarray:
    """Sampled stored values of a plane of ``dtype`` as displayed (an array of its own)."""
    if is_identity(dtype, dtype_name):
        return np.array(values)
    return np.asarray(presenter(dtype, dtype_name, complex_mode)(values), dtype=display_dtype(dtype, dtype_name))
