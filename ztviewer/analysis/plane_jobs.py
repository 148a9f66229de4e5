"""The computations behind the inspect views, as plain functions of a job context (no Qt).

A context is anything with ``is_cancelled()``, ``report_progress(done, total)`` and ``emit_partial(value)``
(the :class:`~ztviewer.workers.tasks.AnalysisTask` running the job, or :class:`Inline` in tests and the
benchmark). Every function reads only what the screen needs.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast, get_args

import numpy as np

from ztviewer.analysis import reduce as reducing
from ztviewer.analysis.reduce import (
    Image,
    Method,
    block_reduce,
    level_sample,
    present_sample,
    preview_grid,
    preview_image,
    sample_index,
    strided_preview,
)
from ztviewer.analysis.slicing import ComplexMode

from .mapped import ReleasingPlane, done_with, releasing
from .positional import cached_bytes

#: reductions offered to the user: label → method (``peak`` = the signed value of largest magnitude).
METHODS = {"peak": "peak", "max |x|": "maxabs", "mean": "mean", "max": "max", "min": "min"}
METHOD_HELP = {"peak": "the value of largest magnitude in each block, sign kept (spikes stay visible)",
               "maxabs": "the largest magnitude in each block", "mean": "the mean of each block",
               "max": "the largest value in each block", "min": "the smallest value in each block"}


PREVIEW_WAIT = 0.25


class Inline:
    """A job context that runs in the calling thread (tests, benchmarks)."""

    def __init__(self) -> None:
        self.partials: list = []

    def is_cancelled(self) -> bool:
        return False

    def report_progress(self, done: int, total: int, force: bool = False) -> None:
        pass

    def emit_partial(self, value) -> None:
        self.partials.append(value)


@dataclass(frozen=True, slots=True)
class Rendered:
    """An image of a plane region: ``image`` (analysis :class:`Image`), the request it answers, and whether
    it is the whole-plane overview (``base``) or a zoomed region on top of it."""

    image: Image
    region: tuple[int, int, int, int]
    base: bool
    request: int = 0
    sample: np.ndarray | None = None   # (base only) element values strided over the plane: levels come from data


    @property
    def method(self) -> str:
        return self.image.method

    @property
    def level_values(self) -> np.ndarray:
        """Values the automatic colour levels come from: the strided sample of the plane's elements (a reduced
        image's block extremes would let one outlier column set the scale), or the exact image."""
        if self.image.exact or self.sample is None:
            return self.image.data
        return self.sample


LEVEL_SAMPLE = 1 << 16


def as_method(name: str) -> Method:
    """A reduction name from a control, checked (``peak`` is :func:`reduce_region`'s own)."""
    if name not in get_args(Method):
        raise ValueError(f"unknown reduction {name!r}; one of {get_args(Method)}")
    return cast(Method, name)


def as_complex_mode(name: str) -> ComplexMode:
    """A complex presentation from a control, checked."""
    if name not in get_args(ComplexMode):
        raise ValueError(f"complex_mode must be one of {get_args(ComplexMode)}, got {name!r}")
    return cast(ComplexMode, name)


def render_plane(ctx, plane, region: tuple[int, int, int, int], out_shape: tuple[int, int], method: str, *,
                 dtype_name: str | None = None, complex_mode: str = "magnitude", preview: bool = False,
                 base: bool = True, request: int = 0, preview_shown=None, sample: np.ndarray | None = None) -> Rendered:
    """Strided preview first (emitted as a partial when ``preview``), then the block reduction of ``region``
    to at most ``out_shape`` pixels with ``method`` (exact values once the region fits).

    ``preview_shown`` (a ``threading.Event``) lets the GUI thread paint the preview before the reduction
    competes with it for the CPU; the wait is bounded by :data:`PREVIEW_WAIT` seconds. It is waited for when this
    job emitted a preview, or when the caller showed one itself (:func:`quick_preview`: ``preview`` false and the
    preview's level ``sample`` passed in, not read again).
    """
    kw: dict[str, Any] = {"dtype_name": dtype_name, "complex_mode": as_complex_mode(complex_mode)}
    r0, r1, c0, c1 = region
    plane = releasing(plane)
    shown_by_caller = sample is not None and not preview
    try:
        preview_image = None
        if preview and ((r1 - r0) > out_shape[0] or (c1 - c0) > out_shape[1]):
            preview_image = strided_preview(plane, *out_shape, region=region, **kw)
        if base and sample is None:   # about 65,000 real element values (not block extremes) for the colour levels
            step = int(preview_image.row_edges[1] - preview_image.row_edges[0]) if preview_image is not None else 1
            sample = _level_sample(plane, region, step, kw)
        if preview_image is not None:
            ctx.emit_partial(Rendered(preview_image, region, base, request, sample))
        if preview_shown is not None and (preview_image is not None or shown_by_caller):
            preview_shown.wait(PREVIEW_WAIT)
        image = reduce_region(ctx, plane, region, out_shape, method, **kw)
    finally:
        done_with(plane)
    return Rendered(image, region, base, request, sample)


def _level_sample(plane, region: tuple[int, int, int, int], row_step: int, kw: dict[str, Any]) -> np.ndarray:
    """:func:`level_sample` among the rows a strided preview with this ``row_step`` reads."""
    return level_sample(plane, LEVEL_SAMPLE, region=region, row_step=row_step, **kw)


#: bounds of a preview :func:`quick_preview` computes in the calling thread: pixels, and bytes of map its rows span
QUICK_ELEMENTS = 1 << 21
QUICK_SPAN = 64 << 20


