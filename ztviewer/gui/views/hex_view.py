"""A hex view over a file's memory map that reads only the rows on screen.

Offset, hex and ASCII columns, 16 bytes a row. Bytes are tinted by the file-layout segment that owns them;
the selection (a component's byte range) is highlighted, the cursor byte is boxed. Files with more rows than a
scroll bar can count (2^31) scroll through a scale factor: the bar moves in steps of ``scale`` rows while
wheel and keys still move row by row.
"""
from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFontDatabase,
    QFontMetricsF,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QResizeEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import QAbstractScrollArea, QWidget

from ztviewer.session.byte_window import ByteWindow
from ztviewer.session.file_layout import FileLayout

from .. import theme

ROW_BYTES = 16
MAX_SCROLL = 1 << 30
_PRINTABLE = bytes(range(0x20, 0x7F))


class HexView(QAbstractScrollArea):
    """Hex dump of a :class:`~ztviewer.codec.source.Source` (or a decoded part) with selection, cursor and layout
    tints."""

    cursor_moved = Signal(object)       # byte offset (python int: files may exceed 2 GiB)
    byte_activated = Signal(object)     # double click on a byte
    window_changed = Signal(object, object)   # first visible offset, visible byte count

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("hexView")
        self._source: ByteWindow | None = None
        self._layout: FileLayout | None = None
        self._selection: tuple[int, int] | None = None
        self._cursor = 0
        self._first_row = 0
        self._scale = 1
        self._anchor: int | None = None      # where a drag or shift-click selection started
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.viewport().setCursor(Qt.CursorShape.IBeamCursor)
        self.verticalScrollBar().valueChanged.connect(self._on_scroll_bar)
        self.horizontalScrollBar().valueChanged.connect(self.viewport().update)
        self._update_metrics()

    # -- content ---------------------------------------------------------------------------------------------
    def set_source(self, source: ByteWindow | None, layout: FileLayout | None = None) -> None:
        self._source, self._layout = source, layout
        self._selection, self._cursor, self._first_row = None, 0, 0
        self._update_metrics()
        self._update_scroll_bars()
        self.viewport().update()

    def set_layout(self, layout: FileLayout | None) -> None:
        self._layout = layout
        self.viewport().update()

    @property
    def source(self) -> ByteWindow | None:
        return self._source

    @property
    def size_bytes(self) -> int:
        return self._source.size if self._source is not None else 0

    def selection(self) -> tuple[int, int] | None:
        return self._selection

    def set_selection(self, offset: int, length: int, scroll: bool = True) -> None:
        """Highlight ``[offset, offset+length)`` (clipped to the file) and bring its start into view."""
        self._selection = (offset, length) if length > 0 else None
        if scroll:
            self.set_cursor(offset)
        self.viewport().update()

    def clear_selection(self) -> None:
        self._selection = None
        self.viewport().update()

    def cursor_offset(self) -> int:
        return self._cursor

    def set_cursor(self, offset: int, ensure_visible: bool = True) -> None:
        offset = max(0, min(offset, max(0, self.size_bytes - 1)))
        changed = offset != self._cursor
        self._cursor = offset
        if ensure_visible:
            self.ensure_visible(offset)
        self.viewport().update()
        if changed:
            self.cursor_moved.emit(offset)

    def ensure_visible(self, offset: int) -> None:
        row = offset // ROW_BYTES
        rows = self.visible_rows()
        if not self._first_row <= row < self._first_row + max(1, rows - 1):
            self.scroll_to_row(row - rows // 3)

    def first_visible_offset(self) -> int:
        return self._first_row * ROW_BYTES

    def visible_rows(self) -> int:
        return max(1, int((self.viewport().height() - self._header_h) // self._row_h))

    def total_rows(self) -> int:
        return -(-self.size_bytes // ROW_BYTES)

    def scroll_to_row(self, row: int) -> None:
        last = max(0, self.total_rows() - self.visible_rows())
        self._first_row = max(0, min(row, last))
        bar = self.verticalScrollBar()
        bar.blockSignals(True)
        bar.setValue(bar.maximum() if self._first_row == last else self._first_row // self._scale)
        bar.blockSignals(False)
        self.viewport().update()
        self.window_changed.emit(self.first_visible_offset(), self.visible_rows() * ROW_BYTES)

    # -- geometry --------------------------------------------------------------------------------------------
    def _update_metrics(self) -> None:
        metrics = QFontMetricsF(self.font())
        self._cw = metrics.horizontalAdvance("0")
        self._row_h = metrics.height() + 2
        self._ascent = metrics.ascent() + 1
        self._header_h = self._row_h + 4
        digits = max(8, len(f"{max(0, self.size_bytes - 1):X}"))
        self._offset_chars = digits
        self._hex_x = self._cw * (digits + 2.5)
        self._ascii_x = self._hex_x + self._cw * (ROW_BYTES * 3 + 1.5)
        self._content_w = self._ascii_x + self._cw * (ROW_BYTES + 1)

    def sizeHint(self) -> QSize:
        frame = 2 * self.frameWidth()
        width = int(self._content_w) + self.verticalScrollBar().sizeHint().width() + frame + 2
        return QSize(width, int(self._header_h + 24 * self._row_h) + frame)

    def _byte_x(self, column: int) -> float:
        return self._hex_x + self._cw * (column * 3 + (1 if column >= 8 else 0))

    def byte_rect(self, offset: int) -> QRect | None:
        """Viewport rectangle of a byte's hex cell, or ``None`` when it is not on screen."""
        row = offset // ROW_BYTES - self._first_row
        if not 0 <= row < self.visible_rows() or not 0 <= offset < self.size_bytes:
            return None
        x = self._byte_x(offset % ROW_BYTES) - self._cw / 2 - self.horizontalScrollBar().value()
        y = self._header_h + row * self._row_h
        return QRectF(x, y, self._cw * 3, self._row_h).toAlignedRect()

    def offset_at(self, pos: QPoint) -> int | None:
        """Byte under a viewport position (hex or ASCII column)."""
        row = int((pos.y() - self._header_h) // self._row_h)
        x = pos.x() + self.horizontalScrollBar().value()
        if row < 0:
            return None
        if self._hex_x - self._cw / 2 <= x < self._ascii_x - self._cw:
            rel = (x - self._hex_x + self._cw / 2) / self._cw
            column = int((rel - (1 if rel >= 8 * 3 + 0.5 else 0)) // 3)
        elif self._ascii_x <= x < self._ascii_x + ROW_BYTES * self._cw:
            column = int((x - self._ascii_x) // self._cw)
        else:
            return None
        offset = (self._first_row + row) * ROW_BYTES + max(0, min(ROW_BYTES - 1, column))
        return offset if offset < self.size_bytes else None

    def _update_scroll_bars(self) -> None:
        last = max(0, self.total_rows() - self.visible_rows())
        self._scale = max(1, -(-last // MAX_SCROLL))
        bar = self.verticalScrollBar()
        bar.blockSignals(True)
        bar.setRange(0, -(-last // self._scale))
        bar.setPageStep(max(1, self.visible_rows() // self._scale))
        bar.setSingleStep(1)
        bar.blockSignals(False)
        self._first_row = min(self._first_row, last)
        hbar = self.horizontalScrollBar()
        hbar.setRange(0, max(0, int(self._content_w - self.viewport().width())))
        hbar.setPageStep(self.viewport().width())

    def _on_scroll_bar(self, value: int) -> None:
        last = max(0, self.total_rows() - self.visible_rows())
        self._first_row = last if value >= self.verticalScrollBar().maximum() else min(last, value * self._scale)
        self.viewport().update()
        self.window_changed.emit(self.first_visible_offset(), self.visible_rows() * ROW_BYTES)

    # -- Qt events -------------------------------------------------------------------------------------------
    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._update_scroll_bars()
        self.window_changed.emit(self.first_visible_offset(), self.visible_rows() * ROW_BYTES)

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == event.Type.FontChange:
            self._update_metrics()
            self._update_scroll_bars()

    def wheelEvent(self, event: QWheelEvent) -> None:
        steps = event.angleDelta().y() / 120
        if steps:
            self.scroll_to_row(self._first_row - round(steps * 3))
            event.accept()
        else:
            super().wheelEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        offset = self.offset_at(event.position().toPoint())
        if offset is not None and event.button() == Qt.MouseButton.LeftButton:
            if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                self.select_span(self._cursor if self._anchor is None else self._anchor, offset)
            else:
                self._anchor = offset
            self.set_cursor(offset, ensure_visible=False)
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if event.buttons() & Qt.MouseButton.LeftButton and self._anchor is not None:
            offset = self.offset_at(event.position().toPoint())
            if offset is not None and offset != self._anchor:
                self.select_span(self._anchor, offset)
                self.set_cursor(offset, ensure_visible=False)
        super().mouseMoveEvent(event)

    def select_span(self, a: int, b: int) -> None:
        """Select the bytes from ``a`` to ``b`` inclusive (either order)."""
        low, high = min(a, b), max(a, b)
        self._selection = (low, high - low + 1)
        self.viewport().update()

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        offset = self.offset_at(event.position().toPoint())
        if offset is not None:
            self.byte_activated.emit(offset)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key, ctrl = event.key(), bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
        page = self.visible_rows() * ROW_BYTES
        moves: dict[int, int] = {Qt.Key.Key_Left: -1, Qt.Key.Key_Right: 1, Qt.Key.Key_Up: -ROW_BYTES,
                                 Qt.Key.Key_Down: ROW_BYTES, Qt.Key.Key_PageUp: -page, Qt.Key.Key_PageDown: page}
        if key in moves:
            self.set_cursor(self._cursor + moves[key])
        elif key == Qt.Key.Key_Home:
            self.set_cursor(0 if ctrl else self._cursor - self._cursor % ROW_BYTES)
        elif key == Qt.Key.Key_End:
            self.set_cursor(self.size_bytes - 1 if ctrl else self._cursor - self._cursor % ROW_BYTES + ROW_BYTES - 1)
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.byte_activated.emit(self._cursor)
        else:
            super().keyPressEvent(event)

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self.viewport())
        palette = self.palette()
        painter.fillRect(self.viewport().rect(), palette.color(QPalette.ColorRole.Base))
        painter.translate(-self.horizontalScrollBar().value(), 0)
        self._paint_header(painter, palette)
        if self._source is not None and self.size_bytes:
            rows = min(self.visible_rows() + 1, self.total_rows() - self._first_row)
            start = self._first_row * ROW_BYTES
            data = self._source.window(start, rows * ROW_BYTES)
            self._paint_tints(painter, start, len(data))
            self._paint_rows(painter, palette, start, data)
        painter.end()

    # -- painting --------------------------------------------------------------------------------------------
    def _paint_header(self, painter: QPainter, palette: QPalette) -> None:
        header = QRectF(0, 0, self._content_w + self.viewport().width(), self._header_h - 2)
        painter.fillRect(header, palette.color(QPalette.ColorRole.AlternateBase))
        painter.setPen(palette.color(QPalette.ColorRole.PlaceholderText))
        y = self._ascent + 1
        painter.drawText(QRectF(self._cw, 0, self._cw * self._offset_chars, self._header_h - 2),
                         Qt.AlignmentFlag.AlignVCenter, "Offset")
        for column in range(ROW_BYTES):
            painter.drawText(QRectF(self._byte_x(column), y - self._ascent, self._cw * 2, self._row_h),
                             Qt.AlignmentFlag.AlignVCenter, f"{column:02X}")
        painter.drawText(QRectF(self._ascii_x, 0, self._cw * ROW_BYTES, self._header_h - 2),
                         Qt.AlignmentFlag.AlignVCenter, "ASCII")

    def _span_rects(self, start: int, end: int, first: int) -> list[QRectF]:
        """Hex and ASCII rectangles covering bytes ``[start, end)`` on screen (``first`` = first shown byte)."""
        rects = []
        offset = max(start, first)
        while offset < end:
            row = (offset - first) // ROW_BYTES
            row_end = min(end, first + (row + 1) * ROW_BYTES)
            a, b = (offset - first) % ROW_BYTES, (row_end - first - 1) % ROW_BYTES
            y = self._header_h + row * self._row_h
            left = self._byte_x(a) - self._cw / 2
            rects.append(QRectF(left, y, self._byte_x(b) + self._cw * 2.5 - left, self._row_h))
            rects.append(QRectF(self._ascii_x + a * self._cw, y, (b - a + 1) * self._cw, self._row_h))
            offset = row_end
        return rects

    def _paint_tints(self, painter: QPainter, first: int, count: int) -> None:
        end = first + count
        if self._layout is not None:
            alpha = 0.22 if theme.is_dark(self.palette()) else 0.16
            for segment in self._layout.segments_in(first, end):
                if segment.kind == "padding":
                    continue
                owner = segment.owner
                color = theme.tint(theme.kind_color(segment.kind, owner.tensor_index if owner else None), alpha)
                for rect in self._span_rects(segment.offset, min(segment.end, end), first):
                    painter.fillRect(rect, color)
        if self._selection is not None:
            offset, length = self._selection
            highlight = theme.tint(self.palette().color(QPalette.ColorRole.Highlight), 0.45)
            for rect in self._span_rects(offset, min(offset + length, end), first):
                painter.fillRect(rect, highlight)
        if first <= self._cursor < end:
            painter.setPen(self.palette().color(QPalette.ColorRole.Highlight))
            for rect in self._span_rects(self._cursor, self._cursor + 1, first):
                painter.drawRect(rect.adjusted(0.5, 0.5, -0.5, -0.5))

    def _paint_rows(self, painter: QPainter, palette: QPalette, first: int, data: bytes) -> None:
        text_color = palette.color(QPalette.ColorRole.Text)
        muted = theme.quiet_text(palette)
        offset_color = palette.color(QPalette.ColorRole.PlaceholderText)
        for row in range(-(-len(data) // ROW_BYTES)):
            chunk = data[row * ROW_BYTES:(row + 1) * ROW_BYTES]
            y = self._header_h + row * self._row_h + self._ascent
            painter.setPen(offset_color)
            painter.drawText(QRectF(self._cw, y - self._ascent, self._cw * self._offset_chars, self._row_h),
                             Qt.AlignmentFlag.AlignVCenter, f"{first + row * ROW_BYTES:0{self._offset_chars}X}")
            self._paint_bytes(painter, chunk, y, text_color, muted)

    def _paint_bytes(self, painter: QPainter, chunk: bytes, y: float, text: QColor, muted: QColor) -> None:
        # Zero bytes and non-printable characters are drawn muted; runs of one colour are drawn in one call.
        for x, part in ((self._hex_x, chunk[:8]), (self._byte_x(8), chunk[8:])):
            painter.setPen(text)
            painter.drawText(QRectF(x, y - self._ascent, self._cw * 3 * len(part), self._row_h),
                             Qt.AlignmentFlag.AlignVCenter, " ".join(f"{b:02X}" if b else "  " for b in part))
            if 0 in part:
                painter.setPen(muted)
                painter.drawText(QRectF(x, y - self._ascent, self._cw * 3 * len(part), self._row_h),
                                 Qt.AlignmentFlag.AlignVCenter, " ".join("00" if not b else "  " for b in part))
        ascii_rect = QRectF(self._ascii_x, y - self._ascent, self._cw * ROW_BYTES, self._row_h)
        printable = "".join(chr(b) if b in _PRINTABLE else " " for b in chunk)
        painter.setPen(text)
        painter.drawText(ascii_rect, Qt.AlignmentFlag.AlignVCenter, printable)
        painter.setPen(muted)
        painter.drawText(ascii_rect, Qt.AlignmentFlag.AlignVCenter,
                         "".join(" " if b in _PRINTABLE else "·" for b in chunk))
