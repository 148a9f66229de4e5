"""1-D tensors as a line plot: exact points when they fit the screen, else a min/max envelope per pixel
column (so no spike is lost), recomputed for the visible span on zoom."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QColor

from ztviewer.analysis.plane_jobs import LineData

from .image_plot import SETTLE_MS, IndexAxis, palette_colors, style_plot

LINE_COLOR = QColor(0x1F, 0x77, 0xB4)
SYMBOLS_BELOW = 80


class LinePlot(pg.GraphicsLayoutWidget):
    """A profile plot with hover read-out (``hovered(index or None)``) and ``range_settled``."""

    hovered = Signal(object)
    range_settled = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        bg, _ = palette_colors()
        self.setBackground(bg)
        self.ci.layout.setContentsMargins(4, 6, 12, 4)
        self.plot: pg.PlotItem = self.addPlot(axisItems={"bottom": IndexAxis("bottom")})
        style_plot(self.plot)
        self.plot.showGrid(x=True, y=True, alpha=0.15)
        self.view = self.plot.getViewBox()
        pen = pg.mkPen(LINE_COLOR, width=1.5)
        self.curve = pg.PlotDataItem(pen=pen)
        self.high = pg.PlotDataItem(pen=pg.mkPen(LINE_COLOR, width=1))
        self.low = pg.PlotDataItem(pen=pg.mkPen(LINE_COLOR, width=1))
        fill = QColor(LINE_COLOR)
        fill.setAlpha(90)
        self.band = pg.FillBetweenItem(self.low, self.high, brush=pg.mkBrush(fill))
        for item in (self.band, self.low, self.high, self.curve):
            self.plot.addItem(item)
        self.length = 0
        self.data: LineData | None = None
        self._settle = QTimer(self, singleShot=True, interval=SETTLE_MS)
        self._settle.timeout.connect(self.range_settled)
        self.view.sigXRangeChanged.connect(lambda *_: self._settle.start())
        self.scene().sigMouseMoved.connect(self._mouse_moved)

    def set_length(self, n: int, label: str = "index") -> None:
        self.length = int(n)
        self.plot.setLabel("bottom", label)
        self.view.setLimits(xMin=-0.5 - max(1, n * 0.02), xMax=n - 0.5 + max(1, n * 0.02), minXRange=min(2, n))
        self.data = None
        for item in (self.curve, self.low, self.high):
            item.setData([], [])
        self.view.setXRange(-0.5, max(n, 1) - 0.5, padding=0.02)

    def set_value_label(self, text: str) -> None:
        self.plot.setLabel("left", text)

    def show_line(self, data: LineData, autorange_y: bool = True) -> None:
        self.data = data
        values = data.values
        if values is not None:   # exact values, not envelopes
            symbols = len(values) <= SYMBOLS_BELOW
            self.curve.setData(data.x, values, symbol="o" if symbols else None, symbolSize=5,
                               symbolBrush=pg.mkBrush(LINE_COLOR), symbolPen=None, connect="finite")
            self.low.setData([], [])
            self.high.setData([], [])
            self.band.setVisible(False)
        else:
            self.curve.setData([], [])
            self.low.setData(data.x, data.low, connect="finite")
            self.high.setData(data.x, data.high, connect="finite")
            self.band.setVisible(True)
        if autorange_y:
            self.view.enableAutoRange(axis=pg.ViewBox.YAxis)

    def visible_span(self) -> tuple[int, int]:
        (x0, x1), _ = self.view.viewRange()
        c0 = int(min(self.length, max(0, np.floor(x0 + 0.5))))
        c1 = int(min(self.length, max(c0, np.ceil(x1 + 0.5))))
        return c0, c1

    def screen_width(self) -> int:
        return int(min(4096, max(64, self.view.sceneBoundingRect().width() * self.devicePixelRatioF())))

    def _mouse_moved(self, pos) -> None:
        if not self.view.sceneBoundingRect().contains(pos):
            self.hovered.emit(None)
            return
        x = int(np.floor(self.view.mapSceneToView(pos).x() + 0.5))
        self.hovered.emit(x if 0 <= x < self.length else None)

    def leaveEvent(self, event) -> None:
        super().leaveEvent(event)
        self.hovered.emit(None)
