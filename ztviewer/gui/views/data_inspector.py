"""The bytes at the hex cursor read as every fixed-size number type (little- or big-endian)."""
from __future__ import annotations

import struct

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ztviewer.codec.source import Source
from ztviewer.session.decoded_part import DecodedPart

ByteSource = Source | DecodedPart     # the file's (or a shard's) bytes, or a compressed part's decoded bytes

# (label, byte count, struct code or special decoder)
TYPES = (("u8", 1, "B"), ("i8", 1, "b"), ("u16", 2, "H"), ("i16", 2, "h"), ("u32", 4, "I"), ("i32", 4, "i"),
         ("u64", 8, "Q"), ("i64", 8, "q"), ("f16", 2, "e"), ("bf16", 2, "bf16"), ("f32", 4, "f"), ("f64", 8, "d"))

_SIGNIFICANT = {"e": 5, "bf16": 4, "f": 8}   # digits that round-trip each float width (f64 uses repr)


def decode_value(data: bytes, size: int, code: str, little: bool = True) -> str:
    """Text of one number read from the start of ``data`` (``—`` when too few bytes remain)."""
    if len(data) < size:
        return "—"
    raw = data[:size]
    if code == "bf16":
        bits = int.from_bytes(raw, "little" if little else "big")
        value = float(np.array([bits << 16], dtype=np.uint32).view(np.float32)[0])
    else:
        value = struct.unpack(("<" if little else ">") + code, raw)[0]
    if isinstance(value, float):
        return f"{value:.{_SIGNIFICANT[code]}g}" if code in _SIGNIFICANT else repr(value)
    return f"{value:,}"


class DataInspector(QWidget):
    """Cursor bytes decoded as u8…u64, i8…i64, f16, bf16, f32, f64 (two types per row, compact)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("dataInspector")
        self._source: ByteSource | None = None
        self._offset = 0
        self.position = QLabel()
        self.position.setMinimumWidth(40)      # a long part name must not widen the dock
        self.position.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.big_endian = QCheckBox("Big-endian")
        self.big_endian.toggled.connect(self.refresh)
        rows = -(-len(TYPES) // 2)
        self.table = QTableWidget(rows, 4)
        self.table.setHorizontalHeaderLabels(["Type", "Value", "Type", "Value"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QTableWidget.SelectionMode.ContiguousSelection)
        header = self.table.horizontalHeader()
        # values are never cut: every column as wide as its content (a narrow dock scrolls instead)
        for column in range(4):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(False)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 4)
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self._cells: dict[str, QTableWidgetItem] = {}
        for number, (label, _, _) in enumerate(TYPES):
            row, column = number // 2, (number % 2) * 2
            self.table.setItem(row, column, QTableWidgetItem(label))
            value = QTableWidgetItem("")
            value.setFont(mono)
            value.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.table.setItem(row, column + 1, value)
            self._cells[label] = value
        top = QHBoxLayout()
        top.addWidget(self.position, 1)
        top.addWidget(self.big_endian)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.table)
        self.refresh()

    @property
    def source(self) -> ByteSource | None:
        return self._source

    def set_source(self, source: ByteSource | None) -> None:
        self._source, self._offset = source, 0
        self.refresh()

    def set_offset(self, offset: int) -> None:
        self._offset = offset
        self.refresh()

    def value_text(self, label: str) -> str:
        return self._cells[label].text()

    def refresh(self) -> None:
        data = self._source.window(self._offset, 8) if self._source is not None else b""
        little = not self.big_endian.isChecked()
        order = "little-endian" if little else "big-endian"
        part = self._source if isinstance(self._source, DecodedPart) else None
        what = "Bytes" if part is None else "Decoded bytes"
        text = (f"{what} at 0x{self._offset:X} ({self._offset:,}), {order}"
                + (f" · {part.label}" if part is not None else "")) if self._source is not None else "No file"
        self.position.setText(text)
        self.position.setToolTip(text)
        for label, size, code in TYPES:
            self._cells[label].setText(decode_value(data, size, code, little) if data else "")
