"""A bar showing the whole file's layout: structure, blobs coloured per tensor, padding, gaps, overlaps.

The bar is rendered once per size/layout into an image (one colour per pixel column: the most telling
segment in it wins, chosen over whole columns of segments at once), so files with 100,000 blobs repaint
instantly; the selection and the hex view's visible window are drawn over it.
"""
from __future__ import annotations

from itertools import pairwise

import numpy as np
from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QImage,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
    QPolygonF,
    QResizeEvent,
)
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from ztviewer.session.file_layout import FileLayout, Segment
from ztviewer.session.formatting import human_bytes

from .. import theme
from .file_map_columns import column_winners

# Which segment colours a pixel column that several share (higher wins).
_PRIORITY = {"overlap": 5, "gap": 4, "seek-table": 4, "blob": 3, "shared": 3, "padding": 0, "unparsed": 0}
_LEGEND_LABELS = {"blob": "tensor data", "padding": "zero padding", "unparsed": "not parsed", "shared": "shared blob",
                  "seek-table": "seek table", "old-manifest": "superseded manifest",
                  "old-footer": "superseded footer", "old-blob": "earlier generation's blob"}
_LEGEND_ORDER = (*theme.STRUCTURE_KINDS, "blob", "shared", "seek-table", "old-blob", "padding", "gap", "overlap",
                 "unparsed")
_BAR_H = 22
_LEGEND_H = 18
_MARGIN = 6


