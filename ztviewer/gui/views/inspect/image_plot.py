"""A pyqtgraph image plot for matrices: rows down, columns across, a colour bar, a hover read-out.

Two image layers share one colour map and levels: ``base`` shows the whole plane at screen resolution and
``detail`` a zoomed region at higher resolution on top of it, so panning never uncovers blank space while a
sharper region is being computed. Pixel ``(i, j)`` of the plane is centred on ``x = j, y = i``.
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFontMetricsF, QGuiApplication, QPalette, QPen
from PySide6.QtWidgets import QGraphicsRectItem

from ztviewer.session.formatting import si_count

from .levels import DEFAULT_SEQUENTIAL, colormap
from .nonfinite import MARK_COLOURS, nonfinite_marks

SETTLE_MS = 150


class IndexAxis(pg.AxisItem):
    """An axis of element indices or counts: ticks only at whole numbers, labelled compactly (``2.5M``), and no
    more of them than fit side by side in the axis's font at its current length."""

    def tickSpacing(self, minVal, maxVal, size):
        span = abs(maxVal - minVal)
        if not span or not size or not math.isfinite(span):
            return [(1.0, 0.0)]
        metrics = QFontMetricsF(self.style.get("tickFont") or self.font())
        largest = max(abs(minVal), abs(maxVal))
        levels = [(step, offset) for step, offset in super().tickSpacing(minVal, maxVal, size) if step >= 1]
        natural = levels[0][0] if levels else 1.0
        spacing = natural
        for spacing in _nice_steps(natural):
            if self.orientation in ("left", "right"):
                room = 2.5 * metrics.height()
            else:
                room = metrics.horizontalAdvance(si_count(-largest, spacing)) + 2 * metrics.averageCharWidth()
            if span / spacing * room <= size:
                break
        if spacing == natural and levels:
            return levels
        minor = spacing / (2 if str(int(spacing))[0] == "5" else 5) if spacing >= 10 else None
        return [(spacing, 0.0)] + ([(minor, 0.0)] if minor else [])

    def tickStrings(self, values, scale, spacing):
        return [si_count(v * scale, spacing * scale) for v in values]


def _nice_steps(least: float):
    """1, 2, 5, 10, 20, 50, … from the first one at or above ``least`` (and at least 1)."""
    exponent = max(0, math.floor(math.log10(max(least, 1.0))))
    while True:
        for mantissa in (1, 2, 5):
            step = mantissa * 10.0 ** exponent
            if step >= least:
                yield step
        exponent += 1


def _label(axis: pg.AxisItem, text: str) -> None:
    """Set an axis label unless it already shows ``text`` (a new label lays the axis out and redraws it)."""
    if axis.labelText != text or not axis.label.isVisible():
        axis.setLabel(text)


def index_axes() -> dict:
    return {"left": IndexAxis("left"), "bottom": IndexAxis("bottom")}


def palette_colors() -> tuple[QColor, QColor]:
    """(background, foreground) of plots, following the application palette."""
    palette = QGuiApplication.palette()
    return palette.color(QPalette.ColorRole.Base), palette.color(QPalette.ColorRole.Text)


def style_plot(plot: pg.PlotItem) -> None:
    """Axis pens in the palette's text colour, a little breathing room."""
    _, fg = palette_colors()
    for name in ("left", "bottom", "right", "top"):
        axis = plot.getAxis(name)
        axis.setPen(pg.mkPen(fg))
        axis.setTextPen(pg.mkPen(fg))
        axis.enableAutoSIPrefix(False)
    plot.getViewBox().setMenuEnabled(False)
    plot.hideButtons()


