"""The tensor-train browser: chain diagram, rank profile, compression, per-core heatmaps with their singular
values, and any 2-D slice of the full tensor reconstructed by contracting the cores (never the dense tensor)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSlider,
    QSpinBox,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ztviewer.analysis.reduce import Image, block_reduce
from ztviewer.analysis.tt_view import (
    TTSummary,
    core_slice,
    left_unfolding,
    right_unfolding,
    singular_values,
    tt_summary,
)
from ztviewer.session.formatting import human_bytes, shape_text
from ztviewer.session.inspect_data import TTData

from .chain_diagram import ChainDiagram
from .export import ExportButton, SliceSource
from .heatmap import HeatmapView
from .image_plot import ImagePlot, IndexAxis, palette_colors, style_plot
from .levels import compute_levels, default_colormap, is_signed
from .runner import JobSlot
from .tt_compare import TTComparePanel

CORE_VIEWS = ("slice at index", "left unfolding", "right unfolding")
RANK_COLOR = QColor(0x4C, 0x72, 0xB0)


@dataclass(frozen=True, slots=True)
class CoreImage:
    image: Image
    singular: np.ndarray
    shape: tuple[int, int]
    labels: tuple[str, str]


def core_matrix(core: np.ndarray, view: str, index: int) -> tuple[np.ndarray, tuple[str, str]]:
    r_left, dim, r_right = core.shape
    if view == "left unfolding":
        return left_unfolding(core), (f"r_left·d ({r_left}·{dim})", f"r_right ({r_right})")
    if view == "right unfolding":
        return right_unfolding(core), (f"r_left ({r_left})", f"d·r_right ({dim}·{r_right})")
    return core_slice(core, index), (f"r_left ({r_left})", f"r_right ({r_right})")


def core_job(core: np.ndarray, view: str, index: int, out: tuple[int, int]):
    def job(task) -> CoreImage:
        matrix, labels = core_matrix(core, view, index)
        image = block_reduce(matrix, None, out, "maxabs" if np.iscomplexobj(matrix) else "max",
                             complex_mode="magnitude", cancelled=task.is_cancelled)
        task.check_cancelled()
        return CoreImage(image, singular_values(np.asarray(matrix)), tuple(matrix.shape), labels)
    return job


def summary_html(name: str, s: TTSummary, itemsize: int) -> str:
    rows = [("tensor", f"<b>{name}</b>"), ("shape", shape_text(s.dims)), ("dtype", str(s.dtype)),
            ("ranks", " · ".join(str(r) for r in s.ranks)), ("max rank", str(s.max_rank)),
            ("parameters", f"{s.parameters:,} ({human_bytes(s.parameters * itemsize)})"),
            ("dense", f"{s.dense_elements:,} ({human_bytes(s.dense_elements * itemsize)})"),
            ("compression", f"<b>{s.compression_ratio:,.4g}×</b> smaller than dense" if s.compression_ratio >= 1
             else f"<b>{1 / s.compression_ratio:,.4g}×</b> larger than dense")]
    body = "".join(f"<tr><td>{k}</td><td>{v}</td></tr>" for k, v in rows)
    return f"<table cellspacing='2'>{body}</table>"


class RankProfile(pg.PlotWidget):
    def __init__(self) -> None:
        super().__init__(background=palette_colors()[0], axisItems={"bottom": IndexAxis("bottom")})
        style_plot(self.getPlotItem())
        self.setLabel("bottom", "bond k")
        self.setLabel("left", "rank r_k")
        self.showGrid(x=False, y=True, alpha=0.15)
        self.addLegend(offset=(-4, 4), labelTextColor=palette_colors()[1])
        self.ranks = self.plot([], [], pen=pg.mkPen(RANK_COLOR, width=2), symbol="o", symbolSize=6,
                               symbolBrush=RANK_COLOR, name="rank")
        self.limit = self.plot([], [], pen=pg.mkPen(QColor(0x99, 0x99, 0x99), width=1, style=Qt.PenStyle.DashLine),
                               name="max useful rank")
        self.setMinimumHeight(130)
        self.setMaximumHeight(180)

    def show_summary(self, s: TTSummary) -> None:
        k = np.arange(len(s.ranks), dtype=np.float64)
        log = max(s.max_ranks) > 64
        self.setLogMode(y=log)
        self.ranks.setData(k, np.asarray(s.ranks, np.float64))
        self.limit.setData(k, np.minimum(np.asarray(s.max_ranks, np.float64), 10.0 * max(s.ranks) if log else
                                         2.0 * max(s.ranks)))


class TTView(QWidget):
    """Tensor-train browser over :class:`TTData`."""

    message = Signal(str)
    core_rendered = Signal()

    def __init__(self, pool=None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.data: TTData | None = None
        self.summary_label = QLabel()
        self.summary_label.setObjectName("ttSummary")
        self.summary_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.profile = RankProfile()
        self.chain = ChainDiagram()
        self.core_box = QComboBox()
        self.core_box.setObjectName("coreChoice")
        self.view_box = QComboBox()
        self.view_box.setObjectName("coreView")
        self.view_box.addItems(CORE_VIEWS)
        self.index_slider = QSlider(Qt.Orientation.Horizontal)
        self.index_spin = QSpinBox()
        self.index_spin.setObjectName("coreIndex")
        self.index_slider.valueChanged.connect(self.index_spin.setValue)
        self.index_spin.valueChanged.connect(self.index_slider.setValue)
        self.core_plot = ImagePlot()
        self.core_export = ExportButton(lambda: self.core_plot, self.core_slice_source, None, "core", pool, self)
        self.sv_plot = pg.PlotWidget(background=palette_colors()[0], axisItems={"bottom": IndexAxis("bottom")})
        style_plot(self.sv_plot.getPlotItem())
        self.sv_plot.setLogMode(y=True)
        self.sv_plot.setLabel("bottom", "i")
        self.sv_plot.setLabel("left", "σ_i")
        self.sv_plot.showGrid(x=False, y=True, alpha=0.15)
        self.sv_curve = self.sv_plot.plot([], [], pen=pg.mkPen(RANK_COLOR, width=1.5), symbol="o", symbolSize=5,
                                          symbolBrush=RANK_COLOR)
        self.core_info = QLabel()
        self.reconstruction = HeatmapView(pool, sparse_button=False)
        self.reconstruction.message.connect(self.message)
        self.core: CoreImage | None = None

        self.compare = TTComparePanel(self.reconstruction, pool)
        self.compare.message.connect(self.message)

        top = QHBoxLayout()
        top.addWidget(self.summary_label)
        top.addWidget(self.profile, 1)
        controls = QHBoxLayout()
        for widget in (QLabel("core"), self.core_box, self.view_box, QLabel("index"), self.index_slider,
                       self.index_spin):
            controls.addWidget(widget)
        controls.addStretch(1)
        controls.addWidget(self.core_info)
        controls.addWidget(self.core_export)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.core_plot)
        split.addWidget(self.sv_plot)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        cores = QWidget()
        cores_layout = QVBoxLayout(cores)
        cores_layout.setContentsMargins(2, 2, 2, 2)
        cores_layout.addLayout(controls)
        cores_layout.addWidget(split, 1)
        # the overview (facts, rank profile, chain) has a tab of its own, so the plots get the whole panel
        overview = QWidget()
        overview_layout = QVBoxLayout(overview)
        overview_layout.setContentsMargins(2, 2, 2, 2)
        overview_layout.addLayout(top)
        overview_layout.addWidget(self.chain)
        overview_layout.addStretch(1)
        self.overview = overview
        self.tabs = QTabWidget()
        self.tabs.setObjectName("ttTabs")
        self.tabs.addTab(overview, "Overview")
        self.tabs.addTab(cores, "Cores")
        self.tabs.addTab(self.reconstruction, "Reconstructed slice")
        self.tabs.addTab(self.compare, "Compare with reference")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.tabs)

        self.slot = JobSlot(pool, self)
        self.chain.core_selected.connect(self.core_box.setCurrentIndex)
        self.chain.core_selected.connect(lambda _k: self.tabs.setCurrentWidget(cores))
        self.core_box.currentIndexChanged.connect(self._core_changed)
        self.view_box.currentIndexChanged.connect(self._render_core)
        self.index_spin.valueChanged.connect(self._render_core)

    def set_data(self, data: TTData, name: str = "") -> None:
        self.data = data
        summary = tt_summary(data.cores)
        self.summary = summary
        self.summary_label.setText(summary_html(name, summary, np.dtype(summary.dtype).itemsize))
        self.profile.show_summary(summary)
        self.chain.set_chain(summary.ranks, summary.dims)
        self.core_box.blockSignals(True)
        self.core_box.clear()
        self.core_box.addItems([f"G{k}  ({c.shape[0]}×{c.shape[1]}×{c.shape[2]})" for k, c in enumerate(data.cores)])
        self.core_box.blockSignals(False)
        self._core_changed(0)
        self.reconstruction.set_data(data, name)
        self.compare.set_data(data)

    def _core_changed(self, k: int) -> None:
        if self.data is None or k < 0:
            return
        self.chain.selected = k
        self.chain.update()
        dim = self.data.cores[k].shape[1]
        for widget in (self.index_slider, self.index_spin):
            widget.blockSignals(True)
            widget.setRange(0, dim - 1)
            widget.setValue(min(widget.value(), dim - 1))
            widget.blockSignals(False)
        self._render_core()

    def _render_core(self) -> None:
        if self.data is None:
            return
        view = self.view_box.currentText()
        for widget in (self.index_slider, self.index_spin):
            widget.setEnabled(view == "slice at index")
        core = self.data.cores[self.core_box.currentIndex()]
        out = self.core_plot.screen_shape(minimum=256, maximum=1024)
        self.slot.start(core_job(core, view, self.index_spin.value(), out), self._show_core,
                        failed=self.message.emit)

    def core_slice_source(self) -> SliceSource | None:
        if self.data is None:
            return None
        matrix, _ = core_matrix(self.data.cores[self.core_box.currentIndex()], self.view_box.currentText(),
                                self.index_spin.value())
        return SliceSource(matrix, self.data.dtype_name)

    def _show_core(self, result: CoreImage) -> None:
        self.core = result
        rows, cols = result.shape
        self.core_plot.set_shape(rows, cols, result.labels)
        data = result.image.data
        signed = is_signed(data)
        name = default_colormap(signed)
        self.core_plot.set_colormap(name)
        self.core_plot.set_levels(*compute_levels(data, "auto", 0.0, signed))
        self.core_plot.set_image(self.core_plot.base, data, (0, rows, 0, cols))
        sv = result.singular
        self.sv_curve.setData(np.arange(1, len(sv) + 1, dtype=np.float64), np.maximum(sv, np.finfo(float).tiny))
        self.core_info.setText(f"{rows} × {cols}" + ("" if result.image.exact else " (reduced)"))
        self.core_rendered.emit()

    def shutdown(self) -> None:
        self.slot.shutdown()
        self.core_export.slot.shutdown()
        self.reconstruction.shutdown()
        self.compare.shutdown()
