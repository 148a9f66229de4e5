"""The spy view of sparse tensors (and of dense planes viewed as sparse).

Non-zeros are binned into screen pixels (colour = log10(1 + entries per pixel)); zoomed in far enough, each
entry becomes an exact marker coloured by its value. Beside the plot: structure facts and the entries per row
and per column. Higher-rank COO tensors pick a plane with the axis selector, or sum over the other axes.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ztviewer.analysis.spy_sources import (
    CooPlaneSource,
    Prepared,
    SpyResult,
    prepare,
    spy_region,
)
from ztviewer.session.formatting import si_count

from .axes_panel import AxisSelector
from .export import ExportButton, SliceSource
from .image_plot import ImagePlot, IndexAxis, palette_colors, style_plot
from .levels import colormap, compute_levels, default_colormap
from .progress import DelayedProgress
from .runner import JobSlot

PROFILE_COLOR = QColor(0x4C, 0x72, 0xB0)


def facts_html(prepared: Prepared) -> str:
    f = prepared.facts
    rows, cols = f.shape
    items = [("entries (nnz)", f"{f.nnz:,}"), ("shape", f"{rows:,} × {cols:,}"),
             ("density", f"{f.density * 100:.4g} %"),
             ("bandwidth", f"{f.bandwidth:,} (lower {f.lower_bandwidth:,}, upper {f.upper_bandwidth:,})"),
             ("empty rows", f"{f.empty_rows:,} of {rows:,}"), ("empty columns", f"{f.empty_cols:,} of {cols:,}")]
    if f.explicit_zeros is not None:
        items.append(("stored zeros", f"{f.explicit_zeros:,}"))
    body = "".join(f"<tr><td>{k}</td><td align='right'><b>{v}</b></td></tr>" for k, v in items)
    return f"<table cellspacing='3'>{body}</table>"


class ProfilePlot(pg.PlotWidget):
    """Entries per row (or column) band, as a filled step plot."""

    def __init__(self, label: str) -> None:
        super().__init__(background=palette_colors()[0],
                         axisItems={"bottom": IndexAxis("bottom"), "left": IndexAxis("left")})
        style_plot(self.getPlotItem())
        self.setLabel("bottom", label)
        self.setLabel("left", "entries")
        self.curve = pg.PlotDataItem(stepMode="center", fillLevel=0, brush=pg.mkBrush(PROFILE_COLOR),
                                     pen=pg.mkPen(PROFILE_COLOR.darker(130)))
        self.addItem(self.curve)
        self.setMinimumHeight(110)

    def show_profile(self, counts: np.ndarray, edges: np.ndarray) -> None:
        self.curve.setData(edges.astype(np.float64) - 0.5, counts.astype(np.float64))
        widest = int(np.diff(edges).max()) if len(edges) > 1 else 1
        per = si_count(widest, 10 ** max(0, len(str(widest)) - 3))
        self.setLabel("left", "entries" if widest <= 1 else f"entries per ≤{per}")


class SparseView(QWidget):
    """Spy plot + facts + profiles for one sparse source. ``rendered`` after each image or marker set."""

    rendered = Signal()
    message = Signal(str)
    back = Signal()  # "Heatmap" pressed while a dense plane is shown as sparse

    def __init__(self, pool=None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot = ImagePlot(mark_nonfinite=False)     # empty bins are NaN: drawn as background
        self.plot.set_colormap("blues")
        self.plot.set_bar_label("log10(1 + entries per pixel)")
        self.markers = pg.ScatterPlotItem(symbol="s", size=0.9, pxMode=False, pen=None)
        self.markers.setZValue(2)
        self.plot.plot.addItem(self.markers)
        self.axes = AxisSelector()
        self.project = QCheckBox("sum over the other axes")
        self.project.setObjectName("projectAxes")
        self.project.toggled.connect(self._plane_changed)
        self.axes.changed.connect(self._plane_changed)
        self.title = QLabel()
        self.title.setObjectName("spyTitle")
        self.facts = QLabel()
        self.facts.setObjectName("spyFacts")
        self.facts.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.row_profile = ProfilePlot("row")
        self.col_profile = ProfilePlot("column")
        self.readout = QLabel(" ")
        self.info = QLabel()
        self.progress = DelayedProgress()
        self.back_button = QToolButton()
        self.back_button.setText("Heatmap")
        self.back_button.setObjectName("backToHeatmap")
        self.back_button.setToolTip("Back to the heatmap of this plane")
        self.back_button.clicked.connect(self.back)
        self.back_button.hide()
        fit = QToolButton()
        fit.setText("Fit")
        fit.clicked.connect(self.plot.reset_view)
        self.export = ExportButton(lambda: self.plot, self.slice_source, None, "spy", pool, self)
        self.export.message.connect(self.message)

        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.title, 1)
        top.addWidget(self.project)
        top.addWidget(self.back_button)
        top.addWidget(fit)
        top.addWidget(self.export)
        side = QWidget()
        side_layout = QVBoxLayout(side)
        side_layout.setContentsMargins(4, 0, 0, 0)
        side_layout.addWidget(self.facts)
        side_layout.addWidget(self.row_profile, 1)
        side_layout.addWidget(self.col_profile, 1)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.plot)
        split.addWidget(side)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        bottom = QHBoxLayout()
        bottom.addWidget(self.readout, 1)
        bottom.addWidget(self.progress)
        bottom.addWidget(self.info)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.setSpacing(3)
        layout.addLayout(top)
        layout.addWidget(self.axes)
        layout.addWidget(split, 1)
        layout.addLayout(bottom)

        self.slot = JobSlot(pool, self)
        self.detail_slot = JobSlot(pool, self)
        for slot in (self.slot, self.detail_slot):
            slot.busy_changed.connect(lambda _: self.progress.set_busy(self.slot.busy or self.detail_slot.busy))
            slot.progress.connect(self.progress.set_progress)
        self.prepared: Prepared | None = None
        self.current: SpyResult | None = None
        self._loader = None
        self._coo = False
        self.plot.range_settled.connect(self._range_settled)
        self.plot.hovered.connect(self._hovered)

    # -- input ---------------------------------------------------------------------------------------------
    def set_sparse(self, title: str, loader, coo_shape: tuple[int, ...] | None = None) -> None:
        """Show a sparse tensor. ``loader(ctx)`` returns its SparseCSR / SparseCOO (run on a worker).
        ``coo_shape`` (a COO tensor of rank > 2) turns the axis selector on."""
        self.title.setText(title)
        self._loader = loader
        shown = coo_shape if coo_shape is not None and len(coo_shape) > 2 else None   # axes to choose from
        self._coo = shown is not None
        self.back_button.hide()
        self.axes.set_shape(shown if shown is not None else ())
        self.axes.setVisible(self._coo)
        self.project.setVisible(self._coo)
        self._start()

    def set_dense_plane(self, title: str, source) -> None:
        """Show a dense plane as sparse (``source`` is a :class:`~.spy_sources.DensePlaneSource`)."""
        self.title.setText(title)
        self._loader = None
        self._coo = False
        self.back_button.show()
        self.axes.setVisible(False)
        self.project.setVisible(False)
        self._start(lambda ctx: source)

    def show_source(self, title: str, make_source) -> None:
        """Show what ``make_source(ctx)`` returns (a spy source, built on a worker; no axis choice)."""
        self.title.setText(title)
        self._loader = None
        self._coo = False
        self.back_button.hide()
        self.axes.setVisible(False)
        self.project.setVisible(False)
        self._start(make_source)

    def slice_source(self) -> SliceSource | None:
        return None

    def _plane_changed(self) -> None:
        if self._coo:
            self._start()

    def _make_source(self):
        loader, coo = self._loader, self._coo
        if loader is None:
            raise LookupError("no sparse tensor to show")
        axes, fixed, project = self.axes.axes(), self.axes.fixed(), self.project.isChecked()

        def make(ctx):
            sparse = loader(ctx)
            if hasattr(sparse, "indptr"):
                from ztviewer.analysis.spy_sources import CsrSource

                return CsrSource(sparse)
            return CooPlaneSource.from_coo(sparse, axes if coo else (0, 1), fixed if coo and not project else {},
                                           project)
        return make

    def _start(self, make_source=None) -> None:
        make_source = make_source or self._make_source()
        self.detail_slot.cancel()
        self.prepared, self.current = None, None
        self.readout.setText(" ")
        self.markers.setData([])
        self.info.setText("reading…")
        out = self.plot.screen_shape(minimum=512)
        self.slot.start(lambda ctx: prepare(ctx, make_source, out), self._prepared,
                        failed=lambda text: self._failed(text))

    # -- results -------------------------------------------------------------------------------------------
    def _prepared(self, prepared: Prepared) -> None:
        self.prepared = prepared
        rows, cols = prepared.source.shape
        r, c = self.axes.axes() if self._coo else (0, 1)
        self.plot.set_shape(rows, cols, (f"axis {r}" if self._coo else "row", f"axis {c}" if self._coo else "column"))
        self.facts.setText(facts_html(prepared))
        self.row_profile.show_profile(*prepared.rows)
        self.col_profile.show_profile(*prepared.cols)
        self._show(prepared.overview)

    def _show(self, result: SpyResult) -> None:
        self.current = result
        if result.markers is not None:
            self._show_markers(result)
        else:
            self.markers.setData([])
            self.plot.set_colormap("blues")
            self.plot.set_bar_label("log10(1 + entries per pixel)")
            density = np.log10(1.0 + result.image.counts.astype(np.float64))
            density[result.image.counts == 0] = np.nan
            top = np.nanmax(density) if np.isfinite(density).any() else 1.0
            if result.base:
                self.plot.set_levels(0.0, max(float(top), 0.30103))
            layer = self.plot.base if result.base else self.plot.detail
            self.plot.base.setVisible(True)
            r0, r1, c0, c1 = result.region
            self.plot.set_image(layer, density.astype(np.float32), result.region)
            h, w = result.image.counts.shape
            self.info.setText(f"{h} × {w} pixels over {r1 - r0:,} × {c1 - c0:,}")
        self.rendered.emit()

    def _show_markers(self, result: SpyResult) -> None:
        if result.markers is None:
            return
        rows, cols, values = result.markers
        self.plot.base.setVisible(False)
        self.plot.clear_detail()
        signed = values is not None and values.size and np.nanmin(values) < 0
        name = default_colormap(bool(signed))
        cmap = colormap(name)
        self.plot.set_colormap(name)
        self.plot.set_bar_label("value")
        if values is not None and values.size:
            low, high = compute_levels(values, "auto", 0.0, bool(signed))
            self.plot.set_levels(low, high)
            scaled = np.clip((np.nan_to_num(values) - low) / (high - low), 0.0, 1.0)
            brushes = [pg.mkBrush(c) for c in cmap.mapToQColor(scaled)]
        else:
            brushes = pg.mkBrush(PROFILE_COLOR)
        self.markers.setData(x=cols.astype(np.float64), y=rows.astype(np.float64), brush=brushes)
        shown = values if values is not None else np.zeros(len(rows))
        self._marker_values = {(int(r), int(c)): v for r, c, v in zip(rows, cols, shown)}
        self.info.setText(f"{len(rows):,} entries shown exactly")

    def _failed(self, text: str) -> None:
        self.info.setText("")
        self.facts.setText(f"<b>Cannot show the sparsity pattern:</b><br>{text}")
        self.message.emit(text)

    def _range_settled(self) -> None:
        if self.prepared is None:
            return
        rows, cols = self.plot.shape
        region = self.plot.visible_region()
        if region[1] <= region[0] or region[3] <= region[2]:
            return
        full = region == (0, rows, 0, cols)
        if full and (self.current is None or self.current.base):
            return
        if self.current is not None and self.current.region == region:
            return
        source, out = self.prepared.source, self.plot.screen_shape()
        if full:
            self.plot.clear_detail()
            self.current = None
            self._show(self.prepared.overview)
            return
        self.detail_slot.start(lambda ctx: spy_region(ctx, source, region, out, False), self._show,
                               failed=self._failed)

    def _hovered(self, position) -> None:
        if position is None or self.current is None:
            self.readout.setText(" ")
            return
        row, col = position
        result = self.current
        if result.markers is not None:
            value = self._marker_values.get((row, col))
            where = f"[{row}, {col}]"
            self.readout.setText(f"{where}: no entry" if value is None else f"{where} = {float(value):.7g}")
            return
        image = result.image
        i = int(np.searchsorted(image.row_edges, row, side="right")) - 1
        j = int(np.searchsorted(image.col_edges, col, side="right")) - 1
        if 0 <= i < image.counts.shape[0] and 0 <= j < image.counts.shape[1]:
            r0, r1 = image.row_edges[i], image.row_edges[i + 1]
            c0, c1 = image.col_edges[j], image.col_edges[j + 1]
            self.readout.setText(f"rows {r0}–{r1 - 1}, columns {c0}–{c1 - 1}: {int(image.counts[i, j]):,} entries")

    def shutdown(self) -> None:
        for slot in (self.slot, self.detail_slot, self.export.slot):
            slot.shutdown()
