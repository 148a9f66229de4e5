"""Computes the images of a :class:`~.heatmap.HeatmapView`'s 2-D plane: the whole-plane base image (a strided
preview first, computed at once on the GUI thread when that reads nothing from disk and little from memory, see
:func:`~ztviewer.analysis.plane_jobs.quick_preview`, else on a worker; then refined on a worker to block reductions
at screen resolution) and, when the user zooms, the visible region again, sharper, on top (a new request cancels
the stale one; once the region fits the screen the exact values are shown)."""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
from PySide6.QtCore import QObject, QThreadPool, QTimer
from PySide6.QtWidgets import QLabel, QStackedWidget

from ztviewer.analysis.plane_jobs import METHODS, Inline, Rendered, quick_preview, render_plane
from ztviewer.session.formatting import ordinal
from ztviewer.session.inspect_data import DenseData, TTData

from .controls import DisplayControls
from .export import Plane
from .image_plot import ImagePlot
from .runner import JobSlot

#: planes up to this many elements are computed at once on the GUI thread (no worker round trip).
SYNC_ELEMENTS = 1 << 16


def describe(rendered: Rendered) -> str:
    """What an image shows, for the footer: a preview's stride, exact values, or the reduction per pixel."""
    image = rendered.image
    h, w = image.data.shape
    if image.method == "strided":
        step = (int(image.row_edges[1] - image.row_edges[0]) if h > 1 else 1,
                int(image.col_edges[1] - image.col_edges[0]) if w > 1 else 1)
        return f"preview: every {ordinal(step[0])} row, {ordinal(step[1])} column · refining…"
    if image.exact:
        return f"{h} × {w}, exact values"
    bh = int(np.diff(image.row_edges).max())
    bw = int(np.diff(image.col_edges).max())
    label = next((k for k, v in METHODS.items() if v == image.method), image.method)
    return f"{h} × {w} pixels, each the {label} of ≤{bh} × {bw} elements"


def pixel_text(images: tuple[Rendered | None, ...], row: int, col: int) -> str:
    """What the first reduced image of ``images`` shows at plane element ``(row, col)`` (``"peak = 0.5"``), or
    ``""`` when none of them is a reduction (exact values and previews show the element itself). An image of exact
    values over the element ends the search: what is drawn there is the element, not the overview's block."""
    for rendered in images:
        if rendered is None or rendered.image.method == "strided":
            continue
        if rendered.image.exact:
            r0, r1, c0, c1 = rendered.region
            if r0 <= row < r1 and c0 <= col < c1:
                return ""
            continue
        image = rendered.image
        i = int(np.searchsorted(image.row_edges, row, side="right")) - 1
        j = int(np.searchsorted(image.col_edges, col, side="right")) - 1
        if 0 <= i < image.data.shape[0] and 0 <= j < image.data.shape[1]:
            return f"{image.method} = {image.data[i, j]:.6g}"
    return ""


class ImageHost(Protocol):
    """What :class:`ImageJobs` uses of its :class:`~.heatmap.HeatmapView` (which imports this module)."""

    data: DenseData | TTData | None
    image: ImagePlot
    controls: DisplayControls
    info: QLabel
    stack: QStackedWidget
    base: Rendered | None
    detail: Rendered | None

    @property
    def complex_mode(self) -> str: ...
    def plane(self) -> Plane | None: ...
    def show_rendered(self, rendered: Rendered, first: bool) -> None: ...
    def clear_detail(self) -> None: ...
    def _failed(self, text: str) -> None: ...
    def _busy_changed(self, busy: bool) -> None: ...
    def _progress(self, done: int, total: int | None) -> None: ...


