"""The selected pair of a Compare tab: A, B and Δ = B − A heatmaps with linked zoom/pan and one plane for all
three, an overlaid histogram of A and B, and the largest differences (click → that element in all three). What it
shows is loaded by :func:`ztviewer.session.pair_data.load_pair`."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from ztviewer.analysis.diff.planes import DifferenceData, SliceDifference
from ztviewer.session.comparison import ComparisonSession, Plane, plane_position
from ztviewer.session.decode_cache import DecodedCache, shared_cache
from ztviewer.session.inspect_data import DenseData, format_value
from ztviewer.session.pair_data import PairData, load_pair, plane_dtype
from ztviewer.session.view_registry import view_kind

from ..views.inspect import levels as lv
from ..views.inspect.axes_panel import AxisSelector
from ..views.inspect.heatmap import HeatmapView
from ..views.inspect.runner import JobSlot
from .details import details_html
from .linked_levels import LinkedLevels
from .pair_histogram import PairHistogram
from .pairs_model import STATUS_TEXT, verdict_color
from .side_columns import side_columns
from .sparse_pair import SparsePairView
from .worst_model import WorstModel

#: elements around a jumped-to element kept in view (each way).
FOCUS_RADIUS = 8


class PairView(QWidget):
    """Renders the selected pair of a :class:`ComparisonSession`."""

    def __init__(self, session: ComparisonSession, pool=None, cache: DecodedCache | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("comparePairView")
        self.session = session
        self.cache = cache if cache is not None else shared_cache()
        self.data: PairData | None = None
        self.title = QLabel(" ")
        self.title.setObjectName("comparePairTitle")
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setWordWrap(True)
        self.axes = AxisSelector()
        self.axes.setObjectName("compareAxes")
        self.heatmaps = {side: HeatmapView(pool, sparse_button=False) for side in ("A", "B", "Δ")}
        self._hidden = QWidget(self)           # each heatmap's own axis choice lives here: the shared one rules
        self._hidden.hide()
        for view in self.heatmaps.values():
            own = view.layout()
            if own is not None:
                own.removeWidget(view.axes)
            view.axes.setParent(self._hidden)
        self.markers = {}
        for side, view in self.heatmaps.items():     # an outline around the element jumped to
            marker = pg.PlotDataItem(pen=pg.mkPen(0x11, 0x11, 0x11, width=2.5))
            marker.setZValue(10)
            marker.hide()
            view.image.plot.addItem(marker)
            self.markers[side] = marker
        a_view = self.heatmaps["A"].image.view
        for side in ("B", "Δ"):
            self.heatmaps[side].image.view.setXLink(a_view)
            self.heatmaps[side].image.view.setYLink(a_view)
        self.values = QLabel(" ")
        self.values.setObjectName("compareFocusValues")
        self.values.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.histogram = PairHistogram()
        self.histogram.setMinimumHeight(self.fontMetrics().height() * 9)
        self.details = QLabel()
        self.details.setObjectName("comparePairDetails")
        self.details.setTextFormat(Qt.TextFormat.RichText)
        self.details.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details.setWordWrap(True)
        self.worst_model = WorstModel(self)
        self.worst = QTreeView()
        self.worst.setObjectName("compareWorst")
        self.worst.setModel(self.worst_model)
        self.worst.setRootIsDecorated(False)
        self.worst.setUniformRowHeights(True)
        self.worst.setAlternatingRowColors(True)
        self.worst.clicked.connect(self._worst_clicked)
        self.worst.activated.connect(self._worst_clicked)
        self.slot = JobSlot(pool, self)
        self.pool = pool
        self.sparse: SparsePairView | None = None     # made when the first sparse pair is shown
        self.link_levels = QCheckBox("Link levels")
        self.link_levels.setObjectName("compareLinkLevels")
        self.link_levels.setToolTip("A and B use one colour map and the same colour levels, computed from both "
                                    "sides' values (Δ stays symmetric about zero)")
        self.link_levels.setChecked(True)
        self.level_link = LinkedLevels(self.heatmaps["A"], self.heatmaps["B"], self.link_levels)

        maps, _titles = side_columns(self.heatmaps, " = B − A", "compareMapTitle")
        bottom = QSplitter(Qt.Orientation.Horizontal)
        worst_box = QWidget()
        worst_layout = QVBoxLayout(worst_box)
        worst_layout.setContentsMargins(0, 0, 0, 0)
        worst_layout.addWidget(QLabel("Largest differences (click to show)"))
        worst_layout.addWidget(self.worst, 1)
        details_box = QScrollArea()
        details_box.setWidgetResizable(True)
        details_box.setWidget(self.details)
        bottom.addWidget(self.histogram)
        bottom.addWidget(details_box)
        bottom.addWidget(worst_box)
        bottom.setStretchFactor(0, 4)
        bottom.setStretchFactor(1, 3)
        bottom.setStretchFactor(2, 3)
        bottom.setSizes([440, 420, 420])
        bottom.setObjectName("compareBottom")
        self.bottom = bottom
        self.pages = QStackedWidget()
        self.pages.addWidget(maps)
        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(self.pages)
        body.addWidget(bottom)
        body.setStretchFactor(0, 3)
        body.setStretchFactor(1, 2)
        body.setSizes([640, 300])
        body.setObjectName("comparePairBody")
        self.body = body
        top = QHBoxLayout()
        top.addWidget(self.axes, 1)
        top.addWidget(self.link_levels, 0, Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.title)
        layout.addLayout(top)
        layout.addWidget(body, 1)
        layout.addWidget(self.values)

        self.axes.changed.connect(self._axes_changed)
        self.heatmaps["A"].rendered.connect(self._apply_pending_focus)
        self._pending_focus: tuple[int, int] | None = None
        session.selection_changed.connect(self._on_selection)
        session.plane_changed.connect(self._on_plane)
        session.focus_changed.connect(self._on_focus)
        self._on_selection(session.selected)

    # -- the selected pair -----------------------------------------------------------------------------------
    def _on_selection(self, _number: int | None) -> None:
        self.slot.cancel()
        self.data = None
        pair = self.session.selected_pair
        self.worst_model.set_pair(pair)
        self.details.setText(details_html(pair))
        self.histogram.show_histograms(None)
        self.values.setText(" ")
        for marker in self.markers.values():
            marker.hide()
        if pair is None:
            self.title.setText("Select a pair to see A, B and their difference")
            self._message("")
            return
        colour = verdict_color(pair.verdict).name()
        self.title.setText(f"<b>{pair.name}</b> &nbsp; <span style='color:{colour}'>{STATUS_TEXT[pair.verdict]}</span>"
                           + (f" — {pair.reason}" if pair.reason else ""))
        a, b = self.session.tensors()
        if a is None or b is None or self.session.tf_a is None or self.session.tf_b is None:
            self._message("Only one side has this tensor")
            return
        kinds = {view_kind(a), view_kind(b)}
        tf_a, tf_b, cache = self.session.tf_a, self.session.tf_b, self.cache
        if "sparse" in kinds and kinds <= {"sparse", "dense"}:
            sparse = self._sparse_view()
            self.pages.setCurrentWidget(sparse)
            self.histogram.hide()              # (entries only: the spy plots' profiles say where they are)
            self.axes.set_shape(())
            self.link_levels.hide()
            sparse.show_pair(tf_a, a, tf_b, b, pair.name)
            return
        self.pages.setCurrentIndex(0)
        self.histogram.show()
        self.link_levels.show()
        if not kinds <= {"dense", "tt"}:
            self._message(f"Heatmaps show dense, sparse and tensor-train tensors (A is {a.layout}, B is {b.layout})")
            return
        self._message("reading…")
        self.slot.start(lambda task: load_pair(tf_a, a, tf_b, b, cache, task.is_cancelled, task.emit_partial),
                        self._loaded, partial=self._loaded, failed=self._message)

    def _sparse_view(self) -> SparsePairView:
        if self.sparse is None:
            self.sparse = SparsePairView(self.pool, self.cache)
            self.sparse.setObjectName("compareSparsePair")
            self.pages.addWidget(self.sparse)
        return self.sparse

    def _message(self, text: str) -> None:
        for view in self.heatmaps.values():
            view.show_message(text)
        self.axes.set_shape(())

    def _loaded(self, data: PairData) -> None:
        if self.data is not None and self.data.a is data.a and self.data.b is data.b:   # the histograms refined
            self.data = data
            self.histogram.show_histograms(data.histograms)
            return
        self.data = data
        pair = self.session.selected_pair
        name = pair.name if pair is not None else ""
        self.heatmaps["A"].set_data(data.a, name + " (A)")
        self.heatmaps["B"].set_data(data.b, name + " (B)")
        if data.a.shape == data.b.shape:
            delta = self.heatmaps["Δ"]
            difference: DifferenceData | SliceDifference
            if isinstance(data.a, DenseData) and isinstance(data.b, DenseData):
                difference = DifferenceData(data.a.array, data.a.dtype_name, data.b.array, data.b.dtype_name)
            else:    # a tensor train: Δ of the reconstructed slices
                difference = SliceDifference(data.a, plane_dtype(data.a), data.b, plane_dtype(data.b))
            delta.set_data(difference, name + " (B − A)")  # type: ignore[arg-type]  # DenseData's interface
            if delta.data is not None and delta.data.kind != "complex":  # zero is white: signs stand out
                delta.controls.colormap.setCurrentText(lv.DEFAULT_DIVERGING)
        else:
            self.heatmaps["Δ"].show_message(f"Shapes differ: {list(data.a.shape)} vs {list(data.b.shape)}")
        self.histogram.show_histograms(data.histograms)
        plane = self.session.plane
        self.axes.blockSignals(True)
        self.axes.set_shape(data.a.shape, plane.axes)
        for axis, index in plane.fixed:
            if axis in self.axes.fixed():
                self.axes.set_index(axis, index)
        self.axes.blockSignals(False)
        self._apply_plane(plane)
        if self.session.focus is not None:
            self._on_focus(self.session.focus)

    # -- plane and focus -------------------------------------------------------------------------------------
    def _axes_changed(self) -> None:
        self.session.set_plane(self.axes.axes(), self.axes.fixed())

    def _on_plane(self, plane: Plane) -> None:
        if self.axes.axes() != plane.axes or self.axes.fixed() != plane.fixed_dict():
            self.axes.blockSignals(True)
            if self.axes.axes() != plane.axes and len(self.axes.shape) >= 2:
                self.axes.set_axes(*plane.axes)
            for axis, index in plane.fixed:
                if axis in self.axes.fixed() and self.axes.fixed()[axis] != index:
                    self.axes.set_index(axis, index)
            self.axes.blockSignals(False)
        self._apply_plane(plane)

    def _apply_plane(self, plane: Plane) -> None:
        if self.data is None:
            return
        for view in self.heatmaps.values():
            if view.data is None or len(view.axes.shape) < 2:
                continue
            if view.axes.axes() != plane.axes:
                view.axes.set_axes(*plane.axes)
            for axis, index in plane.fixed:
                if view.axes.fixed().get(axis, index) != index:
                    view.axes.set_index(axis, index)

    def levels(self, side: str) -> tuple[float, float]:
        """The colour levels one heatmap shows (tests)."""
        return self.heatmaps[side].image.levels()

    def _worst_clicked(self, index) -> None:
        position = self.worst_model.position(index.row())
        if position is not None:
            self.session.jump_to(position)

    def _on_focus(self, focus: tuple[int, ...] | None) -> None:
        if focus is not None and self.sparse is not None and self.pages.currentWidget() is self.sparse:
            if len(focus) == 2:
                self.sparse.centre(int(focus[0]), int(focus[1]), FOCUS_RADIUS)
            elif len(focus) == 1:
                self.sparse.centre(0, int(focus[0]), FOCUS_RADIUS)
            return
        if focus is None or self.data is None:
            for marker in self.markers.values():
                marker.hide()
            return
        _, (row, col) = plane_position(self.session.plane, focus)
        # a plane still being computed resets the view when its first image arrives: centre again then
        self._pending_focus = (row, col) if self.heatmaps["A"].image_jobs.computing_base else None
        self._centre(row, col)
        outline = ([col - 0.5, col + 0.5, col + 0.5, col - 0.5, col - 0.5],
                   [row - 0.5, row - 0.5, row + 0.5, row + 0.5, row - 0.5])
        for marker in self.markers.values():
            marker.setData(*outline)
            marker.show()
        texts = [f"A{list(focus)} = {format_value(self.data.a.value(focus))}",
                 f"B = {format_value(self.data.b.value(focus))}"]
        delta = self.heatmaps["Δ"].data
        if delta is not None:
            texts.append(f"Δ = {format_value(delta.value(focus))}")
        self.values.setText("    ".join(texts))

    def _apply_pending_focus(self) -> None:
        if self._pending_focus is not None:
            row, col = self._pending_focus
            self._pending_focus = None
            self._centre(row, col)

    def _centre(self, row: int, col: int) -> None:
        view = self.heatmaps["A"]
        rows, cols = view.image.shape
        if not rows or not cols:
            return
        half_r, half_c = min(FOCUS_RADIUS, rows / 2), min(FOCUS_RADIUS, cols / 2)
        view.image.view.setRange(QRectF(col - half_c, row - half_r, 2 * half_c, 2 * half_r), padding=0)

    def view_range(self, side: str) -> tuple[list[float], list[float]]:
        """``[[x0, x1], [y0, y1]]`` of one heatmap (tests check the link)."""
        return self.heatmaps[side].image.view.viewRange()

    def shutdown(self) -> None:
        self.slot.shutdown()
        if self.sparse is not None:
            self.sparse.shutdown()
        for view in self.heatmaps.values():
            view.shutdown()
        self.session.selection_changed.disconnect(self._on_selection)
        self.session.plane_changed.disconnect(self._on_plane)
        self.session.focus_changed.disconnect(self._on_focus)