def quick_preview(plane, region: tuple[int, int, int, int], out_shape: tuple[int, int], *,
                  dtype_name: str | None = None, complex_mode: str = "magnitude", request: int = 0) -> Rendered | None:
    """The strided preview of ``region`` and its level sample (the partial :func:`render_plane` emits with
    ``preview``), computed here when that needs no I/O and little work, else ``None`` (the worker does it).

    Cheap means: a preview of at most :data:`QUICK_ELEMENTS` pixels, of an array in memory or of a file map whose
    rows read (the grid's rows across the region, where the level sample is taken too) span at most
    :data:`QUICK_SPAN` bytes and are in the page cache (sampled with ``mincore``; ``None``
    where the system cannot tell). The GUI thread uses it to paint at once instead of a round trip to a worker.
    Reading goes through :class:`~.mapped.ReleasingPlane` as on the worker: the file is checked first (a
    truncated file raises :class:`~ztviewer.codec.errors.SourceChanged`), the image is a copy of its own.
    """
    r0, r1, c0, c1 = region
    if r1 - r0 <= out_shape[0] and c1 - c0 <= out_shape[1]:
        return None   # the exact values, not a preview
    plane = releasing(plane)
    read_here = isinstance(plane, (ReleasingPlane, np.ndarray))
    if not read_here:   # computed planes (tensor trains, streamed decoding)
        return None
    rows, cols = preview_grid(plane.shape, *out_shape, region)
    if len(range(r0, r1, rows.step)) * len(range(c0, c1, cols.step)) > QUICK_ELEMENTS:
        return None
    if isinstance(plane, ReleasingPlane):
        # what the preview and its level sample read: the sample takes any column of the grid's rows (of a
        # transposed plane, whose rows are the file's columns: any row of the file the region covers)
        span = cached_bytes(plane.plane[rows, c0:c1])
        if span is None or span > QUICK_SPAN:
            return None
    kw: dict[str, Any] = {"dtype_name": dtype_name, "complex_mode": as_complex_mode(complex_mode)}
    try:
        index = sample_index(plane.shape, LEVEL_SAMPLE, region, rows.step)
        both = plane.grid_and_picks(rows, cols, *index) \
            if isinstance(plane, ReleasingPlane) and index is not None else None
        if both is not None:   # the sample's elements picked from the preview's rows while they are mapped
            image = preview_image(both[0], plane.dtype, rows, cols, **kw)
            sample = present_sample(both[1], plane.dtype, **kw)
        else:
            image = strided_preview(plane, *out_shape, region=region, **kw)
            sample = _level_sample(plane, region, rows.step, kw)
    finally:
        done_with(plane)
    return Rendered(image, region, True, request, sample)


def reduce_region(ctx, plane, region, out_shape, method: str, **kw: Any) -> Image:
    """:func:`block_reduce`, plus the ``peak`` method: per block the max or the min, whichever is larger in
    magnitude (two passes), so a reduced image keeps the sign of its spikes."""
    if "complex_mode" in kw:
        kw["complex_mode"] = as_complex_mode(kw["complex_mode"])
    if method != "peak":
        return block_reduce(plane, region, out_shape, as_method(method), cancelled=ctx.is_cancelled,
                            progress=ctx.report_progress, **kw)
    rows = region[1] - region[0]

    def half(offset: int):
        return lambda done, total: ctx.report_progress(offset + done, 2 * rows)

    high = block_reduce(plane, region, out_shape, "max", cancelled=ctx.is_cancelled, progress=half(0), **kw)
    if high.method == "exact":
        return high
    low = block_reduce(plane, region, out_shape, "min", cancelled=ctx.is_cancelled, progress=half(rows), **kw)
    with np.errstate(invalid="ignore"):
        data = np.where(np.abs(low.data) > np.abs(high.data), low.data, high.data)
    data = np.where(np.isnan(high.data), low.data, data)
    return Image(np.ascontiguousarray(data), high.row_edges, high.col_edges, "peak")


@dataclass(frozen=True, slots=True)
class LineData:
    """A 1-D profile over ``[c0, c1)``: exact ``values`` at ``x`` or, when reduced, ``low`` / ``high``
    envelopes per bin (``x`` = bin starts)."""

    x: np.ndarray
    values: np.ndarray | None
    low: np.ndarray | None
    high: np.ndarray | None
    span: tuple[int, int]
    request: int = 0

    @property
    def exact(self) -> bool:
        return self.values is not None


def render_line(ctx, row_plane, span: tuple[int, int], width: int, *, dtype_name: str | None = None,
                complex_mode: str = "magnitude", request: int = 0) -> LineData:
    """Exact values of ``row_plane[0, c0:c1]`` when they fit ``width`` points, else min/max per bin."""
    c0, c1 = span
    region = (0, 1, c0, c1)
    kw = {"dtype_name": dtype_name, "complex_mode": complex_mode}
    row_plane = releasing(row_plane)
    try:
        return _line(ctx, row_plane, span, region, width, request, kw)
    finally:
        done_with(row_plane)


def _line(ctx, row_plane, span, region, width: int, request: int, kw: dict) -> LineData:
    c0, c1 = span
    if c1 - c0 <= width:
        image = block_reduce(row_plane, region, (1, width), "max", cancelled=ctx.is_cancelled, **kw)
        return LineData(np.arange(c0, c1, dtype=np.float64), image.data[0].astype(np.float64), None, None, span,
                        request)
    high = block_reduce(row_plane, region, (1, width), "max", cancelled=ctx.is_cancelled, **kw)
    low = block_reduce(row_plane, region, (1, width), "min", cancelled=ctx.is_cancelled, **kw)
    x = high.col_edges[:-1].astype(np.float64)
    return LineData(x, None, low.data[0].astype(np.float64), high.data[0].astype(np.float64), span, request)


STRIP_BYTES = reducing.STRIP_BYTES
