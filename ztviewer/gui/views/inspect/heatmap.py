"""The heatmap view of dense tensors (and of reconstructed tensor-train slices).

2-D planes are images, 1-D tensors line plots; N-D tensors choose their two displayed axes and fix the
others with sliders. A large plane is painted first from a strided preview, then refined at screen resolution;
zooming computes the visible region again, sharper, on top (the jobs: :mod:`.image_jobs`; 1-D profiles:
:mod:`.line_control`).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from PySide6.QtCore import Qt, QThreadPool, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ztviewer.analysis.plane_jobs import Rendered
from ztviewer.codec.errors import CodecError
from ztviewer.session.inspect_data import DenseData, TTData, format_value
from ztviewer.session.value_grid import PlaneCells

from .axes_panel import AxisSelector
from .controls import DisplayControls
from .export import ExportButton, Plane, SliceSource, tensor_export_job
from .image_jobs import ImageJobs, describe, pixel_text
from .image_plot import ImagePlot
from .levels import CYCLIC, compute_levels, default_colormap, is_diverging, is_signed, log_magnitude
from .line_control import LineController
from .line_view import LinePlot
from .nonfinite import legend_html
from .nonfinite_finder import NonFiniteFinder
from .progress import DelayedProgress
from .values_grid import ValuesView


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
        self.finder = NonFiniteFinder(self.image, self.slice_source, pool, self)
        self.finder.went_to.connect(self._went_to)
        self.finder.message.connect(self.message)
        self.controls.add_button(self.finder.button)
        self.legend = QLabel()
        self.legend.setObjectName("nonFiniteLegend")
        self.legend.setToolTip("Colours of the values no colour map shows")
        self.legend.setContentsMargins(0, 0, self.legend.fontMetrics().horizontalAdvance("  "), 0)

        bottom = QHBoxLayout()
        bottom.setContentsMargins(2, 0, 2, 0)
        bottom.addWidget(self.readout, 1)
        bottom.addWidget(self.progress)
        bottom.addWidget(self.legend)
        bottom.addWidget(self.info)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.setSpacing(3)
        layout.addWidget(self.controls)
        layout.addWidget(self.axes)
        layout.addWidget(self.stack, 1)
        layout.addLayout(bottom)

        self.image_jobs = ImageJobs(self, self, pool)
        self.lines = LineController(self, pool)
        #: the whole-plane image shown, and the sharper one of the zoomed region on top of it
        self.base: Rendered | None = None
        self.detail: Rendered | None = None
        self._plane: Plane | None = None
        self._auto_cmap = True
        self._values_stale = False  # the plane changed while the values grid was hidden
        #: linked views (Compare): returns the automatic levels to use instead of this view's own, or None
        self.shared_levels: Callable[[], tuple[float, float] | None] | None = None
        self.controls.changed.connect(self._control_changed)
        self.axes.changed.connect(self.refresh)
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
        if self.controls.level_mode.currentText() == "manual":   # typed levels were for the last tensor
            self.controls.level_mode.setCurrentText("percentile")
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
        self.image_jobs.reset()
        self.base, self.detail = None, None
        self.readout.setText(" ")
        self.legend.setText("")
        self.finder.reset(self.data.kind in ("float", "complex"))
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

        self.image_jobs.start_base(prepare)

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
        cells = PlaneCells(plane, data.dtype_name, self.axes.axes(), self.axes.fixed(), len(data.shape))
        self.values.set_source(cells, cells.title())

    def show_message_keep(self, text: str) -> None:
        self.image_jobs.cancel_base()
        self.note.setText(text)
        self.stack.setCurrentWidget(self.note)

    def show_rendered(self, rendered: Rendered, first: bool) -> None:
        """Show a computed image (``first``: the plane's first base image, whose values choose the colour map)."""
        if rendered.base:
            self.base = rendered
            if self._auto_cmap and first:
                self._choose_colormap(rendered.image.data)
        else:
            self.detail = rendered
        shown = self._shown(rendered.image.data)
        layer = self.image.base if rendered.base else self.image.detail
        if rendered.base or self.controls.level_mode.currentText() != "manual":
            self._apply_levels()
        self.image.set_image(layer, shown, rendered.region, rendered.image.data)
        self.legend.setText(legend_html(self.image.nonfinite_shown()))
        self.info.setText(describe(rendered))
        self.image.hover_again()        # the read-out's "pixel:" follows what is drawn now
        self.rendered.emit()

    def clear_detail(self) -> None:
        """Show the base image alone again (and describe it in the footer)."""
        self.detail = None
        self.image.clear_detail()
        self.legend.setText(legend_html(self.image.nonfinite_shown()))
        if self.base is not None:
            self.info.setText(describe(self.base))

    def _shown(self, data: np.ndarray) -> np.ndarray:
        return log_magnitude(data) if self.controls.log.isChecked() else data

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
                self._shown(self.base.level_values), mode, self.controls.percent.value(), self.levels_centred())
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
        return None if self.base is None else self._shown(self.base.level_values)

    def use_colormap(self, name: str | None) -> None:
        """Show ``name`` (a linked view chose it; ``None``: this view's own choice) unless the user chose one."""
        if not self._auto_cmap or self.base is None:
            return
        if name is None:
            self._choose_colormap(self.base.image.data)
        elif name != self.image.colormap_name:
            self.controls.set_colormap_quietly(name)
            self.image.set_colormap(name)

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
                self.image.set_image(layer, self._shown(rendered.image.data), rendered.region, rendered.image.data)

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
        pixel = pixel_text((self.detail, self.base), row, col)
        self.readout.setText(text + (f"    pixel: {pixel}" if pixel else ""))

    def _went_to(self, position: tuple[int, int]) -> None:
        self._hovered(position)
        self.message.emit(f"{self.name}: {self.readout.text().split('    ')[0]}")

    def _busy_changed(self, _busy: bool) -> None:
        self.progress.set_busy(self.image_jobs.busy or self.lines.slot.busy)

    def _progress(self, done: int, total: int | None) -> None:
        self.progress.set_progress(done, total)

    def shutdown_jobs(self) -> None:
        self.image_jobs.cancel()
        self.lines.slot.cancel()
        self.finder.slot.cancel()

    def shutdown(self) -> None:
        self.image_jobs.shutdown()
        for slot in (self.lines.slot, self.export.slot, self.finder.slot):
            slot.shutdown()