class ImagePlot(pg.GraphicsLayoutWidget):
    """Plot of a 2-D plane with ``base`` and ``detail`` image layers and a colour bar.

    Signals
    -------
    hovered(object):
        ``(row, col)`` integer plane coordinates under the mouse, or ``None`` outside the plane.
    range_settled():
        The view range stopped changing for :data:`SETTLE_MS` (zoom, pan, resize).
    levels_dragged(float, float):
        The user moved the colour bar's handles.
    """

    hovered = Signal(object)
    range_settled = Signal()
    levels_dragged = Signal(float, float)

    def __init__(self, parent=None, colour_bar: bool = True, mark_nonfinite: bool = True) -> None:
        super().__init__(parent)
        self.mark_nonfinite = mark_nonfinite     # False where NaN means "nothing here" (a spy plot's empty bins)
        bg, _ = palette_colors()
        self.setBackground(bg)
        self.ci.layout.setContentsMargins(4, 6, 8, 4)
        self.plot: pg.PlotItem = self.addPlot(axisItems=index_axes())
        style_plot(self.plot)
        self.plot.invertY(True)
        self.view: pg.ViewBox = self.plot.getViewBox()
        self.base = pg.ImageItem(axisOrder="row-major")
        self.detail = pg.ImageItem(axisOrder="row-major")
        self.detail.setZValue(1)
        # Under the detail layer, over the base: the detail's empty (NaN) pixels must show nothing, not the
        # coarser base image through them (that drew density where there is none).
        self.backdrop = QGraphicsRectItem()
        self.backdrop.setPen(QPen(Qt.PenStyle.NoPen))
        self.backdrop.setBrush(bg)
        self.backdrop.setZValue(0.5)
        self.backdrop.setVisible(False)
        #: NaN / ±Inf of each layer in colours of their own, just above it (:mod:`.nonfinite`)
        self.marks = {id(layer): pg.ImageItem(axisOrder="row-major") for layer in (self.base, self.detail)}
        self.marks[id(self.base)].setZValue(0.25)
        self.marks[id(self.detail)].setZValue(1.5)
        self.marked: dict[int, list[str]] = {}      # the non-finite kinds each layer shows
        self.plot.addItem(self.base)
        self.plot.addItem(self.backdrop)
        self.plot.addItem(self.detail)
        for marks in self.marks.values():
            marks.setVisible(False)
            self.plot.addItem(marks)
        self.found = QGraphicsRectItem()           # the element "Next NaN/Inf" went to
        self.found.setPen(pg.mkPen((255, 0, 255), width=2, cosmetic=True))
        self.found.setZValue(2)
        self.found.setVisible(False)
        self.plot.addItem(self.found)
        self.shape = (0, 0)
        self._levels = (0.0, 1.0)
        self.colormap_name = DEFAULT_SEQUENTIAL
        self._colormap_applied = False
        self.bar: pg.ColorBarItem | None = None
        if colour_bar:
            self.bar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=colormap(self.colormap_name), width=14,
                                       interactive=True, colorMapMenu=False, rounding=1e-12,
                                       pen=pg.mkPen(palette_colors()[1]))
            self.bar.setImageItem([self.base, self.detail], insert_in=self.plot)
            _, fg = palette_colors()
            self.bar.axis.setPen(pg.mkPen(fg))
            self.bar.axis.enableAutoSIPrefix(False)
            self.bar.axis.setTextPen(pg.mkPen(fg))
            self.bar.axis.setStyle(maxTickLevel=0)  # labelled ticks only (minor ones: +0.5 ms a paint)
            self.bar.sigLevelsChangeFinished.connect(self._bar_dragged)
        else:
            for item in (self.base, self.detail):
                item.setColorMap(colormap(self.colormap_name))
        self._settle = QTimer(self, singleShot=True, interval=SETTLE_MS)
        self._settle.timeout.connect(self.range_settled)
        self.view.sigRangeChanged.connect(self._range_changed)
        self.scene().sigMouseMoved.connect(self._mouse_moved)
        self._mouse_at: QPointF | None = None     # where the mouse last was over the plot (scene coordinates)

    # -- content -------------------------------------------------------------------------------------------
    def set_shape(self, rows: int, cols: int, labels: tuple[str, str] = ("row", "column")) -> None:
        """A new plane: limits, labels and a view of all of it."""
        self.shape = (int(rows), int(cols))
        _label(self.plot.getAxis("left"), labels[0])
        _label(self.plot.getAxis("bottom"), labels[1])
        pad_r, pad_c = max(0.5, rows * 0.02), max(0.5, cols * 0.02)
        self.view.setLimits(xMin=-0.5 - pad_c, xMax=cols - 0.5 + pad_c, yMin=-0.5 - pad_r, yMax=rows - 0.5 + pad_r,
                            minXRange=min(2, cols), minYRange=min(2, rows))
        self.clear_detail()
        self.base.clear()
        self.marks[id(self.base)].setVisible(False)
        self.marked.clear()
        self.mark_element(None)
        self.reset_view()

    def reset_view(self) -> None:
        rows, cols = self.shape
        self.view.setRange(QRectF(-0.5, -0.5, max(cols, 1), max(rows, 1)), padding=0)

    def set_image(self, layer: pg.ImageItem, data: np.ndarray, region: tuple[int, int, int, int],
                  values: np.ndarray | None = None) -> None:
        """Show ``data`` covering plane ``region = (r0, r1, c0, c1)`` on ``layer``, with the NaN / ±Inf of
        ``values`` (what ``data`` shows, before a log scale: default ``data``) marked in their colours."""
        r0, r1, c0, c1 = region
        rect = QRectF(c0 - 0.5, r0 - 0.5, c1 - c0, r1 - r0)
        layer.setImage(data, autoLevels=False, levels=self._levels)
        layer.setRect(rect)
        layer.setVisible(True)
        self._set_marks(layer, data if values is None else values, rect)
        if layer is self.detail:
            self.backdrop.setRect(QRectF(c0 - 0.5, r0 - 0.5, c1 - c0, r1 - r0))
            self.backdrop.setVisible(True)

    def _set_marks(self, layer: pg.ImageItem, values: np.ndarray, rect: QRectF) -> None:
        marks = self.marks[id(layer)]
        found = nonfinite_marks(values) if self.mark_nonfinite else None
        if found is None:
            marks.setVisible(False)
            self.marked.pop(id(layer), None)
            return
        rgba, self.marked[id(layer)] = found
        marks.setImage(rgba, autoLevels=False, levels=(0, 255))
        marks.setRect(rect)
        marks.setVisible(True)

    def nonfinite_shown(self) -> list[str]:
        """The non-finite kinds (``NaN``, ``+Inf``, ``−Inf``) the visible layers show, in legend order."""
        shown = {k for layer in (self.base, self.detail) if layer.isVisible() for k in self.marked.get(id(layer), ())}
        return [k for k in MARK_COLOURS if k in shown]

    def mark_element(self, position: tuple[int, int] | None) -> None:
        """Outline one element (``None``: none)."""
        if position is not None:
            row, col = position
            self.found.setRect(QRectF(col - 0.5, row - 0.5, 1, 1))
        self.found.setVisible(position is not None)

    def clear_detail(self) -> None:
        self.detail.clear()
        self.detail.setVisible(False)
        self.backdrop.setVisible(False)
        self.marks[id(self.detail)].setVisible(False)
        self.marked.pop(id(self.detail), None)

    # -- appearance ----------------------------------------------------------------------------------------
    def set_colormap(self, name: str) -> None:
        if name == self.colormap_name and self._colormap_applied:
            return
        self._colormap_applied = True
        self.colormap_name = name
        cmap = colormap(name)
        if self.bar is not None:
            self.bar.setColorMap(cmap)
        else:
            for item in (self.base, self.detail):
                item.setColorMap(cmap)

    def set_levels(self, low: float, high: float) -> None:
        if not (math.isfinite(low) and math.isfinite(high)):
            low, high = 0.0, 1.0
        if high <= low:
            high = low + (abs(low) * 1e-6 or 1.0)
        self._levels = (float(low), float(high))
        if self.bar is not None:
            self.bar.rounding = (high - low) * 1e-6
            self.bar.setLevels(self._levels)
        for item in (self.base, self.detail):
            if item.image is not None:
                item.setLevels(self._levels)

    def levels(self) -> tuple[float, float]:
        return self._levels

    def set_bar_label(self, text: str) -> None:
        if self.bar is not None:
            _label(self.bar.axis, text)

    def set_aspect_locked(self, locked: bool) -> None:
        self.plot.setAspectLocked(locked, ratio=1.0)

    def _bar_dragged(self, bar) -> None:
        low, high = bar.levels()
        self._levels = (float(low), float(high))
        self.levels_dragged.emit(float(low), float(high))

    # -- geometry ------------------------------------------------------------------------------------------
    def visible_region(self) -> tuple[int, int, int, int]:
        """The plane rows/columns in view, ``(r0, r1, c0, c1)``, clipped to the plane."""
        (x0, x1), (y0, y1) = self.view.viewRange()
        rows, cols = self.shape
        r0 = min(rows, max(0, math.floor(y0 + 0.5)))
        r1 = min(rows, max(r0, math.ceil(y1 + 0.5)))
        c0 = min(cols, max(0, math.floor(x0 + 0.5)))
        c1 = min(cols, max(c0, math.ceil(x1 + 0.5)))
        return r0, r1, c0, c1

    def screen_shape(self, minimum: int = 256, maximum: int = 2048) -> tuple[int, int]:
        """Device pixels of the plot area, clamped (the resolution worth computing)."""
        rect = self.view.sceneBoundingRect()
        ratio = self.devicePixelRatioF()
        h = int(min(maximum, max(minimum, rect.height() * ratio)))
        w = int(min(maximum, max(minimum, rect.width() * ratio)))
        return h, w

    def plane_at(self, scene_pos: QPointF) -> tuple[int, int] | None:
        if not self.view.sceneBoundingRect().contains(scene_pos):
            return None
        point = self.view.mapSceneToView(scene_pos)
        row, col = math.floor(point.y() + 0.5), math.floor(point.x() + 0.5)
        if 0 <= row < self.shape[0] and 0 <= col < self.shape[1]:
            return row, col
        return None

    def _mouse_moved(self, scene_pos: QPointF) -> None:
        self._mouse_at = QPointF(scene_pos)
        self.hovered.emit(self.plane_at(scene_pos))

    def _range_changed(self, *_: object) -> None:
        self._settle.start()
        self.hover_again()

    def hover_again(self) -> None:
        """Say again what is under a mouse that did not move (a zoom or pan put another element under it, a new
        image shows it differently)."""
        if self._mouse_at is not None:
            self.hovered.emit(self.plane_at(self._mouse_at))

    def leaveEvent(self, event) -> None:
        super().leaveEvent(event)
        self._mouse_at = None
        self.hovered.emit(None)