class ImageJobs:
    """Owns the base and detail job slots of the heatmap view's :class:`~.image_plot.ImagePlot` and hands each
    computed :class:`Rendered` to :meth:`HeatmapView.show_rendered`."""

    def __init__(self, view: ImageHost, parent: QObject, pool: QThreadPool | None = None) -> None:
        self.view = view
        self.base_slot = JobSlot(pool, parent)
        self.detail_slot = JobSlot(pool, parent)
        for slot in (self.base_slot, self.detail_slot):
            slot.busy_changed.connect(view._busy_changed)
            slot.progress.connect(view._progress)
        self._request = 0
        self._preview_shown: threading.Event | None = None
        self._pending_prepare: Callable[[], None] | None = None
        view.image.range_settled.connect(self.range_settled)

    @property
    def busy(self) -> bool:
        return self.base_slot.busy or self.detail_slot.busy

    @property
    def computing_base(self) -> bool:
        """Whether the whole-plane image is still on its way (its arrival resets the view)."""
        return self.base_slot.busy

    def cancel_base(self) -> None:
        self.base_slot.cancel()

    def reset(self) -> None:
        """A new plane: the zoomed detail is stale and so is a plot set-up still waiting for its first image."""
        self.detail_slot.cancel()
        self._pending_prepare = None

    def _kw(self) -> dict[str, Any]:
        data = self.view.data
        return {"dtype_name": data.dtype_name if data is not None else None, "complex_mode": self.view.complex_mode}

    def start_base(self, prepare: Callable[[], None] | None = None) -> None:
        """Compute the whole-plane image; ``prepare()`` sets the plot up for the new plane just before its
        first image is shown (the previous content stays until then: no blank flash, and the GUI thread
        does not lay out and paint an empty plot while the worker reads)."""
        plane = self.view.plane()
        if plane is None:
            return
        rows, cols = plane.shape
        region = (0, rows, 0, cols)
        out = self.view.image.screen_shape(minimum=512)
        self._request += 1
        method, kw, request = self.view.controls.method_name, self._kw(), self._request
        if rows * cols <= SYNC_ELEMENTS:
            self.base_slot.cancel()
            if prepare is not None:
                prepare()
            self._show(render_plane(Inline(), plane, region, out, method, request=request, **kw))
            return
        self.release_waiting()
        self._preview_shown = shown = threading.Event()
        if prepare is not None:
            self._pending_prepare = prepare
        quick = self._quick_preview(plane, region, out, request, kw)
        if quick is not None:   # painted now; the worker only refines
            self.base_slot.cancel()
            self._show(quick)
            sample = quick.sample
            self.base_slot.start(lambda task: render_plane(task, plane, region, out, method, request=request,
                                                           preview_shown=shown, sample=sample, **kw),
                                 self._show, failed=self.view._failed)
            return
        self.view.info.setText("reading…")
        self.base_slot.start(lambda task: render_plane(task, plane, region, out, method, preview=True,
                                                       request=request, preview_shown=shown, **kw),
                             self._show, partial=self._show, failed=self.view._failed)

    @staticmethod
    def _quick_preview(plane: Plane, region: tuple[int, int, int, int], out: tuple[int, int], request: int,
                       kw: dict[str, Any]) -> Rendered | None:
        """The preview computed on this thread when it needs no I/O and little work (:func:`quick_preview`), else
        ``None``; a file that changed on disk, or any other failure, is left to the worker, which reports it as it
        reports every failure (the GUI thread never raises for a plane it could not preview)."""
        try:
            return quick_preview(plane, region, out, request=request, **kw)
        except Exception:
            return None

    def range_settled(self) -> None:
        """The user zoomed or panned: compute the visible region sharper, or drop the detail when the whole plane
        (or an exact base image) is shown."""
        view = self.view
        if view.base is None or view.stack.currentWidget() is not view.image:
            return
        rows, cols = view.image.shape
        region = view.image.visible_region()
        out = view.image.screen_shape()
        base = view.base.image
        if region[1] <= region[0] or region[3] <= region[2]:
            return
        if region == (0, rows, 0, cols) or base.exact:
            if view.detail is not None or self.detail_slot.busy:
                self.detail_slot.cancel()
                view.clear_detail()
            if not base.exact and (len(base.row_edges) - 1 < 0.75 * min(rows, out[0])
                                   or len(base.col_edges) - 1 < 0.75 * min(cols, out[1])):
                self.start_base()  # the window grew: the overview deserves more pixels
            return
        self._start_detail(region, out)

    def _start_detail(self, region: tuple[int, int, int, int], out: tuple[int, int]) -> None:
        current = self.view.detail
        if current is not None and current.region == region \
                and current.image.data.shape[0] >= min(out[0], region[1] - region[0]) - 1:
            return  # already shown at this resolution
        plane, method, kw = self.view.plane(), self.view.controls.method_name, self._kw()
        if plane is None:
            return
        self._request += 1
        request = self._request
        self.detail_slot.start(lambda task: render_plane(task, plane, region, out, method, base=False,
                                                         request=request, **kw),
                               self._show, failed=self.view._failed)

    def _show(self, rendered: Rendered) -> None:
        if rendered.base and self._pending_prepare is not None:
            prepare, self._pending_prepare = self._pending_prepare, None
            prepare()
        first = rendered.base and (rendered.method == "strided" or self.base_slot.current is None)
        self.view.show_rendered(rendered, first)
        if rendered.method == "strided" and self._preview_shown is not None:
            QTimer.singleShot(0, self._preview_shown.set)  # once this paint is done, let the reduction run

    def release_waiting(self) -> None:
        if self._preview_shown is not None:
            self._preview_shown.set()  # a superseded job waiting to refine goes on (and sees it is cancelled)

    def cancel(self) -> None:
        self.base_slot.cancel()
        self.detail_slot.cancel()
        self.release_waiting()

    def shutdown(self) -> None:
        self.release_waiting()
        self.base_slot.shutdown()
        self.detail_slot.shutdown()
