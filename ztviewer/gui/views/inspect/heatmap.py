"""The heatmap view of dense tensors (and of reconstructed tensor-train slices).

2-D planes are images, 1-D tensors line plots; N-D tensors choose their two displayed axes and fix the
others with sliders. A large plane is painted first from a strided preview (computed at once on this thread
when that reads nothing from disk and little from memory, see :func:`~ztviewer.analysis.plane_jobs.quick_preview`,
else on a worker), then refined on a worker to block reductions at screen resolution; zooming computes the
visible region again, sharper, on top (debounced, and a new request cancels the stale one); once the region fits
the screen the exact values are shown.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
from PySide6.QtCore import Qt, QThreadPool, QTimer, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ztviewer.analysis.plane_jobs import METHODS, Inline, Rendered, quick_preview, render_plane
from ztviewer.codec.errors import CodecError
from ztviewer.session.formatting import ordinal
from ztviewer.session.inspect_data import DenseData, TTData, format_value
from ztviewer.session.value_grid import PlaneCells

from .axes_panel import AxisSelector
from .controls import DisplayControls
from .export import ExportButton, Plane, SliceSource, tensor_export_job
from .image_plot import ImagePlot
from .levels import CYCLIC, compute_levels, default_colormap, is_diverging, is_signed, log_magnitude
from .line_control import LineController
from .line_view import LinePlot
from .progress import DelayedProgress
from .runner import JobSlot
from .values_grid import ValuesView

#: planes up to this many elements are computed at once on the GUI thread (no worker round trip).
SYNC_ELEMENTS = 1 << 16


class HeatmapView(QWidget):
    """Heatmap / line plot of one :class:`DenseData` or :class:`TTData`.

    Signals: ``message(str)`` for the status bar, ``view_as_sparse()`` when the user asks for the spy plot.
    """

    message = Signal(str)
    view_as_sparse = Signal()
    presentation_changed = Signal(str)  # the panel reloads the tensor read as this dtype
    rendered = Signal()  # a base or detail image (or line) was shown: tests and the benchmark wait on it

    def __init__(self, pool: QThreadPool | None = None, parent: QWidget | None = None,
                 sparse_button: bool = True) -> None:
        super().__init__(parent)
        self.data: DenseData | TTData | None = None
        self.name = ""
        self.controls = DisplayControls()
        self.axes = AxisSelector()
        self.image = ImagePlot()
        self.line = LinePlot()
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.note.setObjectName("heatmapNote")
        self.values = ValuesView()
        self.values.message.connect(self.message)
        self.stack = QStackedWidget()
        for widget in (self.image, self.line, self.note, self.values):
            self.stack.addWidget(widget)
        self.readout = QLabel(" ")
        self.readout.setObjectName("readout")
        self.readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.info = QLabel()
        self.info.setObjectName("imageInfo")
        self.progress = DelayedProgress()
        self.export = ExportButton(lambda: self.stack.currentWidget(), self.slice_source, self.tensor_job,
                                   pool=pool, parent=self)
        self.export.message.connect(self.message)
        self.controls.add_button(self.export)
        self.sparse_button = QToolButton()
        self.sparse_button.setText("View as sparse")
        self.sparse_button.setObjectName("viewAsSparse")
        self.sparse_button.setToolTip("Spy plot of this plane: exact zeros are structural zeros")
        self.sparse_button.clicked.connect(self.view_as_sparse)
        self._sparse_allowed = sparse_button
        if not sparse_button:  # (never setVisible(True) on a widget without a parent: it would become a window)
            self.sparse_button.hide()
        self.controls.add_button(self.sparse_button)
        self.values_button = QToolButton()
        self.values_button.setText("Values")
        self.values_button.setObjectName("showValues")
        self.values_button.setCheckable(True)
        self.values_button.setShortcut("Ctrl+Shift+T")
        self.values_button.setToolTip("Show the plane's values as a table (Ctrl+Shift+T): go to index, copy as "
                                      "TSV or NumPy")
        self.values_button.toggled.connect(self._values_toggled)
        self.controls.add_button(self.values_button)

        bottom = QHBoxLayout()
        bottom.setContentsMargins(2, 0, 2, 0)
        bottom.addWidget(self.readout, 1)
        bottom.addWidget(self.progress)
        bottom.addWidget(self.info)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.setSpacing(3)
        layout.addWidget(self.controls)
        layout.addWidget(self.axes)
        layout.addWidget(self.stack, 1)
        layout.addLayout(bottom)

        self.base_slot = JobSlot(pool, self)
        self.detail_slot = JobSlot(pool, self)
        for slot in (self.base_slot, self.detail_slot):
            slot.busy_changed.connect(self._busy_changed)
            slot.progress.connect(self._progress)
        self.lines = LineController(self, pool)
        self.base: Rendered | None = None
        self.detail: Rendered | None = None
        self._plane: Plane | None = None
        self._request = 0
        self._auto_cmap = True
        self._preview_shown: threading.Event | None = None
        self._pending_prepare: Callable[[], None] | None = None
        self._values_stale = False  # the plane changed while the values grid was hidden
        #: linked views (Compare): returns the automatic levels to use instead of this view's own, or None
        self.shared_levels: Callable[[], tuple[float, float] | None] | None = None
        self.controls.changed.connect(self._control_changed)
        self.axes.changed.connect(self.refresh)
        self.image.range_settled.connect(self._range_settled)
        self.image.hovered.connect(self._hovered)
        self.image.levels_dragged.connect(self._levels_dragged)

    # -- input ---------------------------------------------------------------------------------------------
    def set_data(self, data: DenseData | TTData, name: str = "", presentations: list[str] | None = None) -> None:
        """Show a new tensor (default axes, colour map chosen from its values)."""
        self.data, self.name = data, name
        self.export.name = name or "tensor"
        self._auto_cmap = True
        kind = data.kind
        self.controls.blockSignals(True)  # one refresh below, not one per control reset
        self.controls.set_kinds(kind == "complex", presentations or [data.dtype_name])
        self.controls.set_method("maxabs" if kind in ("uint", "bool") else "peak")
        self.controls.blockSignals(False)
        n = len(data.shape)
        self.axes.set_shape(data.shape, (max(0, n - 2), max(1, n - 1)))
        self.sparse_button.setVisible(self._sparse_allowed and isinstance(data, DenseData) and len(data.shape) >= 2)
        self.refresh()

    def show_message(self, text: str) -> None:
        self.shutdown_jobs()
        self.controls.set_mode("none")
        self.data, self.base, self.detail = None, None, None
        self.note.setText(text)
        self.stack.setCurrentWidget(self.note)
        self.info.setText("")

    @property
    def complex_mode(self) -> str:
        return self.controls.complex_mode.currentText()

    def plane(self) -> Plane | None:
        return self._plane

    def slice_source(self) -> SliceSource | None:
        if self._plane is None or self.data is None:
            return None
        return SliceSource(self._plane, self.data.dtype_name)

    def tensor_job(self, path: str) -> Callable[[Any], None] | None:
        return tensor_export_job(self.data, path)

    # -- rendering -----------------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Recompute the displayed plane from scratch (new tensor, axes, slider, presentation, method)."""
        if self.data is None:
            return
        self.detail_slot.cancel()
        self.base, self.detail = None, None
        self._pending_prepare = None
        self.readout.setText(" ")
        shape = self.data.shape
        if len(shape) == 0 or 0 in shape:
            what = "an empty tensor" if 0 in shape else "a scalar"
            value = "" if 0 in shape else f": {format_value(self.data.value(()))}"
            self.controls.set_mode("none")
            self._plane = None
            self.values.set_source(None)
            self.show_message_keep(f"<p style='font-size:15pt'><b>{self.name or 'This tensor'}</b> is {what} "
                                   f"(shape {list(shape)}){value}</p>")
            return
        self._plane = plane = self.data.plane(self.axes.axes(), self.axes.fixed())
        self._update_values()
        self.controls.set_mode("line" if len(shape) == 1 else "image")
        if len(shape) == 1:
            self._show_page(self.line)
            self.lines.start(plane, shape[0])
            return
        rows, cols = plane.shape
        r, c = self.axes.axes()

        def prepare() -> None:
            self._show_page(self.image)
            self.image.set_shape(rows, cols, (f"axis {r}", f"axis {c}"))

        self._start_base(prepare)

    # -- values grid ---------------------------------------------------------------------------------------
    def _show_page(self, page: QWidget) -> None:
        """Show the image or line page, or the values grid in its place while "Values" is on."""
        if self.values_button.isChecked():
            self._fill_values()
            self.stack.setCurrentWidget(self.values)
        else:
            self.stack.setCurrentWidget(page)

    def _values_toggled(self, on: bool) -> None:
        current = self.stack.currentWidget()
        if on and current in (self.image, self.line):
            self._fill_values()
            self.stack.setCurrentWidget(self.values)
            self.values.table.setFocus()
        elif not on and current is self.values:
            shape = self.data.shape if self.data is not None else ()
            self.stack.setCurrentWidget(self.line if len(shape) == 1 else self.image)

    def _update_values(self) -> None:
        """The plane changed: the grid follows it now if it is on screen, else when it is next shown (filling a
        hidden grid would lay out its headers for nothing, on the way to the image's first paint)."""
        self._values_stale = True
        if self.stack.currentWidget() is self.values:
            self._fill_values()
        elif self.values.model.source is not None:
            self.values.set_source(None)  # holds no plane of a tensor no longer shown

    def _fill_values(self) -> None:
        """The grid shows the plane the image shows (same axes and slice indices: one state, the axis selector)."""
        if not self._values_stale:
            return
        self._values_stale = False
        data, plane = self.data, self._plane
        if data is None or plane is None:
            self.values.set_source(None)
            return
        axes, fixed = self.axes.axes(), self.axes.fixed()
        cells = PlaneCells(plane, data.dtype_name, axes, fixed, len(data.shape))
        where = f"axes {axes[0]} × {axes[1]}" if len(data.shape) > 2 else ""
        if fixed:
            where += ", " + ", ".join(f"axis {a} = {i}" for a, i in sorted(fixed.items()))
        self.values.set_source(cells, "  ·  ".join(p for p in (f"{cells.rows:,} × {cells.cols:,}",
                                                               data.dtype_name, where) if p))

    def show_message_keep(self, text: str) -> None:
        self.base_slot.cancel()
        self.note.setText(text)
        self.stack.setCurrentWidget(self.note)

    def _kw(self) -> dict[str, Any]:
        return {"dtype_name": self.data.dtype_name if self.data is not None else None,
                "complex_mode": self.complex_mode}

    def _start_base(self, prepare: Callable[[], None] | None = None) -> None:
        """Compute the whole-plane image; ``prepare()`` sets the plot up for the new plane just before its
        first image is shown (the previous content stays until then: no blank flash, and the GUI thread
        does not lay out and paint an empty plot while the worker reads)."""
        plane = self._plane
        if plane is None:
            return
        rows, cols = plane.shape
        region = (0, rows, 0, cols)
        out = self.image.screen_shape(minimum=512)
        self._request += 1
        method, kw, request = self.controls.method_name, self._kw(), self._request
        if rows * cols <= SYNC_ELEMENTS:
            self.base_slot.cancel()
            if prepare is not None:
                prepare()
            self._show(render_plane(Inline(), plane, region, out, method, request=request, **kw))
            return
        self._release_waiting()
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
                                 self._show, failed=self._failed)
            return
        self.info.setText("reading…")
        self.base_slot.start(lambda task: render_plane(task, plane, region, out, method, preview=True,
                                                       request=request, preview_shown=shown, **kw),
                             self._show, partial=self._show, failed=self._failed)

    @staticmethod
    def _quick_preview(plane: Plane, region: tuple[int, int, int, int], out: tuple[int, int], request: int,
                       kw: dict[str, Any]) -> Rendered | None:
        """The preview computed on this thread when it needs no I/O and little work (:func:`quick_preview`), else
        ``None``; a file that changed on disk is left to the worker, which reports it."""
        try:
            return quick_preview(plane, region, out, request=request, **kw)
        except (CodecError, OSError):
            return None

    def _range_settled(self) -> None:
        if self.base is None or self.stack.currentWidget() is not self.image:
            return
        rows, cols = self.image.shape
        region = self.image.visible_region()
        out = self.image.screen_shape()
        base = self.base.image
        if region[1] <= region[0] or region[3] <= region[2]:
            return
        if region == (0, rows, 0, cols) or base.exact:
            if self.detail is not None or self.detail_slot.busy:
                self.detail_slot.cancel()
                self.detail = None
                self.image.clear_detail()
                self.info.setText(self._describe(self.base))   # the footer describes what is shown again
            if not base.exact and (len(base.row_edges) - 1 < 0.75 * min(rows, out[0])
                                   or len(base.col_edges) - 1 < 0.75 * min(cols, out[1])):
                self._start_base()  # the window grew: the overview deserves more pixels
            return
        self._start_detail(region, out)

    def _start_detail(self, region: tuple[int, int, int, int], out: tuple[int, int]) -> None:
        current = self.detail
        if current is not None and current.region == region \
                and current.image.data.shape[0] >= min(out[0], region[1] - region[0]) - 1:
            return  # already shown at this resolution
        plane, method, kw = self._plane, self.controls.method_name, self._kw()
        if plane is None:
            return
        self._request += 1
        request = self._request
        self.detail_slot.start(lambda task: render_plane(task, plane, region, out, method, base=False,
                                                         request=request, **kw),
                               self._show, failed=self._failed)

    def _show(self, rendered: Rendered) -> None:
        if rendered.base and self._pending_prepare is not None:
            prepare, self._pending_prepare = self._pending_prepare, None
            prepare()
        if rendered.base:
            self.base = rendered
            first = rendered.method == "strided" or self.base_slot.current is None
            if self._auto_cmap and first:
                self._choose_colormap(rendered.image.data)
        else:
            self.detail = rendered
        shown = self._shown(rendered.image.data)
        layer = self.image.base if rendered.base else self.image.detail
        if rendered.base or self.controls.level_mode.currentText() != "manual":
            self._apply_levels()
        self.image.set_image(layer, shown, rendered.region)
        self.info.setText(self._describe(rendered))
        self.rendered.emit()
        if rendered.method == "strided" and self._preview_shown is not None:
            QTimer.singleShot(0, self._preview_shown.set)  # once this paint is done, let the reduction run

    def _shown(self, data: np.ndarray) -> np.ndarray:
        return log_magnitude(data) if self.controls.log.isChecked() else data

    def _describe(self, rendered: Rendered) -> str:
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

    def _failed(self, text: str) -> None:
        self.info.setText("")
        self.controls.set_mode("none")
        self.message.emit(f"{self.name}: {text}")
        self.show_message_keep(f"Cannot show {self.name}: {text}")

    # -- levels and colours --------------------------------------------------------------------------------
    def _phase(self) -> bool:
        return self.data is not None and self.data.kind == "complex" and self.complex_mode == "phase" \
            and not self.controls.log.isChecked()

    def _choose_colormap(self, data: np.ndarray) -> None:
        signed = is_signed(data) and not self.controls.log.isChecked()
        name = default_colormap(signed, self._phase())
        self.controls.set_colormap_quietly(name)
        self.image.set_colormap(name)
        self.image.set_bar_label(self._bar_label())

    def _bar_label(self) -> str:
        what = self.complex_mode if self.data is not None and self.data.kind == "complex" else "value"
        return f"log10 |{what}|" if self.controls.log.isChecked() else what

    def _apply_levels(self) -> None:
        mode = self.controls.level_mode.currentText()
        if mode == "manual":
            levels = self.controls.manual_levels() or self.image.levels()
        elif self.base is None:
            return
        elif self._phase() and self.image.colormap_name in CYCLIC:
            levels = (-np.pi, np.pi)
        else:
            shared = self.shared_levels() if self.shared_levels is not None else None
            levels = shared if shared is not None else compute_levels(
                self._shown(self._level_source(self.base)), mode, self.controls.percent.value(), self.levels_centred())
        self.image.set_levels(*levels)
        self.controls.show_levels(*self.image.levels())

    def apply_levels(self) -> None:
        """Compute the colour levels again (a linked view's data changed)."""
        self._apply_levels()

    def levels_centred(self) -> bool:
        """Whether automatic levels are symmetric about zero (a diverging map on signed values)."""
        return is_diverging(self.image.colormap_name) and not self.controls.log.isChecked()

    def level_values(self) -> np.ndarray | None:
        """The displayed values the automatic levels come from (a sample), ``None`` before the first image."""
        return None if self.base is None else self._shown(self._level_source(self.base))

    def use_colormap(self, name: str | None) -> None:
        """Show ``name`` (a linked view chose it; ``None``: this view's own choice) unless the user chose one."""
        if not self._auto_cmap or self.base is None:
            return
        if name is None:
            self._choose_colormap(self.base.image.data)
        elif name != self.image.colormap_name:
            self.controls.set_colormap_quietly(name)
            self.image.set_colormap(name)

    @staticmethod
    def _level_source(base: Rendered) -> np.ndarray:
        """Values the automatic levels are computed from: a strided sample of the plane's elements (a reduced
        image's block extremes would let one outlier column set the scale), or the exact image."""
        if base.image.exact or base.sample is None:
            return base.image.data
        return base.sample

    def _levels_dragged(self, low: float, high: float) -> None:
        self.controls.set_manual(low, high)

    def _control_changed(self, what: str) -> None:
        if what == "colormap":
            self._auto_cmap = False
            self.image.set_colormap(self.controls.colormap.currentText())
            self._apply_levels()
        elif what == "levels":
            self._apply_levels()
        elif what == "log":
            if self._auto_cmap and self.base is not None:
                self._choose_colormap(self.base.image.data)
            self.image.set_bar_label(self._bar_label())
            self._redisplay()
        elif what in ("method", "complex"):
            if what == "complex":
                self._auto_cmap = True
            self.refresh()
        elif what == "present":
            self.presentation_changed.emit(self.controls.present_as.currentText())
        elif what == "reset":
            (self.line.view.autoRange() if self.stack.currentWidget() is self.line else self.image.reset_view())
        elif what == "aspect":
            self.image.set_aspect_locked(self.controls.aspect.isChecked())

    def _redisplay(self) -> None:
        if self.stack.currentWidget() is self.line:
            self.lines.redisplay()
            return
        self._apply_levels()
        for rendered, layer in ((self.base, self.image.base), (self.detail, self.image.detail)):
            if rendered is not None:
                self.image.set_image(layer, self._shown(rendered.image.data), rendered.region)

    # -- read-out ------------------------------------------------------------------------------------------
    def _hovered(self, position: tuple[int, int] | None) -> None:
        if position is None or self.data is None or self.base is None:
            self.readout.setText(" ")
            return
        row, col = position
        index = self.axes.index_of(row, col)
        try:
            value = format_value(self.data.value(index))
        except CodecError as exc:   # the file changed on disk: say so where the value would be
            self.readout.setText(f"[{', '.join(str(i) for i in index)}]: {exc}")
            return
        text = f"[{', '.join(str(i) for i in index)}] = {value}"
        pixel = self._pixel_text(row, col)
        self.readout.setText(text + (f"    pixel: {pixel}" if pixel else ""))

    def _pixel_text(self, row: int, col: int) -> str:
        for rendered in (self.detail, self.base):
            if rendered is None or rendered.image.exact or rendered.image.method == "strided":
                continue
            image = rendered.image
            i = int(np.searchsorted(image.row_edges, row, side="right")) - 1
            j = int(np.searchsorted(image.col_edges, col, side="right")) - 1
            if 0 <= i < image.data.shape[0] and 0 <= j < image.data.shape[1]:
                return f"{image.method} = {image.data[i, j]:.6g}"
        return ""

    def _busy_changed(self, _busy: bool) -> None:
        self.progress.set_busy(self.base_slot.busy or self.detail_slot.busy or self.lines.slot.busy)

    def _progress(self, done: int, total: int | None) -> None:
        self.progress.set_progress(done, total)

    def _release_waiting(self) -> None:
        if self._preview_shown is not None:
            self._preview_shown.set()  # a superseded job waiting to refine goes on (and sees it is cancelled)

    def shutdown_jobs(self) -> None:
        for slot in (self.base_slot, self.detail_slot, self.lines.slot):
            slot.cancel()
        self._release_waiting()

    def shutdown(self) -> None:
        self._release_waiting()
        for slot in (self.base_slot, self.detail_slot, self.lines.slot, self.export.slot):
            slot.shutdown()

