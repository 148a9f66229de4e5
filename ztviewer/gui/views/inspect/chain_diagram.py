"""A tensor-train chain diagram: one box per core, bonds labelled with ranks, legs with physical dimensions.

Custom painted; clicking a core selects it (``core_selected``). Bond thickness grows with the log of the rank,
so the rank profile is visible at a glance.
"""
from __future__ import annotations

import math

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QPainter, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

CORE_FILL = QColor(0x4C, 0x72, 0xB0)
SELECTED_FILL = QColor(0xDD, 0x84, 0x52)


class ChainDiagram(QWidget):
    """Cores ``G0 … G(n-1)`` with ranks ``r0 … rn`` and physical dimensions ``d0 … d(n-1)``."""

    core_selected = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ttChain")
        self.ranks: tuple[int, ...] = ()
        self.dims: tuple[int, ...] = ()
        self.selected = 0
        self.setMinimumHeight(96)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMouseTracking(True)

    def sizeHint(self) -> QSize:
        return QSize(600, 104)

    def set_chain(self, ranks: tuple[int, ...], dims: tuple[int, ...]) -> None:
        self.ranks, self.dims = tuple(ranks), tuple(dims)
        self.selected = 0
        self.update()

    def select(self, core: int) -> None:
        if 0 <= core < len(self.dims) and core != self.selected:
            self.selected = core
            self.update()
            self.core_selected.emit(core)

    # -- geometry ------------------------------------------------------------------------------------------
    def _layout(self) -> tuple[list[QRectF], float]:
        n = max(1, len(self.dims))
        margin = 34.0
        step = (self.width() - 2 * margin) / n
        size = max(14.0, min(40.0, step * 0.55))
        top = 18.0
        boxes = [QRectF(margin + step * (k + 0.5) - size / 2, top, size, size) for k in range(len(self.dims))]
        return boxes, step

    def core_at(self, point: QPointF) -> int | None:
        boxes, _ = self._layout()
        for k, box in enumerate(boxes):
            if box.adjusted(-4, -4, 4, 4).contains(point):
                return k
        return None

    def mousePressEvent(self, event) -> None:
        core = self.core_at(event.position())
        if core is not None:
            self.select(core)

    def mouseMoveEvent(self, event) -> None:
        core = self.core_at(event.position())
        if core is None:
            self.setToolTip("")
            return
        r = self.ranks
        self.setToolTip(f"core {core}: {r[core]} × {self.dims[core]} × {r[core + 1]}")

    # -- painting ------------------------------------------------------------------------------------------
    def paintEvent(self, event) -> None:
        if not self.dims:
            return
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = self.palette()
        text = palette.color(QPalette.ColorRole.Text)
        boxes, step = self._layout()
        font = QFont(self.font())
        small = QFont(font)
        small.setPointSizeF(max(6.0, font.pointSizeF() * (0.85 if step > 44 else 0.7)))
        largest = max(self.ranks) if self.ranks else 1
        labels = step > 26
        mid = boxes[0].center().y()
        for k in range(len(self.dims) + 1):  # bonds r_k: between core k-1 and core k
            left = boxes[k - 1].right() if k > 0 else boxes[0].left() - min(24.0, step * 0.4)
            right = boxes[k].left() if k < len(boxes) else boxes[-1].right() + min(24.0, step * 0.4)
            width = 1.0 + 4.0 * math.log1p(self.ranks[k]) / math.log1p(max(largest, 1)) if largest > 1 else 1.0
            painter.setPen(QPen(text, width))
            painter.drawLine(QPointF(left, mid), QPointF(right, mid))
            if labels or k in (0, len(self.dims)):
                painter.setFont(small)
                painter.drawText(QRectF(left - 20, mid - 18, right - left + 40, 14),
                                 Qt.AlignmentFlag.AlignCenter, str(self.ranks[k]))
        for k, box in enumerate(boxes):  # legs d_k and the cores themselves
            painter.setPen(QPen(text, 1.5))
            bottom = box.bottom() + 22
            painter.drawLine(QPointF(box.center().x(), box.bottom()), QPointF(box.center().x(), bottom))
            if labels or k in (0, len(boxes) - 1):
                painter.setFont(small)
                painter.drawText(QRectF(box.center().x() - step / 2, bottom + 1, step, 14),
                                 Qt.AlignmentFlag.AlignCenter, f"d={self.dims[k]}")
            fill = SELECTED_FILL if k == self.selected else CORE_FILL
            painter.setPen(QPen(fill.darker(140), 1.2))
            painter.setBrush(fill)
            painter.drawRoundedRect(box, 5, 5)
            if box.width() >= 22:
                painter.setPen(QColor("white"))
                painter.setFont(small)
                painter.drawText(box, Qt.AlignmentFlag.AlignCenter, f"G{k}")
        painter.end()