class FileMap(QWidget):
    """Clickable overview of a file's byte layout."""

    segment_clicked = Signal(object, object)   # Segment, byte offset clicked

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("fileMap")
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self._layout: FileLayout | None = None
        self._selection: tuple[int, int] | None = None
        self._window: tuple[int, int] | None = None
        self._image: QImage | None = None
        self._legend_rows = 1      # the legend wraps onto more rows when the window is narrow

    def sizeHint(self) -> QSize:
        return QSize(400, _BAR_H + self._legend_rows * self._legend_h() + 2 * _MARGIN)

    def _legend_h(self) -> int:
        return max(_LEGEND_H, self.fontMetrics().height() + 4)

    def minimumSizeHint(self) -> QSize:
        return QSize(100, self.sizeHint().height())

    def set_layout(self, layout: FileLayout | None) -> None:
        self._layout, self._image, self._selection = layout, None, None
        self._fit_legend()
        self.update()

    def set_selection(self, offset: int, length: int) -> None:
        self._selection = (offset, length) if length > 0 else None
        self.update()

    def clear_selection(self) -> None:
        self._selection = None
        self.update()

    def set_window(self, offset: int, length: int) -> None:
        self._window = (offset, length)
        self.update()

    # -- geometry ---------------------------------------------------------------------------------------------
    def bar_rect(self) -> QRectF:
        return QRectF(_MARGIN, _MARGIN, max(1, self.width() - 2 * _MARGIN), _BAR_H)

    def _size(self) -> int:
        return self._layout.size if self._layout is not None else 0

    def x_of(self, offset: int) -> float:
        bar = self.bar_rect()
        return bar.left() + (offset / self._size() * bar.width() if self._size() else 0)

    def segment_near(self, x: float) -> tuple[Segment | None, int]:
        """The segment under bar position ``x``, preferring a blob when one shares the pixel column."""
        bar = self.bar_rect()
        size = self._size()
        if not size or self._layout is None:
            return None, 0
        fraction = min(max((x - bar.left()) / bar.width(), 0.0), 1.0)
        offset = min(size - 1, int(fraction * size))
        per_pixel = max(1, int(size / bar.width()))
        candidates = self._layout.segments_in(max(0, offset - per_pixel // 2), offset + per_pixel // 2 + 1)
        best = max(candidates, key=lambda s: _PRIORITY.get(s.kind, 2), default=None)
        if best is not None and not best.offset <= offset < best.end:
            offset = best.offset
        return best, offset

    # -- events -----------------------------------------------------------------------------------------------
    def resizeEvent(self, event: QResizeEvent) -> None:
        self._image = None
        super().resizeEvent(event)
        self._fit_legend()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self._image = None
        super().changeEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton and event.position().y() <= self.bar_rect().bottom() + 2:
            segment, offset = self.segment_near(event.position().x())
            if segment is not None:
                self.segment_clicked.emit(segment, offset)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        segment, _ = self.segment_near(event.position().x())
        if segment is not None and event.position().y() <= self.bar_rect().bottom() + 2:
            QToolTip.showText(event.globalPosition().toPoint(), segment.describe(), self)
        else:
            QToolTip.hideText()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        bar = self.bar_rect()
        palette = self.palette()
        if self._layout is None or not self._size():
            painter.setPen(palette.color(QPalette.ColorRole.PlaceholderText))
            painter.drawText(bar, Qt.AlignmentFlag.AlignCenter, "empty file" if self._layout is not None else "")
            painter.end()
            return
        if self._image is None or self._image.width() != int(bar.width()):
            self._image = self._render_bar(self._layout, int(bar.width()))
        painter.drawImage(bar.topLeft(), self._image)
        painter.setPen(QPen(palette.color(QPalette.ColorRole.Mid), 1))
        painter.drawRect(bar.adjusted(-0.5, -0.5, 0.5, 0.5))
        self._paint_window(painter, bar, palette)
        self._paint_selection(painter, bar, palette)
        self._paint_legend(painter, palette)
        painter.end()

    # -- painting ---------------------------------------------------------------------------------------------
    def _render_bar(self, layout: FileLayout, width: int) -> QImage:
        winners = column_winners(layout, width, _PRIORITY)
        image = QImage(width, _BAR_H, QImage.Format.Format_RGB32)
        image.fill(self.palette().color(QPalette.ColorRole.Base))
        painter = QPainter(image)
        bounds = [0, *(np.flatnonzero(np.diff(winners)) + 1).tolist(), width]
        for start, stop in pairwise(bounds):
            if winners[start] >= 0:
                painter.fillRect(start, 0, stop - start, _BAR_H,
                                 theme.kind_color(*layout.kind_and_tensor(int(winners[start]))))
        painter.end()
        return image

    def _paint_window(self, painter: QPainter, bar: QRectF, palette: QPalette) -> None:
        if self._window is None:
            return
        offset, length = self._window
        left, right = self.x_of(offset), self.x_of(min(self._size(), offset + length))
        painter.fillRect(QRectF(left, bar.bottom() + 2, max(2.0, right - left), 3),
                         palette.color(QPalette.ColorRole.Mid))

    def _paint_selection(self, painter: QPainter, bar: QRectF, palette: QPalette) -> None:
        if self._selection is None:
            return
        offset, length = self._selection
        left, right = self.x_of(offset), self.x_of(min(self._size(), offset + length))
        if right - left < 3:
            middle = (left + right) / 2
            left, right = middle - 1.5, middle + 1.5
        pen = QPen(palette.color(QPalette.ColorRole.Highlight), 2)
        painter.setPen(pen)
        painter.drawRect(QRectF(left, bar.top() - 2, right - left, bar.height() + 4))
        painter.setBrush(palette.color(QPalette.ColorRole.Highlight))
        middle = (left + right) / 2
        painter.drawPolygon(QPolygonF([QPointF(middle - 4, 0), QPointF(middle + 4, 0), QPointF(middle, 4)]))

    def _legend_items(self) -> list[tuple[str, str, float, int]]:
        """(kind, label, x, row) of each legend entry, wrapped to the widget's width; the file size goes last."""
        kinds = self._layout.kinds() if self._layout is not None else set()
        metrics = self.fontMetrics()
        ordered = [k for k in _LEGEND_ORDER if k in kinds] + sorted(kinds.difference(_LEGEND_ORDER))
        right = self.width() - _MARGIN - metrics.horizontalAdvance(human_bytes(self._size())) - 8
        items, x, row = [], float(_MARGIN), 0
        for kind in ordered:
            label = _LEGEND_LABELS.get(kind, kind)
            width = 14 + metrics.horizontalAdvance(label) + 12
            if x + width - 12 > right and x > _MARGIN:
                x, row = float(_MARGIN), row + 1
            items.append((kind, label, x, row))
            x += width
        return items

    def _fit_legend(self) -> None:
        rows = 1 + max((row for *_, row in self._legend_items()), default=0)
        if rows != self._legend_rows:
            self._legend_rows = rows
            self.updateGeometry()
            self.setFixedHeight(self.sizeHint().height())

    def _paint_legend(self, painter: QPainter, palette: QPalette) -> None:
        top = self.bar_rect().bottom() + 6
        line = self._legend_h()
        metrics = painter.fontMetrics()
        painter.setPen(palette.color(QPalette.ColorRole.PlaceholderText))
        for kind, label, x, row in self._legend_items():
            y = top + row * line
            color = theme.tensor_color(0) if kind == "blob" else theme.kind_color(kind)
            box = metrics.ascent() - 2
            painter.fillRect(QRectF(x, y + 3, box, box), color)
            painter.drawText(QPointF(x + 14, y + 3 + metrics.ascent() - 1), label)
        text = human_bytes(self._size())
        painter.drawText(QRectF(_MARGIN, top, self.width() - 2 * _MARGIN, line - 2),
                         Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, text)
